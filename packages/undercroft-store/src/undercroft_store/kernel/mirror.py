"""A vault's remote mirror as the store sees it: which backend, which collection, and whether it may be used.

The composition root builds the backend (`undercroft_index.open_backend`, its URL through the transport
policy) and hands the store a `Mirror`; the store never reads a backend declaration itself. Everything a
backend answers is untrusted: `require_mirror` only decides whether a search through it can run at all —
a missing mirror or a mirror of another embedding space is refused with a message (exit 1), never served
as an empty result.
"""

from __future__ import annotations

from dataclasses import dataclass

from undercroft_index import BackendFailed, MirrorInfo, RemoteIndex, collection_name
from undercroft_index import Error as IndexError_

from undercroft_store.errors import MirrorUnavailable

__all__ = ["Mirror", "describe_mirror", "require_mirror"]


@dataclass(frozen=True)
class Mirror:
    """One vault's mirror: the injected backend and the collection the vault is pushed into."""

    backend: RemoteIndex
    collection: str

    @classmethod
    def of(cls, backend: RemoteIndex, vault: str) -> Mirror:
        """The mirror of ``vault`` on ``backend`` (its collection is `undercroft_index.collection_name`)."""
        return cls(backend, collection_name(vault))

    @property
    def label(self) -> str:
        """``<backend> <destination> <collection>``, for messages and the egress record."""
        return f"{self.backend.name} {self.backend.destination} {self.collection}"


def describe_mirror(mirror: Mirror) -> MirrorInfo | None:
    """What the backend says it holds (None: no mirror); a backend failure is `MirrorUnavailable`."""
    try:
        return mirror.backend.describe(mirror.collection)
    except IndexError_ as error:
        raise MirrorUnavailable(str(error)) from None


def require_mirror(mirror: Mirror, space: str, vault: str) -> MirrorInfo:
    """The mirror's description, or `MirrorUnavailable` when none exists or it holds another space."""
    info = describe_mirror(mirror)
    name = mirror.backend.name
    if info is None:
        raise MirrorUnavailable(
            f"no mirror of vault {vault!r} on {name} ({mirror.collection} at {mirror.backend.destination}): "
            f"run `undercroft index push {name} --vault {vault}` first"
        )
    if info.space != space:
        raise MirrorUnavailable(
            f"the {name} mirror of vault {vault!r} was pushed from embedding space {info.space or 'unknown'}, "
            f"not this vault's {space}: its candidates would be ranked in the wrong space. "
            f"Re-push it (`undercroft index push {name} --vault {vault} --drop`)"
        )
    return info


def backend_failure(error: BackendFailed | IndexError_) -> MirrorUnavailable:
    """A backend error as the store's run failure."""
    return MirrorUnavailable(str(error))
