"""The temporal knowledge graph and the other memory surfaces' tables (issue 8).

Import the concept modules directly (`kg.graph`, `kg.facts`, `kg.receipts`, `kg.authority`, `kg.verify`,
`kg.rotation`); their tables' DDL is the kernel's (`kernel/_internal/surface_tables.py`). This package
initialiser imports nothing.
"""

__all__: list[str] = []
