"""Commands that answer one query on a table and print it exactly as the HTTP API answers it.

`query`, `diagnose` and `evaluate` build the request body an HTTP client would send and hand
it to the one door (operations/door.py), over the table loaded as the server loads it, with the
server's settings: the printed JSON is the HTTP answer, to the last digit, and an error is the
envelope's message on one line (exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

import orjson

from service.cli.options import spec_of
from service.config import Settings, TableSpec, load_settings
from service.engine.search.cosine import CosineSearch
from service.engine.tables.model import head_of, model_sizes
from service.engine.threads import limit_compute_threads
from service.loading.registry import Registry
from service.loading.tables import load_spec, read_spec
from service.operations.catalog import OPERATIONS
from service.operations.door import Services, answer
from service.operations.hints import Hint
from service.operations.limits import Limits
from service.runtime.runtime import Runtime


class Refused(Exception):
    """The door answered with an error; the message is the envelope's."""


def query_body(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The operation and the HTTP request body of a `query` command."""
    if args.operation == "neighbors":
        queries = [{"token": token, "k": args.k} for token in args.tokens]
        return "neighbors", queries[0] if len(queries) == 1 else {"queries": queries}
    if args.operation == "analogy":
        body = {"positive": args.positive, "negative": args.negative, "k": args.k}
        return "analogy", {**body, "method": args.method}
    if args.operation == "similarity":
        return "similarity", {"pairs": [[args.first, args.second]]}
    texts = args.texts
    return "tokenize", {"text": texts[0]} if len(texts) == 1 else {"texts": texts}


def diagnostics_body(args: argparse.Namespace) -> dict[str, Any]:
    """The /diagnostics request body of a `diagnose` command."""
    reference: Any = "default"
    if args.no_reference:
        reference = None
    elif args.reference_pattern is not None:
        reference = {"pattern": args.reference_pattern}
    elif args.reference_token:
        reference = {"tokens": args.reference_token}
    body = {"reference": reference, "fraction": args.fraction, "tokens": args.token}
    return {**body, "limit": args.suspects, "offset": args.offset}


def evaluation_body(args: argparse.Namespace) -> dict[str, Any]:
    """The /evaluate request body of an `evaluate` command."""
    body: dict[str, Any] = {"restrict": args.restrict, "case_insensitive": not args.case_sensitive}
    if args.builtin is not None:
        return {**body, "builtin": args.builtin}
    kind, path = ("analogies", args.analogies) if args.analogies else ("pairs", args.pairs)
    return {**body, kind: path.read_text(encoding="utf-8")}


def print_answer(args: argparse.Namespace, operation: str, body: dict[str, Any]) -> int:
    """Answer `body` on the command's table and print the JSON answer."""
    answered = asyncio.run(answered_once(spec_of(args), operation, body, load_settings()))
    print(json.dumps(answered, indent=2, ensure_ascii=False))
    return 0


async def answered_once(
    spec: TableSpec, operation: str, body: dict[str, Any], settings: Settings
) -> Any:
    """The door's answer to one request on `spec`'s table (Refused on an error answer)."""
    limit_compute_threads(settings.compute_threads)
    registry = Registry()
    load_spec(registry, spec, settings.search_kernel)
    runtime = Runtime(settings)
    runtime.start()
    try:
        services = Services(registry, Limits(settings), runtime)
        request = orjson.dumps(body)
        encoded = await answer(
            OPERATIONS[operation], spec.name, request, "application/json", services
        )
    finally:
        await runtime.close()
    decoded = orjson.loads(encoded.body)
    if encoded.status != 200:
        raise Refused(command_line_message(decoded["error"]))
    return decoded


def command_line_message(error: dict[str, Any]) -> str:
    """An error envelope's message, with its hint worded for the command line: a command has
    no `{"text": ...}` to send, nor a served table's settings."""
    message: str = error["message"]
    if "hint" not in error:
        return message
    hint = Hint.of_json(error["hint"])
    return message.removesuffix(hint.for_request()) + hint.for_command_line()


def info(args: argparse.Namespace) -> int:
    """Print a table file's shape and a few tokens as JSON."""
    table = read_spec(spec_of(args))
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
        "head": head_of(table),
    }
    if table.model is not None:
        facts["model"] = model_sizes(table)
    print(json.dumps(facts, indent=2, ensure_ascii=False))
    return 0
