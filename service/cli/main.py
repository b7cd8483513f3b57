"""The command-line entry point: serve tables, describe a table file, or answer one query."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from service.cli import answers, tables, train_demo
from service.cli.options import add_path, add_table, parse_table_flag
from service.engine.errors import EngineError
from service.errors import invalid_request
from service.schemas.diagnostics import BUILTIN_SETS

PROGRAM = "embedding-service"
# The exit status of a command stopped by Ctrl-C, as a shell reports one: 128 + SIGINT.
INTERRUPTED = 130

__all__ = ["build_parser", "main", "parse_table_flag"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(prog=PROGRAM, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_serve_parser(commands)
    add_path(commands.add_parser("info", help="describe a table file without serving it"))
    _add_query_parser(commands)
    _add_diagnose_parser(commands)
    _add_evaluate_parser(commands)
    tables.add_commands(commands)
    train_demo.add_command(commands)
    return parser


def _add_serve_parser(commands: Any) -> None:
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
    serve.add_argument(
        "--table",
        action="append",
        type=parse_table_flag,
        metavar="NAME=PATH[,key=value...]",
        help="a table to serve (repeatable); keys: format, vocab, labels, tensor, width, "
        "limit, unicode_errors, case_insensitive, counts, checkpoints (checkpoints=true: PATH "
        "is a directory of checkpoints), and the index options (index, index_path, hnsw_m, "
        "ef_construction, ef_search, max_ef_search, nlist, nprobe, max_nprobe, probe_margin, "
        "pq_m, pq_bits, "
        "k_factor, max_k_factor: "
        "see docs/settings.md). Without any, the bundled MiniLM table is served as 'minilm', "
        "and WordLlama's static embedding model as 'wordllama'.",
    )
    serve.add_argument("--config", type=Path, help="a TOML or JSON settings file")


def _add_query_parser(commands: Any) -> None:
    query = commands.add_parser(
        "query", help="answer one query on a table and print it as the HTTP API answers it"
    )
    operations = query.add_subparsers(dest="operation", required=True, metavar="OPERATION")
    neighbors = operations.add_parser("neighbors", help="top-k cosine neighbours of tokens")
    neighbors.add_argument("tokens", nargs="+", help="a token (several: a batch, in order)")
    neighbors.add_argument("-k", type=int, default=10, help="results per token (10)")
    analogy = operations.add_parser("analogy", help="positive minus --negative tokens")
    analogy.add_argument("positive", nargs="+", help="the positive tokens")
    analogy.add_argument(
        "--negative", action="append", default=[], help="a negative token (repeatable)"
    )
    analogy.add_argument("-k", type=int, default=10, help="results (10)")
    analogy.add_argument("--method", choices=["add", "mul"], default="add", help="3CosAdd or Mul")
    similarity = operations.add_parser("similarity", help="the cosine of two tokens")
    similarity.add_argument("first", help="a token")
    similarity.add_argument("second", help="another token")
    tokenize = operations.add_parser("tokenize", help="how the table's tokenizer splits text")
    tokenize.add_argument("texts", nargs="+", help="a text (several: a batch, in order)")
    for parser in (neighbors, analogy, similarity, tokenize):
        add_table(parser)


def _add_diagnose_parser(commands: Any) -> None:
    diagnose = commands.add_parser(
        "diagnose", help="print a table's diagnostics (suspect rows), as /diagnostics answers"
    )
    add_table(diagnose)
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
        "evaluate", help="gensim's analogy or word-pair figures for a table, as /evaluate"
    )
    add_table(evaluate)
    source = evaluate.add_mutually_exclusive_group(required=True)
    source.add_argument("--analogies", type=Path, help="a questions-words.txt format file")
    source.add_argument("--pairs", type=Path, help="a word<TAB>word<TAB>score file")
    source.add_argument("--builtin", choices=BUILTIN_SETS, help="a set shipped with the service")
    evaluate.add_argument("--restrict", type=int, default=300_000, help="restrict_vocab (300000)")
    evaluate.add_argument(
        "--case-sensitive", action="store_true", help="compare words as they are (gensim: upper)"
    )


def serve(args: argparse.Namespace) -> int:
    """Bind the port, load every table (answering 503 meanwhile; a bad file stops start-up),
    then serve until stopped; with `workers`, as several processes on the one port."""
    from service.server.serve import serve as run

    return run(args)


def query(args: argparse.Namespace) -> int:
    """Answer one neighbours, analogy, similarity or tokenize query, printed as JSON."""
    return answers.print_answer(args, *answers.query_body(args))


def diagnose(args: argparse.Namespace) -> int:
    """Print the /diagnostics answer for a table."""
    return answers.print_answer(args, "diagnostics", answers.diagnostics_body(args))


def evaluate(args: argparse.Namespace) -> int:
    """Print the /evaluate answer for a table."""
    return answers.print_answer(args, "evaluate", answers.evaluation_body(args))


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": serve,
    "info": answers.info,
    "query": query,
    "diagnose": diagnose,
    "evaluate": evaluate,
    "prepare": tables.prepare,
    "index": tables.build_index_command,
    "train-demo": train_demo.command,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run a sub-command; bad input ends with one clear line and exit code 2."""
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return COMMANDS[args.command](args)
    except EngineError as error:
        return _fail(error.message)
    except (answers.Refused, train_demo.MissingExtra) as error:
        return _fail(str(error))
    except ValidationError as error:
        problems = [dict(problem) for problem in error.errors(include_url=False)]
        return _fail(f"invalid settings: {invalid_request(problems).message}")
    except (FileNotFoundError, ValueError) as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        print(f"{PROGRAM}: {_interrupted(args)}", file=sys.stderr)
        return INTERRUPTED


def _interrupted(args: argparse.Namespace) -> str:
    """What Ctrl-C left: prepare and index build put what they write in place whole at their
    end, so an interrupted one changed nothing."""
    if args.command in ("prepare", "index"):
        return f"interrupted: nothing was written, {args.out} is as it was"
    return "interrupted"


def _fail(message: str) -> int:
    print(f"{PROGRAM}: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
