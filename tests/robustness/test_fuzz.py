"""Fuzzing the real server from its own OpenAPI document with schemathesis.

Every operation gets valid and invalid requests (schemathesis' positive and negative modes),
and every response must pass all of schemathesis' default checks: no 5xx, a documented status,
content type and headers, a body that conforms to the documented schema, invalid data refused
and valid data accepted. The server runs the small test table, so that generated vectors of
four components reach the engine rather than stopping at the width check, and WordLlama's
static model, so that generated texts reach its tokenizer and pooling.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from service.config import default_static_table
from tests.conftest import SMALL_TOKENS, small_vectors
from tests.robustness.conftest import write_table
from tests.robustness.servers import server_process

pytestmark = pytest.mark.slow

EXAMPLES = 400
ADMIN_KEY = "fuzz-admin"
# A request the schema calls valid may still break a rule the schema cannot state: the table's
# width, a configured limit, a zero vector, a file that does not load (422, with the rule's own
# type: the check below makes sure it is never a ValidationError), or the body size limit (413).
ACCEPTED = ["2xx", "401", "403", "404", "409", "413", "422", "429"]
# Refusing an invalid request for its size is refusing it too.
REFUSED = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
CONFIG = SchemathesisConfig.from_dict(
    {
        # The admin key, for the operations the OpenAPI document says need the Bearer scheme;
        # schemathesis also checks that they refuse requests without it (ignored_auth).
        "auth": {"openapi": {"bearer": {"bearer": ADMIN_KEY}}},
        "checks": {
            "positive_data_acceptance": {"expected-statuses": ACCEPTED},
            "negative_data_rejection": {"expected-statuses": REFUSED},
        },
    }
)


def schema_valid_data_passes_validation(
    ctx: object, response: schemathesis.Response, case: schemathesis.Case
) -> None:
    """Schema-valid data is never refused as a ValidationError: schema and validator agree."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if response.status_code == 422:
        error = response.json()["error"]
        assert error["type"] != "ValidationError", f"schema-valid request refused: {error}"


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    """The OpenAPI document of a running server with the admin routes on."""
    folder = tmp_path_factory.mktemp("fuzz")
    table = write_table(folder / "tables", small_vectors())
    # The small table, and WordLlama's static model for the text embedding routes.
    tables = [{"name": "small", "path": str(table)}, default_static_table().model_dump(mode="json")]
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps(tables),
        "EMBEDDING_SERVICE_ADMIN_KEY": ADMIN_KEY,
        "EMBEDDING_SERVICE_ADMIN_TABLES_DIR": str(folder / "added"),
        "EMBEDDING_SERVICE_DRAIN_SECONDS": "0",
    }
    (folder / "added").mkdir()
    with server_process(env) as (_, base):
        yield schemathesis.openapi.from_url(f"{base}/openapi.json", config=CONFIG)


# Every operation the server documents; a test below fails when one is missing here.
OPERATIONS = [
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/v1/tables"),
    ("GET", "/v1/tables/{table}"),
    ("GET", "/v1/limits"),
    ("POST", "/v1/tables/{table}/lookup"),
    ("POST", "/v1/tables/{table}/neighbors"),
    ("POST", "/v1/tables/{table}/analogy"),
    ("POST", "/v1/tables/{table}/similarity"),
    ("POST", "/v1/tables/{table}/score"),
    ("POST", "/v1/tables/{table}/cosines"),
    ("POST", "/v1/tables/{table}/rank"),
    ("POST", "/v1/tables/{table}/projection"),
    ("POST", "/v1/tables/{table}/project"),
    ("POST", "/v1/tables/{table}/diagnostics"),
    ("POST", "/v1/tables/{table}/evaluate"),
    ("POST", "/v1/tables/{table}/tokenize"),
    ("POST", "/v1/tables/{table}/trajectory"),
    ("POST", "/v1/tables/{table}/drift"),
    ("POST", "/v1/admin/tables/{table}/reload"),
    ("POST", "/v1/admin/tables"),
    ("DELETE", "/v1/admin/tables/{table}"),
    ("POST", "/v1/embeddings"),
    ("POST", "/embed"),
]
# Operations with a body, so that invalid requests can be made for them (the table name in a
# path is any string: there is no invalid one to make).
WITH_BODY = [
    (method, path) for method, path in OPERATIONS if method == "POST" and "reload" not in path
]


def test_every_documented_operation_is_fuzzed(api_schema: schemathesis.BaseSchema) -> None:
    documented = {
        (operation.ok().method.upper(), operation.ok().path)
        for operation in api_schema.get_all_operations()
    }
    assert documented == set(OPERATIONS)


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_valid_requests(api_schema: schemathesis.BaseSchema, method: str, path: str) -> None:
    fuzz(api_schema, method, path, GenerationMode.POSITIVE)


@pytest.mark.parametrize(("method", "path"), WITH_BODY)
def test_invalid_requests(api_schema: schemathesis.BaseSchema, method: str, path: str) -> None:
    fuzz(api_schema, method, path, GenerationMode.NEGATIVE)


def fuzz(api_schema: schemathesis.BaseSchema, method: str, path: str, mode: GenerationMode) -> None:
    """Run EXAMPLES generated requests of one operation through every default check."""
    operation = api_schema[path][method]
    # Most requests name the served table; unknown tables are covered by the API tests.
    table = {"path_parameters": {"table": "small"}} if "{table}" in path else {}
    strategy = operation.as_strategy(generation_mode=mode, **table)

    @given(case=strategy, data=st.data())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case, data: st.DataObject) -> None:
        if mode is GenerationMode.POSITIVE and data.draw(st.booleans(), label="known tokens"):
            case.body = with_known_keys(case.body, data)
        case.call_and_validate(additional_checks=[schema_valid_data_passes_validation])

    check()


# Keys whose strings are tokens, and keys whose integers are row ids.
TOKEN_KEYS = frozenset(
    {"token", "tokens", "pairs", "exclude", "positive", "negative", "target", "text", "texts"}
)
ID_KEYS = frozenset({"id", "ids", "detokenize"})


def with_known_keys(value: Any, data: st.DataObject, key: str = "") -> Any:
    """`value` with every token swapped for one of the table's and every id for a real row.

    Random strings are almost never tokens of the table, so without this nearly every valid
    request would end as UnknownToken before reaching the engine. Swapping keeps the request
    schema-valid: the table's tokens and rows satisfy the same constraints.
    """
    if isinstance(value, dict):
        known = {name: with_known_keys(item, data, name) for name, item in value.items()}
        if isinstance(known.get("model"), str):  # /v1/embeddings: the served static model
            known["model"] = "wordllama"
        return known
    if isinstance(value, list):
        return [with_known_keys(item, data, key) for item in value]
    if isinstance(value, str) and key in TOKEN_KEYS:
        return data.draw(st.sampled_from(SMALL_TOKENS))
    if isinstance(value, int) and not isinstance(value, bool) and key in ID_KEYS:
        return data.draw(st.integers(0, len(SMALL_TOKENS) - 1))
    return value
