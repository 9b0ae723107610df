"""The documentation holds together: every module of the package has its line in CONTRIBUTING.md, the user
pages stay short enough to read, they carry no project history (issue numbers, commit hashes), and every
relative link leads to a file that exists and, with an `#anchor`, to one of its headings.

User pages are README.md, docs/*.md (not docs/engineering/, which keeps the history) and
charts/*/README.md. Links are checked in those, in CONTRIBUTING.md, CHANGELOG.md and docs/engineering/ too.
Anchors follow GitHub's slugs: the heading's text lowercased, punctuation but `-` and `_` dropped, each space
a `-`, and `-1`, `-2`, ... after a repeated heading. Text in fenced code blocks is neither a heading nor a
link.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reconcile"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
README = ROOT / "README.md"
MAX_LINES = 400
MAX_README_LINES = 300


def user_pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "charts").glob("*/README.md"))]


def linked_pages() -> list[Path]:
    pages = [README, CONTRIBUTING, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return pages + sorted((ROOT / "charts").glob("*/README.md"))


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


# --- CONTRIBUTING.md names every module ------------------------------------------------------------------


def package_modules() -> set[str]:
    """Every module of the package but `__init__`, as `cli/commands` (a sub-package's) or `errors`."""
    return {
        str(p.relative_to(PACKAGE).with_suffix("")) for p in PACKAGE.rglob("*.py") if p.stem != "__init__"
    }


def contributing_modules() -> dict[str, str]:
    """{module: what CONTRIBUTING.md's layout says it owns}. In the layout block, a sub-package is a line
    `  cli/  ...`, each of its modules a line `      commands  ...` below it, a top-level module a line
    `  errors.py  ...`; a description runs on in lines indented further."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    block = text.split("### Layout", 1)[1].split("```", 2)[1]
    found: dict[str, str] = {}
    package = ""
    for line in block.splitlines():
        if match := re.match(r"^  (\w+)/\s+\S", line):
            package = match.group(1)
        elif match := re.match(r"^  (\w+)\.py\s{2,}(\S.*)$", line):
            package = ""
            found[match.group(1)] = match.group(2)
        elif (match := re.match(r"^      (\w+)\s{2,}(\S.*)$", line)) and package:
            found[f"{package}/{match.group(1)}"] = match.group(2)
    return found


def test_contributing_names_every_module_of_the_package_with_what_it_owns() -> None:
    listed = contributing_modules()
    assert sorted(package_modules() - set(listed)) == [], "modules missing from CONTRIBUTING.md's layout"
    assert [m for m, owns in listed.items() if len(owns.split()) < 2] == []


def test_contributing_names_no_module_that_does_not_exist() -> None:
    assert sorted(set(contributing_modules()) - package_modules()) == []


# --- user pages: length, no project history ---------------------------------------------------------------


@pytest.mark.parametrize("page", user_pages(), ids=name)
def test_a_user_page_is_at_most_400_lines_and_the_readme_at_most_300(page: Path) -> None:
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= (MAX_README_LINES if page == README else MAX_LINES)


ISSUE = re.compile(r"\bissues? #?\d+\b|\(#\d+\)|(?<![\w/#&])#\d+\b", re.I)
HASH_IN_CODE = re.compile(r"`([0-9a-fA-F]{7,40})`")
HASH_WORD = re.compile(r"(?<![\w./:#`-])([0-9a-f]{7,40})(?![\w`-])")
RELEASE_LINK = re.compile(r"\[[^\]]*\]\([^)]*/releases/[^)]*\)")
EXTERNAL_URL = re.compile(r"\((?:https?|mailto):[^)\s]*\)|<https?://[^>]*>|https?://\S+")


def history(text: str) -> list[str]:
    """The issue numbers and commit hashes `text` names: outside links to a release, and outside external
    URLs (a permalink into another project pins its commit, which is no history of this one)."""
    text = EXTERNAL_URL.sub("()", RELEASE_LINK.sub("", text))
    found = [m.group(0) for m in ISSUE.finditer(text)]
    found += [m.group(1) for m in HASH_IN_CODE.finditer(text)]
    found += [m.group(1) for m in HASH_WORD.finditer(text) if not m.group(1).isdecimal()]
    return found


def test_the_history_check_finds_issue_numbers_and_commit_hashes() -> None:
    assert history("as issue 12 says; see issues 3 and (#992); at `9355013`, or e332c45 itself") == [
        "issue 12",
        "issues 3",
        "(#992)",
        "9355013",
        "e332c45",
    ]
    release = "[v0.1.0 (#12)](https://github.com/o/r/releases/tag/v0.1.0)"
    assert history(f"{release}, on 2026-11-29, 1234567 bytes") == []
    assert history(f"[its Dockerfile](https://github.com/o/r/blob/{'003fbbfa1f98' * 3}abcd/Dockerfile)") == []
    assert history("a digest sha256:" + "ab12" * 16 + " and the cached word") == []


@pytest.mark.parametrize("page", user_pages(), ids=name)
def test_a_user_page_names_no_issue_number_or_commit_hash(page: Path) -> None:
    assert history(page.read_text(encoding="utf-8")) == []


# --- links -------------------------------------------------------------------------------------------------


FENCE = re.compile(r"^ {0,3}(`{3,}[^`]*|~{3,}.*)$")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def prose(text: str) -> list[str]:
    """The lines of a Markdown text outside its fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(page.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", page.read_text(encoding="utf-8")))
    return frozenset(out)


def relative_links(page: Path) -> list[str]:
    targets = []
    for line in prose(page.read_text(encoding="utf-8")):
        text = CODE_SPAN.sub("", line)
        targets += LINK.findall(text) + IMAGE.findall(text)
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def broken(page: Path, target: str) -> str | None:
    """Why the link `target` of `page` does not resolve, or None."""
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    if not file.exists():
        return f"{target}: no file {file}"
    if anchor and file.suffix == ".md" and anchor not in anchors(file):
        return f"{target}: no heading #{anchor} in {name(file)}"
    return None


def test_the_slugs_are_githubs() -> None:
    assert slug("Control when and how `workloads` restart") == "control-when-and-how-workloads-restart"
    assert slug("`skipped: … run with the cluster's key`") == "skipped--run-with-the-clusters-key"
    assert slug("Forbidden / RBAC") == "forbidden--rbac"
    assert slug("The image (`make image`)") == "the-image-make-image"
    assert slug("API Priority and Fairness: a priority level of its own") == (
        "api-priority-and-fairness-a-priority-level-of-its-own"
    )


@pytest.mark.parametrize("page", [p for p in linked_pages() if p.exists()], ids=name)
def test_every_relative_link_leads_to_a_file_and_its_anchor_to_a_heading(page: Path) -> None:
    problems = [why for target in relative_links(page) if (why := broken(page, target))]
    assert problems == []


def test_the_changelog_has_a_section_for_the_current_version() -> None:
    init = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    assert version, "reconcile/__init__.py has no __version__"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[?{re.escape(version.group(1))}\b", changelog, re.M)
