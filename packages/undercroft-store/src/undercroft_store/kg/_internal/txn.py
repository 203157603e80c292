"""The surfaces' audited transaction: the store's one shared helper (`undercroft_store._internal.transaction`)."""

from __future__ import annotations

from undercroft_store._internal.transaction import audited, check_writable, open_blind, readable

__all__ = ["audited", "check_writable", "open_blind", "readable"]
