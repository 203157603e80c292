"""The temporal knowledge graph and the other memory surfaces' tables (issue 8).

Import the concept modules directly (`kg.graph`, `kg.facts`, `kg.receipts`, `kg.authority`, `kg.verify`,
`kg.rotation`, `kg.schema`): this package initialiser imports nothing, so the foundation's schema module can
import `kg.schema` without a cycle.
"""

__all__: list[str] = []
