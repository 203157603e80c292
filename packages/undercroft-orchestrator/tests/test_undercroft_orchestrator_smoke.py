"""Smoke test: the distribution imports, names its version and exposes only what __all__ lists."""

import undercroft_orchestrator


def test_version_is_lockstep() -> None:
    assert undercroft_orchestrator.__version__ == "0.1.0"


def test_public_names_resolve() -> None:
    for public in undercroft_orchestrator.__all__:
        assert hasattr(undercroft_orchestrator, public), public
