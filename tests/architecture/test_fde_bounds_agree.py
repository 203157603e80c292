"""The FDE knobs' legal ranges in the config catalog are ranges core's encoder accepts.

Config validates `UNDERCROFT_FDE_*` at start; `undercroft_core.fde.FdeParameters` validates them again when the
tier builds. A value the first accepts and the second refuses would pass `config check` and fail later.
"""

from __future__ import annotations

import pytest
import undercroft_config as config
from undercroft_core.errors import InvalidInput
from undercroft_core.fde import FdeParameters

KNOBS = {"UNDERCROFT_FDE_REPS": "repetitions", "UNDERCROFT_FDE_KSIM": "bits", "UNDERCROFT_FDE_DPROJ": "projection"}


def _highest_validated(name: str) -> int:
    """The largest value (searched up to 2**16) the catalog validates for ``name``."""
    highest = 0
    for value in range(1, 1 << 16):
        if config.resolve(name, {name: str(value)}).status is not config.Status.VALIDATED:
            break
        highest = value
    return highest


@pytest.mark.parametrize("name", sorted(KNOBS))
def test_the_catalogs_ceiling_is_accepted_by_core(name: str) -> None:
    highest = _highest_validated(name)
    assert highest >= 1
    FdeParameters(dimension=384, **{KNOBS[name]: highest})  # type: ignore[arg-type]


def test_one_above_the_ksim_ceiling_is_refused_by_both() -> None:
    highest = _highest_validated("UNDERCROFT_FDE_KSIM")
    above = str(highest + 1)
    assert config.resolve("UNDERCROFT_FDE_KSIM", {"UNDERCROFT_FDE_KSIM": above}).status is config.Status.WARNED
    with pytest.raises(InvalidInput):
        FdeParameters(dimension=384, bits=highest + 1)
