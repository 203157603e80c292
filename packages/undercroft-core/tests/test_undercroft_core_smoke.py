"""Smoke test: the distribution imports, names its version and exposes only what __all__ lists."""

import undercroft_core


def test_version_is_lockstep() -> None:
    assert undercroft_core.__version__ == "0.1.0"


def test_public_names_resolve() -> None:
    for public in undercroft_core.__all__:
        assert hasattr(undercroft_core, public), public
