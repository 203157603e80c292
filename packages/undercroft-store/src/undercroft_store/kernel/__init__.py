"""The kernel every other part of the store stands on.

The SQLite connection and schema, the vault context and lock, the verified read door and hydration, the
served-row rule and label guard, the one write choke point (`writes`) and the chain append, the admission
screen's vocabulary (`screening`) and the seams features plug into (`seams`). The kernel imports nothing
from the façade (`store`, `palace`, `stats`) or from a feature package (`integrity`, `governance`,
`memory`, `search`); the import-linter ``store-layers`` contract keeps it so.
"""

__all__: list[str] = []
