"""The command-line entry point: serve tables, describe a table file, or answer one query."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from service.config import TableSpec, default_table, load_settings
from service.engine.errors import EngineError
from service.engine.loaders import FORMATS, UnicodeErrors
from service.engine.table import EmbeddingTable
from service.loading import read_spec

PROGRAM = "embedding-service"


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
    return spec


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve tables over HTTP")
    serve.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default 8000)")
    serve.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"])
    _add_table_options(serve)
    info = commands.add_parser("info", help="describe a table file without serving it")
    _add_file_options(info)
    query = commands.add_parser("query", help="answer one query from a table file and exit")
    query.add_argument("operation", choices=["neighbors", "analogy", "similarity", "tokenize"])
    query.add_argument(
        "terms", nargs="+", help="tokens (analogy: the positive ones); tokenize: texts"
    )
    query.add_argument(
        "--negative", action="append", default=[], help="analogy: a negative token (repeatable)"
    )
    query.add_argument("-k", type=int, default=10, help="results to print (default 10)")
    _add_file_options(query, required=False)
    return parser


def _add_table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table",
        action="append",
        type=parse_table_flag,
        metavar="NAME=PATH[,key=value...]",
        help="a table to serve (repeatable); keys: format, vocab, labels, tensor, width, "
        "limit, unicode_errors, case_insensitive. Without any, the bundled MiniLM table is "
        "served as 'minilm'.",
    )
    parser.add_argument("--config", type=Path, help="a TOML or JSON settings file")


def _add_file_options(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument(
        "path",
        nargs=None if required else "?",
        type=Path,
        help="table file or model directory" + ("" if required else " (default: bundled MiniLM)"),
    )
    parser.add_argument("--format", choices=FORMATS, help="file format (default: guessed)")
    parser.add_argument("--vocab", type=Path, help="vocabulary file (npy, huggingface)")
    parser.add_argument("--labels", type=Path, help="labels .tsv (projector)")
    parser.add_argument("--tensor", help="tensor name in a .safetensors file")
    parser.add_argument("--width", type=int, help="row width (projector .bytes)")
    parser.add_argument("--limit", type=int, help="read only the first N rows")
    parser.add_argument(
        "--unicode-errors",
        choices=get_args(UnicodeErrors),
        help="tokens that are not valid UTF-8: strict (default: refuse), replace, ignore",
    )


def serve(args: argparse.Namespace) -> int:
    """Load every table (failing fast on a bad file), then serve until stopped."""
    import uvicorn

    from service.connections import ConnectionGuard, protocol_for
    from service.main import create_app, load_registry
    from service.server import GracefulServer

    settings = load_settings(
        args.config, host=args.host, port=args.port, log_level=args.log_level, tables=args.table
    )
    registry = load_registry(settings)
    app = create_app(settings, registry)
    guard = ConnectionGuard.from_settings(settings, app.state)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol_for(guard),
        log_level=settings.log_level,
        access_log=settings.access_log,
        timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
    )
    state = app.state
    GracefulServer(config, registry, state.loader, state.keys, settings.drain_seconds).run()
    return 0


def _file_spec(args: argparse.Namespace) -> TableSpec:
    if args.path is None:
        return default_table()
    values = {
        "name": "file",
        "path": args.path,
        "format": args.format,
        "vocab": args.vocab,
        "labels": args.labels,
        "tensor": args.tensor,
        "width": args.width,
        "limit": args.limit,
        "unicode_errors": args.unicode_errors,
    }
    return TableSpec(**{k: v for k, v in values.items() if v is not None})


def info(args: argparse.Namespace) -> int:
    """Print a table file's shape and a few tokens as JSON."""
    from service.engine.index import SimilarityIndex

    spec = _file_spec(args)
    table = read_spec(spec)
    index = SimilarityIndex(table)
    facts = {
        "source": table.source,
        "rows": table.rows,
        "width": table.width,
        "parameters": table.parameters,
        "bytes": index.nbytes,
        "zero_rows": index.zero_rows,
        "metadata_columns": list(table.metadata),
        "first_tokens": list(table.tokens[:10]),
    }
    print(json.dumps(facts, indent=2, ensure_ascii=False))
    return 0


def query(args: argparse.Namespace) -> int:
    """Answer one neighbours, analogy, similarity or tokenize query and print it as JSON."""
    from service.engine.session import Session

    table = read_spec(_file_spec(args))
    if args.operation == "tokenize":
        return tokenize(table, args.terms)
    session = Session(table)
    if args.operation == "neighbors":
        answer: Any = session.most_similar(args.terms, topn=args.k)
    elif args.operation == "analogy":
        answer = session.most_similar(args.terms, args.negative, topn=args.k)
    else:
        answer = session.similarity(*args.terms[:2])
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    return 0


def tokenize(table: EmbeddingTable, texts: list[str]) -> int:
    """Print how the table splits each text, as /tokenize answers it."""
    from service.api.serialize import split_payload
    from service.engine.text import text_tokenizer

    splitter = text_tokenizer(table)
    splits = [split_payload(table, splitter.split(text), None) for text in texts]
    answer = {"tokenizer": splitter.kind, **splits[0]} if len(splits) == 1 else splits
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run a sub-command; bad input ends with one clear line and exit code 2."""
    args = build_parser().parse_args(argv)
    command = {"serve": serve, "info": info, "query": query}[args.command]
    try:
        return command(args)
    except EngineError as error:
        return _fail(error.message)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        return _fail(f"invalid settings: {problems}")
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))


def _fail(message: str) -> int:
    print(f"{PROGRAM}: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
