"""Integrity features: verify, repair, rotation, backup, the external witness and the audit history.

They stand on the kernel and the `VaultStore` façade. Verify runs the legs other features register with
`kernel.seams` rather than importing those features, so integrity imports neither governance nor memory.
"""

__all__: list[str] = []
