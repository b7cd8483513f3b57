"""Every repository path the docs and the code's comments cite exists: a move fails a test
instead of misleading a reader.

Where: README.md, BENCHMARKS.md and docs/*.md (all their text, code blocks included: commands
name scripts), the comments and docstrings of service/ (Python and C), and the comments of
pyproject.toml. What counts as a cited path:

- a token that starts with a top-level folder of the repository and a slash
  (`service/api/edge.py`, `benchmarks/`); a glob (`static/*`) must match something;
- a relative path of at least one folder and a file with an extension (`engine/search/store.py`,
  `plot/plot.js`), found from the citing file's folder or one of its parents, from `service/`,
  from the explorer's `service/explorer/static/`, or in the installed packages
  (`uvicorn/protocols/http/httptools_impl.py`);
- a dotted module of the project (`benchmarks.huge_pages`, `service.config.Settings`): its
  modules must exist, and the first name after them must be defined at the top of the last one.

Not citations: a path under a folder .gitignore names (outputs such as `benchmarks/results/`)
and placeholders, whose first part is upper case or a word of PLACEHOLDERS (`OUT/training.json`,
`folder/name.npy`).
"""

from __future__ import annotations

import ast
import io
import re
import sysconfig
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOP_FOLDERS = (
    "benchmarks", "client", "deploy", "docs", "harness", "loadtests", "scripts", "service",
    "tests",
)  # fmt: skip
PROJECT_PACKAGES = ("service", "embedding_service", "harness", "benchmarks", "loadtests", "tests")
EXTENSIONS = "py|md|c|js|css|html|toml|json|yml|yaml|txt|sh|lua|png|npy|faiss|lock"
ROOTED = re.compile(r"(?<![\w./-])((?:" + "|".join(TOP_FOLDERS) + r")/[\w./*-]*[\w*/])")
RELATIVE = re.compile(r"(?<![\w./:-])((?:[\w-]+/)+[\w.-]+\.(?:" + EXTENSIONS + r"))(?![\w/])")
DOTTED = re.compile(r"(?<![\w./-])((?:" + "|".join(PROJECT_PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)")
PLACEHOLDERS = {"folder", "path", "dir", "name"}
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
# Where a relative path may be found besides the citing file's own folders.
BASES = (REPO / "service", REPO / "service" / "explorer" / "static")
INSTALLED = Path(sysconfig.get_paths()["purelib"])


def pages() -> list[Path]:
    """The Markdown read whole."""
    return [REPO / "README.md", REPO / "BENCHMARKS.md", *sorted((REPO / "docs").glob("*.md"))]


def python_prose(source: str) -> str:
    """The comments and docstrings of a Python module, one after another."""
    comments = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    owners = [node for node in ast.walk(ast.parse(source)) if isinstance(node, DOCUMENTED)]
    docstrings = [ast.get_docstring(node, clean=False) or "" for node in owners]
    return "\n".join([*comments, *docstrings])


DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def cited_texts() -> Iterator[tuple[Path, str]]:
    """(file, the text of it that may cite paths) for every file this test reads."""
    for page in pages():
        yield page, page.read_text(encoding="utf-8")
    for module in sorted((REPO / "service").rglob("*.py")):
        yield module, python_prose(module.read_text(encoding="utf-8"))
    for source in sorted((REPO / "service").rglob("*.c")):
        yield source, "\n".join(C_COMMENT.findall(source.read_text(encoding="utf-8")))
    lines = (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    yield REPO / "pyproject.toml", "\n".join(line.partition("#")[2] for line in lines)


def ignored_folders() -> list[str]:
    """The folders .gitignore names with their path (`benchmarks/results/`)."""
    lines = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if "/" in line.strip().rstrip("/")]


def is_placeholder(path: str) -> bool:
    first = path.split("/", 1)[0]
    return first.isupper() or first in PLACEHOLDERS


def rooted_exists(path: str) -> bool:
    if any(path.startswith(folder) for folder in ignored_folders()):
        return True
    return any(REPO.glob(path)) if "*" in path else (REPO / path).exists()


def relative_exists(citing: Path, path: str) -> bool:
    ancestors = [folder for folder in citing.parents if folder == REPO or REPO in folder.parents]
    return any((base / path).exists() for base in [*ancestors, *BASES, INSTALLED])


def top_level_names(module: Path) -> set[str]:
    """Names a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def dotted_exists(dotted: str) -> bool:
    """A project module path, and the first name after its modules defined in the last one."""
    first, *parts = dotted.split(".")
    here = REPO / "client" / first if first == "embedding_service" else REPO / first
    for index, part in enumerate(parts):
        if (here / part / "__init__.py").exists():
            here = here / part
        elif (here / f"{part}.py").exists() or any(here.glob(f"{part}.*.so")):
            module = here / f"{part}.py"
            rest = parts[index + 1 : index + 2]
            return not rest or not module.exists() or rest[0] in top_level_names(module)
        else:
            return part in top_level_names(here / "__init__.py")
    return True


def stale_citations(citing: Path, text: str) -> list[str]:
    """Every path `text` (from `citing`) cites that does not exist."""
    stale = []
    for match in ROOTED.finditer(text):
        if not rooted_exists(match.group(1)):
            stale.append(match.group(1))
    for match in RELATIVE.finditer(text):
        path = match.group(1)
        if ROOTED.fullmatch(path) or is_placeholder(path):
            continue
        if not relative_exists(citing, path):
            stale.append(path)
    stale += [m.group(1) for m in DOTTED.finditer(text) if not dotted_exists(m.group(1))]
    return stale


def test_the_top_folders_are_the_repositorys() -> None:
    ignored = set((REPO / ".gitignore").read_text(encoding="utf-8").split())
    folders = {
        folder.name
        for folder in REPO.iterdir()
        if folder.is_dir() and not folder.name.startswith(".")
        and f"{folder.name}/" not in ignored and not folder.name.endswith(".egg-info")
    }  # fmt: skip
    assert folders == set(TOP_FOLDERS)


def test_the_checker_flags_moved_paths_and_passes_real_ones() -> None:
    citing = REPO / "service" / "engine" / "search" / "store.py"
    text = (
        "see service/api/edge.py, service/api/direct.py, tables/layout.py, engine/gone.py, "
        "benchmarks.engine_throughput, benchmarks.fresh_memory, service.config.Settings, "
        "service.config.Nothing, plot/plot.js, OUT/training.json, benchmarks/results/x.txt"
    )
    assert stale_citations(citing, text) == [
        "service/api/direct.py", "engine/gone.py", "benchmarks.fresh_memory",
        "service.config.Nothing",
    ]  # fmt: skip


CITED = dict(cited_texts())


@pytest.mark.parametrize("citing", list(CITED), ids=lambda path: str(path.relative_to(REPO)))
def test_every_cited_path_exists(citing: Path) -> None:
    stale = stale_citations(citing, CITED[citing])
    assert not stale, f"{citing.relative_to(REPO)} cites what does not exist: {stale}"
