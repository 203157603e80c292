"""docs/vault.md's example runs as written, and every public name is documented there."""

from __future__ import annotations

import pathlib
import re

import undercroft_vault

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "vault.md"


def test_the_documented_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) == 1
    exec(compile(blocks[0], str(DOC), "exec"), {"__name__": "vault_doc_example"})


def test_every_public_name_is_documented() -> None:
    text = DOC.read_text()
    missing = [name for name in undercroft_vault.__all__ if name != "__version__" and name not in text]
    assert missing == []


def test_every_public_name_has_a_docstring() -> None:
    for name in undercroft_vault.__all__:
        value = getattr(undercroft_vault, name)
        if callable(value) and not isinstance(value, type(undercroft_vault.GENESIS)):
            assert value.__doc__, name
