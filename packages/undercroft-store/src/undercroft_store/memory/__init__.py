"""Memory surfaces over the drawers: the knowledge graph, tunnels, diaries, closets, hallways, wake-up,
duplicates and supersession.

They stand on the kernel and the `VaultStore` façade and register their verify legs with `kernel.seams`.
"""

__all__: list[str] = []
