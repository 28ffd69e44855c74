"""README.md is the front door and docs/ the manual: the README stays short, every link of either resolves (a
`#anchor` to a heading of its page), every page of the manual is on the README's map, and the README's `sh` examples
repeat commands of the manual's `bash` blocks, which tests/e2e/test_readme_commands.py runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.e2e.test_readme_commands import MAP_HEADING, doc_pages, documented_commands

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").rglob("*.md"))]
MAX_README_LINES = 200

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def prose(markdown: str) -> str:
    """The text outside fenced blocks and code spans (where a `[x](y)` is code, not a link)."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (code marks included), spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings (a repeated heading's later ones get -1, -2, … as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", markdown).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text(encoding="utf-8"))) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def broken_links(page: Path) -> list[str]:
    """The page's relative links whose file is missing, or whose `#anchor` names no heading of a Markdown file."""
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target} (no heading #{anchor} in {path or page.name})")
    return broken


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; the manual (docs/) holds the rest"
    headings = [line for line in lines if line.startswith("## ")]
    for needed in ("## Two commands", "## Evaluate your own model in one line", MAP_HEADING, "## Layout",
                   "## Data and licences"):
        assert needed in headings


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    assert relative_links(page), "a page of the manual links nowhere (not even back to the README)"
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_found(tmp_path):
    """The checks above fail where they should: a missing file, a missing heading; a link in code is no link."""
    (tmp_path / "other.md").write_text("# Other page\n\n## Stopping a run\n\n```bash\n# not a heading\n```\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#stopping-a-run) [top](#a-b-c) [gone](missing.md) [bad](other.md#not-a-heading)\n"
                    "[web](https://example.com/x) `[code](nowhere.md)`\n\n# A, b: `c`\n")
    assert broken_links(page) == ["missing.md (no such file)",
                                  "other.md#not-a-heading (no heading #not-a-heading in other.md)"]
    assert anchors("# Boards: an ad-hoc run never moves the nightly numbers\n## Two commands\n## Two commands\n") == \
        {"boards-an-ad-hoc-run-never-moves-the-nightly-numbers", "two-commands", "two-commands-1"}
    assert slug("A config or dataset cannot exhaust the machine") == "a-config-or-dataset-cannot-exhaust-the-machine"
    assert slug("validate checks before a run") == "validate-checks-before-a-run"


def test_every_page_of_the_manual_is_on_the_readmes_map():
    """The map links each page (its order is the order test_readme_commands runs the pages' commands in)."""
    readme = README.read_text(encoding="utf-8")
    on_map = doc_pages(readme)[1:]
    assert sorted(on_map) == sorted((REPO / "docs").rglob("*.md"))
    table = readme[readme.index(MAP_HEADING):]
    for page in on_map:  # each with a line on what it holds
        rows = [line for line in table.splitlines()
                if line.startswith("| ") and f"]({page.relative_to(REPO).as_posix()})" in line]
        assert rows, f"{page.relative_to(REPO)} has no row of the map's table"
        assert len(rows[0].split("|")) == 4 and rows[0].split("|")[2].strip(), rows[0]


def sh_commands(markdown: str) -> list[str]:
    """The commands of a page's ```sh blocks (the README's examples), as words."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", markdown, re.S | re.M):
        commands += [shlex.join(argv) for line in block.splitlines() if (argv := shlex.split(line, comments=True))]
    return commands


def test_the_readmes_examples_are_commands_the_manual_runs():
    """The README shows a few commands in ```sh blocks (not run there, so the demo stays the first command that runs);
    each is written the same in a ```bash block of the manual, where the README test runs it."""
    examples = sh_commands(README.read_text(encoding="utf-8"))
    assert examples, "the README shows no example command"
    documented = {c.words for c in documented_commands() if c.file != "README.md"}
    assert [e for e in examples if e not in documented] == []
    assert any("prefect server start" in e for e in examples)  # tests/test_automation.py reads that line here


BENCHMARKS = REPO / "docs" / "benchmarks.md"  # the one table of measured figures, written by bench/page.py
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def without_the_date_column(markdown: str) -> str:
    """The page with the cells of its tables' `date` column blanked: the one place a date may stand."""
    lines, column = [], None
    for line in markdown.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)] if line.startswith("|") else None
        if cells is None:
            column = None  # the table ended
        elif "date" in cells:
            column = cells.index("date")  # its header
        elif column is not None and column < len(cells):
            cells[column] = ""
            line = "|".join(cells)
        lines.append(line)
    return "\n".join(lines)


def test_no_dated_figures_in_the_readme_or_the_manual():
    """Measured figures belong to docs/benchmarks.md, each with its date in the table's `date` column; nowhere else
    in the README or the manual does a date stand (a dated figure in prose goes stale unseen)."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert not DATE.search(without_the_date_column(text) if page == BENCHMARKS else text), page


def test_only_the_benchmarks_tables_date_column_may_hold_a_date():
    page = ("# B\n\n| figure | value | machine | date | command |\n|---|---|---|---|---|\n"
            "| a | 1 s | 2 cores, load 0.4 | 2026-11-29 | `x` |\n")
    assert not DATE.search(without_the_date_column(page))
    assert DATE.search(without_the_date_column(page + "\nMeasured on 2026-11-29.\n"))
    assert DATE.search(without_the_date_column(page.replace("| `x` |", "| `x --since 2026-11-28` |")))
