"""validate_name refuses every traversal shape in a table, with a message naming the rule."""

import pytest
from undercroft_core import InvalidInput, InvalidName, validate_name

REFUSED = [
    ("..", "relative path component"),
    (".", "relative path component"),
    ("../etc", "path separator '/'"),
    ("..\\windows", "path separator '\\'"),
    ("a/b", "path separator '/'"),
    ("a\\b", "path separator '\\'"),
    ("/abs", "path separator '/'"),
    ("C:evil", "drive or stream separator ':'"),
    ("file:stream", "drive or stream separator ':'"),
    ("..%2f", "starts with '.'"),
    (".hidden", "starts with '.'"),
    ("...", "starts with '.'"),
    ("trailing.", "ends with '.'"),
    ("nul\x00byte", "U+0000"),
    ("new\nline", "U+000A"),
    ("tab\tname", "U+0009"),
    ("esc\x1bname", "U+001B"),
    ("del\x7fname", "U+007F"),
    ("zero\u200bwidth", "U+200B"),
    ("bidi\u202eoverride", "U+202E"),
    ("line\u2028sep", "U+2028"),
    ("bom\ufeffname", "U+FEFF"),
    (" lead", "whitespace"),
    ("trail ", "whitespace"),
    ("CON", "reserved device name"),
    ("nul.txt", "reserved device name"),
    ("Com1", "reserved device name"),
    ("lpt9.log", "reserved device name"),
    ("wild*", "wildcard '*'"),
    ("what?", "wildcard '?'"),
    ('quo"te', "quote"),
    ("a<b", "redirection"),
    ("a>b", "redirection"),
    ("a|b", "pipe"),
    ("", "it is empty"),
    ("x" * 129, "129 characters"),
    ("é" * 128, "256 UTF-8 bytes"),
    ("e\u0301", "NFC"),
]


@pytest.mark.parametrize(("name", "reason"), REFUSED)
def test_refused_names_carry_a_precise_reason(name: str, reason: str) -> None:
    with pytest.raises(InvalidName) as caught:
        validate_name(name, what="wing")
    assert reason in str(caught.value)
    assert str(caught.value).startswith("invalid wing name")


ACCEPTED = ["default", "backend", "Alice Smith", "Jürgen", "проект", "项目", "a.b", "v1_2-3", "x" * 128, "console"]


@pytest.mark.parametrize("name", [*ACCEPTED, "quarantine-pending"])
def test_ordinary_names_pass_unchanged(name: str) -> None:
    assert validate_name(name) == name


@pytest.mark.parametrize("value", [None, 3, b"bytes", ["a"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidName, match="expected a string"):
        validate_name(value, what="vault")


def test_invalid_name_is_invalid_input() -> None:
    assert issubclass(InvalidName, InvalidInput)
    assert issubclass(InvalidName, ValueError)
