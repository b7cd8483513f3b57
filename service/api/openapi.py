"""The query routes' request bodies in the OpenAPI document, with an example of every form.

A query route takes its body raw (the door validates it), so FastAPI cannot describe it; each
route names its operation here instead, and `document_bodies` adds the operation's model (the
same TypeAdapter the door validates with) to the document's components. Every example is a
valid request on the default table, one per form of the query, so "Try it out" in /docs sends
something the service answers.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from service.operations.catalog import OPERATIONS, Operation
from service.operations.embedding import EMBED, EMBEDDINGS

COMPONENTS = "#/components/schemas/{model}"

# The top of /docs (Swagger UI renders it as Markdown): where a Python program starts.
DESCRIPTION = """\
**Python client.** The repository's `client/` folder is `embedding_service` (`pip install
./client`: httpx and numpy only), a typed client of every route below (`Client`, and `AsyncClient`
with the same methods; batches cut to the server's limits, 429 and 503 retried), and
`RemoteKeyedVectors`, gensim's `KeyedVectors` over HTTP:

```python
from embedding_service import Client

with Client("http://127.0.0.1:8000") as client:
    print(client.neighbors("minilm", "king", k=3).tokens)   # ['kings', 'queen', 'monarch']
```

Its guide is `docs/client.md` in the source tree. [The explorer](explorer) is a page over
these same routes.
"""

EXAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    "neighbors": {
        "token": {"token": "king", "k": 5},
        "id": {"id": 2332, "k": 5, "exclude": ["kings"]},
        "text": {"text": "unbelievably", "pieces": "mean", "k": 5},
        "restricted": {"token": "paris", "k": 5, "restrict": 10000},
        "batch": {"queries": [{"token": "king"}, {"token": "queen", "k": 3}]},
        "among": {
            "queries": [{"id": 2332, "k": 3}, {"id": 3035, "k": 3}],
            "among": [2332, 3035, 5465, 2450, 2158, 2308],
        },
    },
    "analogy": {
        "add": {"positive": ["king", "woman"], "negative": ["man"], "k": 3},
        "mul": {"positive": ["paris", "germany"], "negative": ["france"], "method": "mul"},
        "weighted": {"positive": [{"token": "king", "weight": 2.0}, "woman"], "negative": ["man"]},
        "negative only": {"negative": ["man", "woman"], "k": 3},
        "batch": {"queries": [{"positive": ["king", "woman"], "negative": ["man"], "k": 1}]},
    },
    "lookup": {
        "tokens": {"tokens": ["king", "queen"]},
        "ids": {"ids": [2332, 3035], "include_vector": False},
        "base64": {"tokens": ["king"], "encoding": "base64"},
        "text": {"tokens": [{"text": "running"}]},
    },
    "similarity": {
        "pairs": {"pairs": [["king", "queen"], ["man", "woman"]]},
        "matrix": {"tokens": ["king", "queen", "paris"]},
    },
    "score": {
        "text": {"text": "king", "k": 5, "softmax": True, "target": "queen"},
    },
    "cosines": {
        "token": {"token": "king"},
        "page": {"id": 2332, "offset": 1000, "limit": 100},
        "analogy": {"positive": ["king", "woman"], "negative": ["man"]},
        "mul": {"positive": ["paris", "germany"], "negative": ["france"], "method": "mul"},
    },
    "rank": {
        "ranks": {"token": "king", "others": ["queen", "paris", "banana"]},
        "closer rows": {"token": "king", "others": ["queen"], "closer_rows": {"limit": 10}},
    },
    "projection": {
        "first": {"points": 500},
        "words": {"points": 500, "selection": "words"},
        "random": {"points": 500, "selection": "random", "seed": 3, "dims": 3},
        "tokens": {"selection": {"tokens": ["king", "queen", "man", "woman"]}},
        "fitted": {"selection": {"tokens": ["king", "queen", "man", "woman"]}, "fit": "selection"},
    },
    "project": {
        "tokens": {"tokens": ["king", "queen"]},
    },
    "diagnostics": {
        "default": {"limit": 10},
        "tokens": {"tokens": ["king", "[unused7]"], "limit": 5},
        "by norm": {"reference": None, "limit": 10},
    },
    "evaluate": {
        "builtin": {"builtin": "questions-words", "restrict": 30000},
        "pairs": {"pairs": "king\tqueen\t9\nman\twoman\t8\napple\tking\t1\n"},
        "questions": {
            "analogies": ": family\nking queen man woman\nboy girl brother sister\n",
            "questions": True,
            "dummy4unknown": True,
        },
    },
    "tokenize": {
        "text": {"text": "Embeddings are lookup tables"},
        "texts": {"texts": ["running", "unbelievably"]},
        "detokenize": {"detokenize": [2332, 1998, 3035]},
    },
    "trajectory": {
        "tokens": {"tokens": ["king"]},
    },
    "drift": {
        "default": {"tokens": ["king"], "limit": 10},
    },
    "embeddings": {
        "text": {"model": "wordllama", "input": "Embeddings are lookup tables"},
        "texts": {"model": "wordllama", "input": ["a cat sat", "a dog ran"]},
        "token ids": {"model": "wordllama", "input": [[450, 6635, 3290]]},
        "base64, 64-d": {
            "model": "wordllama",
            "input": "a cat sat",
            "encoding_format": "base64",
            "dimensions": 64,
        },
    },
    "embed": {
        "text": {"inputs": "Embeddings are lookup tables"},
        "texts": {"inputs": ["a cat sat", "a dog ran"], "normalize": False},
    },
}


def body_model(operation: Operation) -> str:
    """The component name of an operation's request body."""
    return f"{operation.name.capitalize()}Body"


def request_body(operation: Operation) -> dict[str, Any]:
    """The route's `openapi_extra`: its JSON body, by reference, with its examples."""
    examples = {name: {"value": value} for name, value in EXAMPLES[operation.name].items()}
    schema = {"$ref": COMPONENTS.format(model=body_model(operation))}
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": schema, "examples": examples}},
        }
    }


def document_bodies(app: FastAPI) -> None:
    """Make the app's OpenAPI document hold every operation's body model."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for operation in (*OPERATIONS.values(), EMBEDDINGS, EMBED):
            schema = operation.body.json_schema(ref_template=COMPONENTS)
            schemas.update(schema.pop("$defs", {}))
            schemas[body_model(operation)] = schema
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
