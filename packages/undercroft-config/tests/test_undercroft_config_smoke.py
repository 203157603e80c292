"""Smoke test: the distribution imports, names its version and exposes only what __all__ lists."""

import undercroft_config


def test_version_is_lockstep() -> None:
    assert undercroft_config.__version__ == "0.1.0"


def test_public_names_resolve() -> None:
    for public in undercroft_config.__all__:
        assert hasattr(undercroft_config, public), public
