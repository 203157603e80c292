"""Governance features: admission, quarantine, rulings, wing trust, retention, forgetting and the read audit.

They stand on the kernel and the `VaultStore` façade; the admission screen reaches the write choke point
through `kernel.seams`, so the kernel never imports governance.
"""

__all__: list[str] = []
