"""Lenient evidence parsing, against the malformed strings the LoCoMo data really holds."""

import pytest
from undercroft_bench.evidence import parse_evidence, parse_turn_id

TABLE = [
    (["D1:3"], (1,), ((1, 3),), ()),
    (["D8:6; D9:17"], (8, 9), ((8, 6), (9, 17)), ()),
    (["D:11:26"], (11,), ((11, 26),), ()),
    (["D30:05"], (30,), ((30, 5),), ()),
    (["D"], (), (), ("D",)),
    ([], (), (), ()),
    ([""], (), (), ()),
    (["D5"], (5,), (), ()),
    (["d2:4"], (2,), ((2, 4),), ()),
    (["8:6"], (), (), ("8:6",)),
    (["D1:3", "D1:3"], (1,), ((1, 3),), ()),
    (["D2:1 D3:4"], (2, 3), ((2, 1), (3, 4)), ()),
    (["D1:18", "D", "D1:20"], (1,), ((1, 18), (1, 20)), ("D",)),
    (["D4:2;D2:9", "  D4:7  "], (4, 2), ((4, 2), (2, 9), (4, 7)), ()),
    (["x; D"], (), (), ("x", "D")),
]


@pytest.mark.parametrize(("items", "sessions", "turns", "unparsed"), TABLE)
def test_evidence_table(items, sessions, turns, unparsed) -> None:
    parsed = parse_evidence(items)
    assert parsed.sessions == sessions
    assert parsed.turns == turns
    assert parsed.unparsed == unparsed


def test_non_string_items_are_read_as_text() -> None:
    assert parse_evidence([12, "D3:1"]).unparsed == ("12",)


def test_turn_id_parser() -> None:
    assert parse_turn_id("D12:4") == (12, 4)
    assert parse_turn_id("D7") == (7, None)
    assert parse_turn_id("s1#0") is None
