"""Smoke test: the distribution imports, names its version and exposes only what __all__ lists."""

import undercroft_net


def test_version_is_lockstep() -> None:
    assert undercroft_net.__version__ == "0.1.0"


def test_public_names_resolve() -> None:
    for public in undercroft_net.__all__:
        assert hasattr(undercroft_net, public), public
