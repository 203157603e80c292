"""``.gitignore``-style exclude rules: a small matcher over the stdlib, with git's precedence.

Supported syntax: blank lines and ``#`` comments; ``\\#`` and ``\\!`` escapes; trailing spaces dropped unless
escaped; ``!`` re-includes; a trailing ``/`` matches directories only; a pattern with a ``/`` at its start or
in its middle is anchored to the directory of the file that declared it, one without matches a name at any
depth; ``*`` and ``?`` never cross ``/``; ``[...]`` classes (``[!...]`` negated); ``**/`` (any leading
directories), ``/**`` (everything inside) and ``/**/`` (zero or more directories). The last matching rule
wins, deeper files' rules after their parents'. As in git, a file inside an excluded directory cannot be
re-included: the walker never enters the directory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["IgnoreRule", "IgnoreRules", "parse_ignore_lines"]


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One parsed pattern: where it came from, what it matches, and whether it re-includes."""

    pattern: str
    source: str
    base: str
    negated: bool
    directory_only: bool
    anchored: bool
    regex: re.Pattern[str]

    def matches(self, relative: str, *, is_dir: bool) -> bool:
        """Whether this rule matches ``relative`` (a POSIX path relative to the walk's root)."""
        if self.directory_only and not is_dir:
            return False
        if self.base:
            if not relative.startswith(self.base + "/"):
                return False
            relative = relative[len(self.base) + 1 :]
        subject = relative if self.anchored else relative.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None


def _translate(pattern: str) -> str:
    out: list[str] = []
    index, length = 0, len(pattern)
    while index < length:
        character = pattern[index]
        if pattern.startswith("**/", index) and (index == 0 or pattern[index - 1] == "/"):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("/**", index) and index + 3 == length:
            out.append("/.*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif character == "*":
            out.append("[^/]*")
            index += 1
        elif character == "?":
            out.append("[^/]")
            index += 1
        elif character == "[":
            close = pattern.find("]", index + 2)
            if close == -1:
                out.append(re.escape(character))
                index += 1
                continue
            body = pattern[index + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            escaped = "".join("\\" + item if item in "\\^[]" else item for item in body)
            out.append(("[^/" if negate else "[") + escaped + "]")
            index = close + 1
        elif character == "\\" and index + 1 < length:
            out.append(re.escape(pattern[index + 1]))
            index += 2
        else:
            out.append(re.escape(character))
            index += 1
    return "".join(out)


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    # An escaped final space ("foo\ ") keeps that one space.
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "
    return stripped


def parse_ignore_lines(lines: Iterable[str], *, base: str = "", source: str = "excludes") -> tuple[IgnoreRule, ...]:
    """Parse gitignore lines declared in directory ``base`` (POSIX, relative to the root; ``""`` is the root).

    ``source`` names the declaring file in each rule (``.gitignore:3``) so a skip can say which rule hit.
    """
    rules: list[IgnoreRule] = []
    for number, raw in enumerate(lines, start=1):
        line = _strip_trailing_spaces(raw.rstrip("\r\n"))
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        directory_only = line.endswith("/") and not line.endswith("\\/")
        line = line.rstrip("/") if directory_only else line
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        if not line:
            continue
        rules.append(
            IgnoreRule(
                pattern=raw.strip(),
                source=f"{source}:{number}",
                base=base,
                negated=negated,
                directory_only=directory_only,
                anchored=anchored,
                regex=re.compile(_translate(line), re.DOTALL),
            )
        )
    return tuple(rules)


@dataclass(frozen=True, slots=True)
class IgnoreRules:
    """An ordered set of rules; the last rule that matches a path decides it."""

    rules: tuple[IgnoreRule, ...] = ()

    def extended(self, more: Sequence[IgnoreRule]) -> IgnoreRules:
        """These rules followed by ``more`` (which take precedence)."""
        return IgnoreRules(self.rules + tuple(more))

    def decide(self, relative: str, *, is_dir: bool) -> IgnoreRule | None:
        """The rule that excludes ``relative``, or None when it is included (unmatched or re-included)."""
        decided: IgnoreRule | None = None
        for rule in self.rules:
            if rule.matches(relative, is_dir=is_dir):
                decided = None if rule.negated else rule
        return decided
