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
from service.engine.tables.table import EmbeddingTable
from service.loading.tables import read_spec
from service.schemas.diagnostics import BUILTIN_SETS

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
    # checkpoints=true: PATH is a directory of checkpoints, not one table file.
    if str(spec.get("checkpoints", "")).lower() in {"true", "yes", "1"}:
        spec["checkpoints"] = spec.pop("path")
    return spec


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve tables over HTTP")
    serve.add_argument("--host", help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default 8000)")
    serve.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument("--workers", type=int, help="server processes on the port (default 1)")
    # Set by the parent of several workers: the listening socket each worker serves.
    serve.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    serve.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    serve.add_argument("--quiet-load", action="store_true", help=argparse.SUPPRESS)
    serve.add_argument("--worker", type=int, help=argparse.SUPPRESS)
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
    _add_diagnose_parser(commands)
    _add_evaluate_parser(commands)
    from service.cli.tables import add_commands

    add_commands(commands, _add_file_options)
    _add_train_demo_parser(commands)
    return parser


def _add_train_demo_parser(commands: Any) -> None:
    demo = commands.add_parser(
        "train-demo",
        help="train a small word2vec (gensim, the 'train' extra) on the text inside the gensim "
        "package and write its checkpoints as a checkpoint set",
    )
    demo.add_argument("out", type=Path, help="a new or empty directory for the checkpoints")
    demo.add_argument("--epochs", type=int, default=10, help="passes over the corpus (10)")
    demo.add_argument("--dim", type=int, default=50, help="row width (50)")
    demo.add_argument(
        "--snapshots-per-epoch", type=int, default=2, help="checkpoints per epoch (2)"
    )
    demo.add_argument("--seed", type=int, default=1, help="of the initial rows and gensim (1)")
    demo.add_argument(
        "--corpus",
        choices=["all", "lee"],
        default="all",
        help="all: the Wikipedia extract and the Lee corpus; lee: the Lee corpus alone (fast)",
    )


def _add_diagnose_parser(commands: Any) -> None:
    diagnose = commands.add_parser(
        "diagnose", help="print a table file's diagnostics (suspect rows), as /diagnostics does"
    )
    _add_file_options(diagnose, required=False)
    reference = diagnose.add_mutually_exclusive_group()
    reference.add_argument("--reference-pattern", help="reference rows: tokens this RE2 matches")
    reference.add_argument(
        "--reference-token", action="append", help="a reference token (repeatable)"
    )
    reference.add_argument(
        "--no-reference", action="store_true", help="rank by norm (reference: null)"
    )
    diagnose.add_argument("--fraction", type=float, default=0.02, help="suspect share (0.02)")
    diagnose.add_argument("--token", action="append", default=[], help="a row to report on")
    diagnose.add_argument("--suspects", type=int, help="suspects to print: limit (100)")
    diagnose.add_argument("--offset", type=int, default=0, help="suspects to skip (0)")


def _add_evaluate_parser(commands: Any) -> None:
    evaluate = commands.add_parser(
        "evaluate", help="gensim's analogy or word-pair figures for a table file, as /evaluate"
    )
    _add_file_options(evaluate, required=False)
    source = evaluate.add_mutually_exclusive_group(required=True)
    source.add_argument("--analogies", type=Path, help="a questions-words.txt format file")
    source.add_argument("--pairs", type=Path, help="a word<TAB>word<TAB>score file")
    source.add_argument("--builtin", choices=BUILTIN_SETS, help="a set shipped with the service")
    evaluate.add_argument("--restrict", type=int, default=300_000, help="restrict_vocab (300000)")
    evaluate.add_argument(
        "--case-sensitive", action="store_true", help="compare words as they are (gensim: upper)"
    )


def _add_table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--table",
        action="append",
        type=parse_table_flag,
        metavar="NAME=PATH[,key=value...]",
        help="a table to serve (repeatable); keys: format, vocab, labels, tensor, width, "
        "limit, unicode_errors, case_insensitive, counts, checkpoints (checkpoints=true: PATH "
        "is a directory of checkpoints), and the index options (index, index_path, hnsw_m, "
        "ef_construction, ef_search, max_ef_search, nlist, nprobe, max_nprobe, pq_m, pq_bits: "
        "see the README). Without any, the bundled MiniLM table is served as "
        "'minilm'.",
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
    parser.add_argument("--counts", type=Path, help="'token count' lines: the count column")
    parser.add_argument(
        "--unicode-errors",
        choices=get_args(UnicodeErrors),
        help="tokens that are not valid UTF-8: strict (default: refuse), replace, ignore",
    )


def serve(args: argparse.Namespace) -> int:
    """Bind the port, load every table (answering 503 meanwhile; a bad file stops start-up),
    then serve until stopped; with `workers`, as several processes on the one port."""
    from service.server.serve import serve as run

    return run(args)


