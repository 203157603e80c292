"""The docs keep step with the code: package READMEs list exactly `__all__`, and no doc link is broken.

Each distribution's README has a `## Public API` section. Every inline-code span in it that is a bare Python
name (`Name` or `name(…)`) must be in the package's `__all__`, and every name in `__all__` must be named
there. Dotted spans (`undercroft_core.language`), paths and commands are prose, not API, and are ignored;
so are fenced code blocks (usage examples). Links: every relative link in README.md, docs/*.md and the
package READMEs must name a file of the repository, and a `#fragment` must name a heading of that file
(GitHub's anchor rules).
"""

from __future__ import annotations

import ast
import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from workspace import PACKAGES_DIR, ROOT, import_name

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_API_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\(.*\))?$")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

PACKAGE_READMES = sorted(PACKAGES_DIR.glob("*/README.md"))
LINKING_DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md")), *PACKAGE_READMES]


def _without_fences(text: str) -> str:
    return _FENCE.sub("", text)


def declared_all(init: pathlib.Path) -> set[str]:
    """The literal `__all__` of a module, read from its source (nothing is imported)."""
    for node in ast.parse(init.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{init} has no literal __all__")


def public_api_section(readme_text: str) -> str | None:
    """The text of the `## Public API` section (up to the next level-2 heading), or None."""
    match = re.search(r"^## Public API[^\n]*\n(.*?)(?=^## |\Z)", readme_text, re.M | re.S)
    return match.group(1) if match else None


def named_api(section: str) -> set[str]:
    """Every bare Python name an inline-code span of the section names."""
    names = set()
    for span in _CODE_SPAN.findall(_without_fences(section)):
        match = _API_NAME.match(span.strip())
        if match:
            names.add(match.group(1))
    return names


def api_drift(readme_text: str, exported: set[str], package: str = "") -> tuple[set[str], set[str]]:
    """(named in the README but not in `__all__`, in `__all__` but not named in the README).

    `__all__` itself and the package's own import name are words about the API, not names in it.
    """
    section = public_api_section(readme_text)
    if section is None:
        raise AssertionError("no '## Public API' section")
    named = named_api(section) - {"__all__", package}
    return named - exported, exported - named


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a markdown text, duplicates suffixed -1, -2, … as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_without_fences(text)):
        base = github_anchor(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def broken_links(doc: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """Every relative link of a doc whose file is missing (or outside `root`), or whose anchor is."""
    text = doc.read_text()
    broken = []
    for target in _LINK.findall(_without_fences(text)):
        if _EXTERNAL.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (doc.parent / path_part).resolve() if path_part else doc
        if not resolved.is_relative_to(root.resolve()) or not resolved.exists():
            broken.append(target)
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved.read_text()):
            broken.append(target)
    return broken


# ---- the checkers can fail ------------------------------------------------------------------------------


def test_api_drift_reports_both_directions() -> None:
    readme = (
        "# x\n\n## Public API\n\n`open_vault(name)`, `Ghost` and `Palace`; see `undercroft_x.mod`.\n\n"
        "## Other\n`Hidden`\n"
    )
    extra, missing = api_drift(readme, {"Palace", "open_vault", "Forgotten"})
    assert extra == {"Ghost"}
    assert missing == {"Forgotten"}


def test_api_drift_ignores_fenced_examples_and_dotted_spans() -> None:
    readme = (
        "## Public API\n\n`__all__` of `undercroft_x`: `Palace`, `os.environ`, `docs/core.md`\n\n"
        "```python\n`NotAName`\n```\n"
    )
    assert api_drift(readme, {"Palace"}, "undercroft_x") == (set(), set())
    assert api_drift(readme, {"Palace"}) == ({"undercroft_x"}, set())


def test_api_drift_requires_the_section() -> None:
    with pytest.raises(AssertionError, match="no '## Public API' section"):
        api_drift("# x\n\nNo API here.\n", {"Error"})


def test_broken_links_finds_missing_files_and_anchors(tmp_path: pathlib.Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "RESULTS.md").write_text("# Results\n\n## Real table\n")
    (tmp_path / "outside.md").write_text("# Outside\n")
    doc = tmp_path / "docs" / "page.md"
    doc.write_text(
        "# T\n\n## Real heading (issue 4's)\n\n[ok](../RESULTS.md#real-table) [self](#real-heading-issue-4s) "
        "[gone](no-such-file.md) [bad anchor](../RESULTS.md#no-such-heading) [web](https://example.org/x.md)\n\n"
        "```md\n[in code](nowhere.md)\n```\n"
    )
    assert broken_links(doc, root=tmp_path) == ["no-such-file.md", "../RESULTS.md#no-such-heading"]
    assert broken_links(doc, root=tmp_path / "docs") == [
        "../RESULTS.md#real-table",
        "no-such-file.md",
        "../RESULTS.md#no-such-heading",
    ]


def test_github_anchor_rules() -> None:
    assert github_anchor("LoCoMo chunking arms (issue 4's overlap question, issue 11)") == (
        "locomo-chunking-arms-issue-4s-overlap-question-issue-11"
    )
    assert github_anchor("The `undercroft-bench` instruments") == "the-undercroft-bench-instruments"
    assert anchors("# A\n## A\n") == {"a", "a-1"}


# ---- the real tree ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("readme", PACKAGE_READMES, ids=lambda p: p.parent.name)
def test_package_readme_lists_exactly_its_public_api(readme: pathlib.Path) -> None:
    package = import_name(readme.parent.name)
    exported = declared_all(readme.parent / "src" / package / "__init__.py")
    extra, missing = api_drift(readme.read_text(), exported, package)
    assert not extra, f"{readme.parent.name}/README.md names {sorted(extra)}, not in {package}.__all__"
    assert not missing, f"{readme.parent.name}/README.md omits {sorted(missing)} of {package}.__all__"


@pytest.mark.parametrize("doc", LINKING_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_doc_links_resolve(doc: pathlib.Path) -> None:
    assert not broken_links(doc), f"{doc.relative_to(ROOT)} has broken links: {broken_links(doc)}"
