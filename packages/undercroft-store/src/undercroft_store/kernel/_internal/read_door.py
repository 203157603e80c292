"""The read door: one decorator on every public content-returning reader, one record per read.

`audited_read(op, subject=…, scope=…, count=…)` wraps a public reader (a `VaultStore` method, a module
function taking the store first, a `KnowledgeGraph` or `Searcher` method). Under
``UNDERCROFT_READ_AUDIT=chain`` the OUTERMOST audited read of a thread on a handle appends exactly one
``read/<op>`` record after it returned; every audited reader it calls on the way (``wake_up`` →
``list_drawers``, a search → ``hydrate_many``) is nested and silent, so one surface call is one record by
construction rather than by each call site's care. The engine's own reads state why they are silent with
`silent(handle, InternalRead.…)`.

The mode is read once per handle (`open_door`, called when a `VaultStore` wraps its context): garbage
refuses to open, and a read-only handle warns there and serves unaudited (it cannot append).
A read inside an open transaction is the engine deciding a write (a surface never holds one) and is silent.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from undercroft_config import settings
from undercroft_vault import AuditRow, compute_tag, fingerprint

from undercroft_store.kernel._internal.chain_append import append_in_transaction
from undercroft_store.kernel._internal.context import VaultContext

__all__ = [
    "READERS",
    "READ_OPS",
    "READ_PREFIX",
    "InternalRead",
    "append_read",
    "audited_read",
    "context_for",
    "door_enabled",
    "open_door",
    "silent",
]

P = ParamSpec("P")
R = TypeVar("R")

READ_PREFIX = "read/"
#: The closed vocabulary of audited read doors (drawer funnel and graph funnel).
READ_OPS = frozenset(
    {
        "search",
        "get",
        "recent",
        "list",
        "diary",
        "tunnel",
        "closet",
        "hallways",
        "admission-queue",
        "kg-query",
        "kg-timeline",
        "kg-entities",
        "kg-canonical",
    }
)

#: Every audited reader: ``module:qualname`` -> op (the inventory a test counts in both directions).
READERS: dict[str, str] = {}


class InternalRead(enum.Enum):
    """Why an engine read appends nothing (the spec's InternalRead variants)."""

    HYDRATION = "hydration inside a read that already records"
    WRITE_DECISION = "a lookup performed to decide a write"
    INDEX_MAINTENANCE = "index maintenance"
    VERIFICATION = "verification"
    POLICY_FENCE = "a policy fence"
    EXPORT = "an export that records its egress"


# id(context) -> (weak reference, audited?). A context is an unhashable dataclass; the callback drops the entry.
_MODES: dict[int, tuple[weakref.ref[VaultContext], bool]] = {}
_LOCAL = threading.local()  # .depths: {id(context): nesting depth of audited/silent reads on this thread}


def context_for(handle: object) -> VaultContext:
    """The context behind a store, a graph, a searcher (``_context`` or ``_store``), or a context itself."""
    seen = 0
    while not isinstance(handle, VaultContext):
        inner = getattr(handle, "_context", None)
        handle = inner if inner is not None else getattr(handle, "_store", None)
        seen += 1
        if handle is None or seen > 4:
            raise TypeError("an audited reader needs a store handle as its first argument")
    return handle


def open_door(context: VaultContext, env: Mapping[str, str] | None = None) -> bool:
    """Resolve ``UNDERCROFT_READ_AUDIT`` for this handle (garbage refuses); note it when read-only cannot append."""
    wanted = str(settings.read_audit(env)) == "chain"
    if wanted and context.read_only:
        message = (
            f"vault {context.vault_id!r} is open read-only: UNDERCROFT_READ_AUDIT=chain cannot append, "
            "reads are served unaudited"
        )
        # Reported once, through the open's own notice channel (stats, verify, serve-mcp and undercroft_status
        # print ``unhealed``), never as a Python warning: that reached the CLI's stderr raw, with a source line.
        context.unhealed.append(message)
    audited = wanted and not context.read_only
    key = id(context)

    def drop(ref: weakref.ref[VaultContext]) -> None:
        entry = _MODES.get(key)
        if entry is not None and entry[0] is ref:
            del _MODES[key]

    _MODES[key] = (weakref.ref(context, drop), audited)
    return audited


def door_enabled(context: VaultContext) -> bool:
    """Whether reads of this handle append (resolved at open; lazily for a context opened elsewhere)."""
    entry = _MODES.get(id(context))
    if entry is not None and entry[0]() is context:
        return entry[1]
    return open_door(context)


def _depths() -> dict[int, int]:
    depths: dict[int, int] | None = getattr(_LOCAL, "depths", None)
    if depths is None:
        depths = _LOCAL.depths = {}
    return depths


@contextmanager
def _nested(context: VaultContext) -> Iterator[bool]:
    """Yield True for the outermost read of this thread on this handle; track the nesting."""
    depths, key = _depths(), id(context)
    depth = depths.get(key, 0)
    depths[key] = depth + 1
    try:
        yield depth == 0
    finally:
        if depth == 0:
            del depths[key]
        else:
            depths[key] = depth


@contextmanager
def silent(handle: object, why: InternalRead) -> Iterator[None]:
    """The engine's own reads inside this block append nothing; `why` names the InternalRead variant."""
    if not isinstance(why, InternalRead):
        raise TypeError(f"silent() needs an InternalRead reason, got {why!r}")
    with _nested(context_for(handle)):
        yield


def _canonical(document: Mapping[str, object]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def append_read(context: VaultContext, op: str, subject: str, scope: Mapping[str, object] | None, count: int) -> None:
    """Append one ``read/<op>`` record: keyed fingerprint of the subject, the scope, the count — never text.

    The manifest anchor is NOT advanced (the spec's stated window; `read_audit.anchor` closes it), and the
    handle's generation is not bumped: a read changes no drawer, so the search caches stay warm.
    """
    document = {
        "op": op,
        "subject": fingerprint(context.keys, subject.encode("utf-8")).hex(),  # keyed: confirms nothing offline
        "scope": {key: str(value) for key, value in sorted((scope or {}).items()) if value is not None},
        "count": count,
    }
    label = READ_PREFIX + op
    record = AuditRow(label, compute_tag(context.keys, label, _canonical(document), b""), context.now())
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        append_in_transaction(context, [record])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _count(result: object) -> int:
    if result is None:
        return 0
    hits = getattr(result, "hits", None)  # a SearchResult
    if hits is not None:
        return len(hits)
    essentials = getattr(result, "essentials", None)  # a WakeUp
    if essentials is not None:
        return len(essentials)
    return len(result) if hasattr(result, "__len__") else 1


def _no_scope(_: Mapping[str, Any]) -> Mapping[str, object]:
    return {}


def audited_read(
    op: str,
    *,
    subject: Callable[[Mapping[str, Any]], str],
    scope: Callable[[Mapping[str, Any]], Mapping[str, object]] = _no_scope,
    count: Callable[[Any], int] = _count,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a public reader append one ``read/<op>`` record per outermost call (see the module docstring).

    `subject` and `scope` receive the call's bound arguments (defaults applied); `count` the result.
    """
    if op not in READ_OPS:
        raise ValueError(f"read op {op!r} is not one of {', '.join(sorted(READ_OPS))}")

    def decorate(reader: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(reader)
        first = next(iter(signature.parameters))

        @functools.wraps(reader)
        def audited(*args: P.args, **kwargs: P.kwargs) -> R:
            context = context_for(args[0] if args else kwargs[first])
            if not door_enabled(context):
                return reader(*args, **kwargs)
            with _nested(context) as outermost:
                result = reader(*args, **kwargs)
            if outermost and not context.connection.in_transaction:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                append_read(context, op, subject(bound.arguments), scope(bound.arguments), count(result))
            return result

        audited.__read_op__ = op  # type: ignore[attr-defined]
        READERS[f"{reader.__module__}:{reader.__qualname__}"] = op
        return audited

    return decorate