def _file_spec(args: argparse.Namespace) -> TableSpec:
    if args.path is None:
        spec = default_table()
        counts = getattr(args, "counts", None)
        return spec if counts is None else spec.model_copy(update={"counts": counts})
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
        "counts": getattr(args, "counts", None),
    }
    return TableSpec(**{k: v for k, v in values.items() if v is not None})


def info(args: argparse.Namespace) -> int:
    """Print a table file's shape and a few tokens as JSON."""
    from service.engine.search.cosine import CosineSearch

    spec = _file_spec(args)
    table = read_spec(spec)
    search = CosineSearch(table)
    facts = {
        "source": table.source,
        "rows": table.rows,
        "width": table.width,
        "parameters": table.parameters,
        "bytes": search.nbytes,
        "zero_rows": search.zero_rows,
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


def diagnose(args: argparse.Namespace) -> int:
    """Print the /diagnostics answer for a table file."""
    from service.operations.diagnostics import diagnostics_answer
    from service.schemas.diagnostics import DiagnosticsRequest

    reference: Any = "default"
    if args.no_reference:
        reference = None
    elif args.reference_pattern is not None:
        reference = {"pattern": args.reference_pattern}
    elif args.reference_token:
        reference = {"tokens": args.reference_token}
    body = _request(
        DiagnosticsRequest,
        reference=reference,
        fraction=args.fraction,
        tokens=args.token,
        limit=args.suspects,
        offset=args.offset,
    )
    return _print(diagnostics_answer(*_served(args), body))


def evaluate(args: argparse.Namespace) -> int:
    """Print the /evaluate answer for a table file."""
    from service.operations.diagnostics import evaluation_answer
    from service.schemas.diagnostics import EvaluateRequest

    values: dict[str, Any] = {
        "restrict": args.restrict,
        "case_insensitive": not args.case_sensitive,
    }
    if args.builtin is not None:
        values["builtin"] = args.builtin
    else:
        kind, path = ("analogies", args.analogies) if args.analogies else ("pairs", args.pairs)
        values[kind] = path.read_text(encoding="utf-8")
    return _print(evaluation_answer(*_served(args), _request(EvaluateRequest, **values)))


def _served(args: argparse.Namespace) -> tuple[Any, Any]:
    """The table file loaded as the server would serve it, and the configured limits.

    BLAS gets the server's thread count too: the first component's float32 sums depend on how
    BLAS splits them, and the report should be the server's to the last digit.
    """
    from service.engine.threads import limit_compute_threads
    from service.loading.registry import Registry
    from service.operations.limits import Limits

    settings = load_settings()
    limit_compute_threads(settings.compute_threads)
    spec = _file_spec(args)
    served = Registry().load(spec.name, lambda: read_spec(spec), spec.case_insensitive)
    return served, Limits(settings)


def _request(model: Any, **values: Any) -> Any:
    """The request model, validated as the endpoint validates it."""
    try:
        return model.model_validate(values)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValueError(f"invalid request: {problems}") from None


def _print(answer: Any) -> int:
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    return 0


def tokenize(table: EmbeddingTable, texts: list[str]) -> int:
    """Print how the table splits each text, as /tokenize answers it."""
    from service.engine.tables.text import text_tokenizer
    from service.operations.serialize import split_payload

    splitter = text_tokenizer(table)
    splits = [split_payload(table, splitter.split(text), None) for text in texts]
    answer = {"tokenizer": splitter.kind, **splits[0]} if len(splits) == 1 else splits
    return _print(answer)


def prepare(args: argparse.Namespace) -> int:
    """Write a table file's prepared folder."""
    from service.cli.tables import prepare as prepare_table

    return prepare_table(args, _file_spec(args))


def index(args: argparse.Namespace) -> int:
    """Build an approximate index of a table file."""
    from service.cli.tables import build_index_command

    return build_index_command(args, _file_spec(args))


def train_demo(args: argparse.Namespace) -> int:
    """Train the demo word2vec and print what it wrote, as JSON."""
    from dataclasses import asdict

    from service.cli.train_demo import DemoOptions
    from service.cli.train_demo import train_demo as train

    options = DemoOptions(
        epochs=args.epochs,
        dim=args.dim,
        snapshots_per_epoch=args.snapshots_per_epoch,
        seed=args.seed,
        corpus=args.corpus,
    )
    report = asdict(train(args.out, options))
    report["serve"] = f"embedding-service serve --table demo={args.out},checkpoints=true"
    return _print(report)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a sub-command; bad input ends with one clear line and exit code 2."""
    from service.cli.train_demo import MissingExtra

    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"serve": serve, "info": info, "query": query, "diagnose": diagnose}
    commands |= {"evaluate": evaluate, "prepare": prepare, "index": index, "train-demo": train_demo}
    command = commands[args.command]
    try:
        return command(args)
    except EngineError as error:
        return _fail(error.message)
    except MissingExtra as error:
        return _fail(str(error))
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
