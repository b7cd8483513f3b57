"""The documentation holds together: generated references are current, every error the API
docs name is one the service answers with that status, and every relative link in README.md,
BENCHMARKS.md and docs/*.md reaches a file (and a heading) that exists."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from service.cli.reference import cli_markdown, errors_markdown, settings_markdown, with_errors

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", REPO / "BENCHMARKS.md", *sorted(DOCS.glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = ("http://", "https://", "mailto:")


@pytest.mark.parametrize(
    ("name", "generate"), [("settings.md", settings_markdown), ("cli.md", cli_markdown)]
)
def test_generated_reference_is_current(name: str, generate: Callable[[], str]) -> None:
    committed = (DOCS / name).read_text(encoding="utf-8")
    assert committed == generate(), f"docs/{name} is stale: run scripts/generate-docs"


def test_the_error_table_of_the_api_docs_is_current() -> None:
    committed = (DOCS / "api.md").read_text(encoding="utf-8")
    assert with_errors(committed) == committed, "docs/api.md is stale: run scripts/generate-docs"


def test_every_error_the_api_docs_name_has_the_status_they_give() -> None:
    statuses = {}
    for codes, names in re.findall(r"^\| ([\d, ]+) \| (`[^|]+`) \|", errors_markdown(), re.M):
        pairs = zip(codes.split(", "), re.findall(r"`(\w+)`", names), strict=False)
        statuses |= {name: code for code, name in pairs}
    section = (DOCS / "api.md").read_text(encoding="utf-8").split("## Errors", 1)[1]
    named = re.findall(r"\b(\d{3}) `([A-Z]\w+)`((?: / `[A-Z]\w+`)*)", section)
    assert len(named) > 20
    for status, first, more in named:
        for name in [first, *re.findall(r"`(\w+)`", more)]:
            assert statuses.get(name) == status, f"docs/api.md: {status} {name}"


def prose(text: str) -> str:
    """Markdown without its code blocks: a '#' or a '[x](y)' in code is neither."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text lower-cased, punctuation dropped, spaces '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, numbered as GitHub numbers repeats."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(prose(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    """Every link target in a Markdown file's prose (code spans and blocks left out)."""
    text = CODE_SPAN.sub("code", prose(path.read_text(encoding="utf-8")))
    return LINK.findall(text)


def test_the_link_checker_sees_links_and_anchors(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The `API` at a glance\n\n## Big tables: prepared form, workers\n\n## Big tables: "
        "prepared form, workers\n\n[a](other.md#x) ![b](pic.png) `[c](not-a-link.md)`\n\n"
        "```\n# not a heading\n[d](also-not.md)\n```\n",
        encoding="utf-8",
    )
    assert links(page) == ["other.md#x", "pic.png"]
    assert anchors(page) == {
        "the-api-at-a-glance",
        "big-tables-prepared-form-workers",
        "big-tables-prepared-form-workers-1",
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in links(page):
        if target.startswith(EXTERNAL):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(REPO)}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)} has broken links:\n" + "\n".join(broken)
