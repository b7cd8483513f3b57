"""The options that name a table on the command line, and the spec they make.

Two spellings, as in `serve --table`: NAME=PATH[,key=value...] (any table spec), or a plain
PATH with the file options (--format, --vocab, ...). A table named after its file is called by
the file's name (`glove.6B.50d`), so messages say which table they mean.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, get_args

from service.config import TABLE_NAME_PATTERN, TableSpec, default_table
from service.engine.loaders import FORMATS, UnicodeErrors

# Spec keys given as file options, under the flag a user types.
FILE_OPTIONS = ("format", "vocab", "labels", "tensor", "width", "limit", "unicode_errors", "counts")


def parse_table_flag(text: str) -> dict[str, Any]:
    """NAME=PATH[,key=value...] -> a table spec dict, e.g. glove=/data/g.txt,format=glove."""
    name, sep, rest = text.partition("=")
    if not sep or not rest:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH[,key=value...], got {text!r}")
    path, *options = rest.split(",")
    spec: dict[str, Any] = {"name": name, "path": path}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected key=value after the path, got {option!r}")
        spec[key.replace("-", "_")] = value
    # checkpoints=true: PATH is a directory of checkpoints, not one table file.
    if str(spec.get("checkpoints", "")).lower() in {"true", "yes", "1"}:
        spec["checkpoints"] = spec.pop("path")
    return spec


def table_argument(text: str) -> dict[str, Any]:
    """--table's value: NAME=PATH[,key=value...], or a plain path (named after its file)."""
    name = text.partition("=")[0]
    if "=" in text and "/" not in name and re.match(TABLE_NAME_PATTERN, name):
        return parse_table_flag(text)
    return {"name": name_of(Path(text)), "path": text}


def name_of(path: Path) -> str:
    """A table name for a file: its name, less what the name pattern does not allow."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", path.name).lstrip("._-")[:64]
    return name or "table"


def add_file_options(parser: argparse.ArgumentParser) -> None:
    """The options of a table file given as a plain path (--format, --vocab, ...)."""
    parser.add_argument("--format", choices=FORMATS, help="file format (default: guessed)")
    parser.add_argument("--vocab", type=Path, help="vocabulary file (npy, huggingface)")
    parser.add_argument("--labels", type=Path, help="labels .tsv (projector)")
    parser.add_argument("--tensor", help="tensor name in a .safetensors file")
    parser.add_argument("--width", type=int, help="row width (projector .bytes)")
    parser.add_argument("--limit", type=int, help="read only the first N rows")
    parser.add_argument("--counts", type=Path, help="'token count' lines: the count column")
    parser.add_argument(
        "--unicode-errors",
        choices=get_args(UnicodeErrors),
        help="tokens that are not valid UTF-8: strict (default: refuse), replace, ignore",
    )


def add_path(parser: argparse.ArgumentParser) -> None:
    """A required table file (or model directory, or prepared folder) with its file options."""
    parser.add_argument("path", type=Path, help="table file or model directory")
    add_file_options(parser)


def add_table(parser: argparse.ArgumentParser) -> None:
    """--table (default: the bundled MiniLM) with the file options."""
    parser.add_argument(
        "--table",
        type=table_argument,
        metavar="PATH | NAME=PATH[,key=value...]",
        help="the table to answer from (default: the bundled MiniLM): a file, model directory "
        "or prepared folder, with the file options below; or a spec as serve --table takes",
    )
    add_file_options(parser)


def spec_of(args: argparse.Namespace) -> TableSpec:
    """The table spec the command's options name."""
    given = {key: getattr(args, key, None) for key in FILE_OPTIONS}
    given = {key: value for key, value in given.items() if value is not None}
    path = getattr(args, "path", None)
    if path is not None:
        return TableSpec(name=name_of(path), path=path, **given)
    table = getattr(args, "table", None)
    if table is None:
        spec = default_table()
        return spec.model_copy(update=given) if given else spec
    return TableSpec.model_validate({**given, **table})
