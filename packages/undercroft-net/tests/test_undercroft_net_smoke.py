"""Smoke test: the distribution imports, names its version and exposes only what __all__ lists."""

import undercroft_net


def test_version_is_lockstep() -> None:
    assert undercroft_net.__version__ == "0.1.0"


def test_public_names_resolve() -> None:
    for public in undercroft_net.__all__:
        assert hasattr(undercroft_net, public), public


def test_the_envelope_and_the_policy_do_not_import_httpx() -> None:
    """The MCP renderer imports the envelope on every start: httpx loads only when a client is asked for."""
    import subprocess
    import sys

    probe = "import sys, undercroft_net; undercroft_net.memory_blocks([]); print('httpx' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
    lazy = "import sys, undercroft_net; undercroft_net.policed_client; print('httpx' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError):
        undercroft_net.no_such_name
