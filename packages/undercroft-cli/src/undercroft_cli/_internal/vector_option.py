"""``--vector``: a caller-supplied embedding given as a JSON array on the command line (search, remember)."""

from __future__ import annotations

import json

import click

from undercroft_cli.operations import ValueRefused, parse_vector

__all__ = ["parse_vector_option"]


def parse_vector_option(text: str, flag: str = "--vector") -> tuple[float, ...]:
    """The finite numbers of the JSON array ``text``; anything else is ``click.BadParameter`` naming ``flag``.

    The dimension is checked by the vault the vector is used in (its recorded space).
    """
    try:
        return parse_vector(json.loads(text))
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not a JSON array ({error.msg})", param_hint=flag) from None
    except ValueRefused as refused:
        raise click.BadParameter(f"must be {refused.expected}, got {refused.value}", param_hint=flag) from None
