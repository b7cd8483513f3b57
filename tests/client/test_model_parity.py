"""The client's answers against the service's: a field on one side only fails.

The client may not import the service (import-linter), so its answers are dataclasses of its
own. This holds them to the answers the service documents (every schema its served OpenAPI
document reaches from a route's success response), field by field under their JSON names.
Where the client reads an answer in another shape (base64 as numpy arrays, a list of items as
columns, a batch as a list of answers), the reshaping is named here, with the fields it reads.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from embedding_service import models
from service.api.app import create_app
from service.config import Settings
from service.loading.registry import Registry


@dataclass(frozen=True)
class Mirror:
    """Client classes that read one documented schema; `reshaped` maps a client field to the
    schema's fields it is read from (none: it comes from another schema, named there), and
    `elsewhere` the schema's fields another client class reads, and which."""

    client: tuple[type, ...]
    schema: str
    reshaped: dict[str, tuple[str, ...]] = field(default_factory=dict)
    elsewhere: dict[str, str] = field(default_factory=dict)


# The schemas a client class reads field for field, under the same JSON names.
SAME_FIELDS = {
    "Neighbor": models.Neighbor,
    "NeighborsResponse": models.Neighbors,
    "ScoreResponse": models.Score,
    "ScoredToken": models.ScoredToken,
    "TargetScore": models.TargetScore,
    "RankResponse": models.Ranks,
    "RankItem": models.Rank,
    "ProjectionResponse": models.Projection,
    "ProjectedPoint": models.ProjectedPoint,
    "ProjectedVector": models.ProjectedVector,
    "DiagnosticsResponse": models.Diagnostics,
    "Indicator": models.Indicator,
    "RowReport": models.RowReport,
    "TokenReport": models.TokenReport,
    "NormSummary": models.NormSummary,
    "CountFigures": models.CountFigures,
    "CountBin": models.CountBin,
    "SpearmanFigure": models.SpearmanFigure,
    "AnalogyEvaluationResponse": models.AnalogyEvaluation,
    "PairsEvaluationResponse": models.PairsEvaluation,
    "SectionScore": models.SectionScore,
    "SectionQuestions": models.SectionQuestions,
    "CorrelationFigure": models.CorrelationFigure,
    "TokenizedWord": models.TokenizedWord,
    "DetokenizeResponse": models.Detokenized,
    "TrajectoryResponse": models.Trajectory,
    "TrajectoryPoint": models.TrajectoryPoint,
    "CheckpointSummary": models.CheckpointSummary,
    "DriftResponse": models.Drift,
    "VersionInfo": models.VersionInfo,
    "MovedRow": models.MovedRow,
    "TokenDrift": models.TokenDrift,
    "DriftCounts": models.DriftCounts,
    "TableInfo": models.TableInfo,
    "IndexInfo": models.IndexInfo,
    "CheckpointInfo": models.Checkpoint,
}
# A batch's results become a list of the client's single answers, which take what every
# result shares (the matches, the tokenizer) from the batch response.
FROM_THE_BATCH = {"matched": (), "tokenizer": ()}
LOOKUP_COLUMNS = ("tokens", "ids", "norms", "vectors", "metadata")
RESHAPED = [
    Mirror((models.Neighbors,), "NeighborList", FROM_THE_BATCH),
    Mirror((models.Neighbors,), "NeighborsBatchResponse", {"neighbors": ()}, {"results": "list"}),
    Mirror((models.Tokenized,), "TokenizedText", {"vectors": (), **FROM_THE_BATCH}),
    Mirror(
        (models.Tokenized,),
        "TokenizeBatchResponse",
        {"text": (), "pieces": (), "words": (), "vectors": ()},
        {"results": "list"},
    ),
    # A text's pieces' rows, one array (the pieces' vectors are read into it).
    Mirror((models.Tokenized,), "TokenizeResponse", {"vectors": ()}),
    Mirror((models.Piece,), "Piece", elsewhere={"vector": "vectors", "vector_b64": "vectors"}),
    # The items as columns, the vectors one array.
    Mirror((models.Lookup,), "LookupResponse", dict.fromkeys(LOOKUP_COLUMNS, ()), {"items": ""}),
    Mirror(
        (models.Lookup,),
        "LookupItem",
        {"tokens": ("token",), "ids": ("id",), "norms": ("norm",), "matched": ()}
        | {"vectors": ("vector", "vector_b64")},
    ),
    # The pairs' cosines as one array; the matrix form is a class of its own.
    Mirror((models.Similarities, models.SimilarityMatrix), "SimilarityResponse", {"scores": ()}),
    Mirror(
        (models.Similarities,),
        "PairScore",
        {"pairs": ("tokens",), "scores": ("score",), "matched": ()},
    ),
    # The scores decoded from base64, their count the array's length.
    Mirror((models.Cosines,), "CosinesResponse", {"scores": ("scores_b64", "count")}),
]
MIRRORS = [Mirror((cls,), schema) for schema, cls in SAME_FIELDS.items()] + RESHAPED

# Documented answers the client reads in no class of its own, and why.
UNMIRRORED = {
    "TableList": "Client.tables answers its list of TableInfo",
    "ModelSizes": "TableInfo.model, a dict as the service writes it",
    "StaticEmbeddingInfo": "TableInfo.embedding, a dict as the service writes it",
    "LimitsResponse": "the client reads max_batch alone, to size its chunks (batching.py)",
    "ProjectResponse": "Client.project answers its list of points",
    "EmbeddingsResponse": "Client.embed answers the vectors as one float32 array",
    "Embedding": "Client.embed answers the vectors as one float32 array",
    "Usage": "Client.embed answers the vectors alone",
    "Health": "a probe's answer, for orchestrators",
    "Readiness": "a probe's answer, for orchestrators",
}
# The client's own inputs: what a caller builds, not an answer.
INPUTS = {models.Text, models.Analogy}


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict[str, Any]]:
    """Every schema the served OpenAPI document reaches from a route's success answer."""
    app = create_app(Settings(tables=[]), registry=Registry(expected=[]))
    document = app.openapi()
    components = document["components"]["schemas"]
    reached: dict[str, dict[str, Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if reference is not None:
                name = reference.rsplit("/", 1)[1]
                if name not in reached:
                    reached[name] = components[name]
                    walk(components[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for operations in document["paths"].values():
        for operation in operations.values():
            for status in ("200", "201"):
                walk(operation["responses"].get(status, {}))
    return reached


def json_fields(classes: tuple[type, ...]) -> set[str]:
    """The JSON names of the client classes' fields (a property is no field)."""
    return {
        item.metadata.get("json", item.name)
        for cls in classes
        for item in dataclasses.fields(cls)
        if item.init
    }


@pytest.mark.parametrize("mirror", MIRRORS, ids=lambda mirror: mirror.schema)
def test_a_client_answer_has_every_field_of_the_service_answer_and_no_other(
    mirror: Mirror, schemas: dict[str, dict[str, Any]]
) -> None:
    documented = set(schemas[mirror.schema].get("properties", {}))
    read_as = {name for fields in mirror.reshaped.values() for name in fields}
    assert read_as | set(mirror.elsewhere) <= documented, "a reshaping names a field not sent"
    client = json_fields(mirror.client) - set(mirror.reshaped)
    service = documented - read_as - set(mirror.elsewhere)
    assert client - service == set(), f"only the client has {client - service}"
    assert service - client == set(), f"only {mirror.schema} has {service - client}"


def test_every_documented_answer_has_its_client_class_or_a_reason(
    schemas: dict[str, dict[str, Any]],
) -> None:
    mirrored = {mirror.schema for mirror in MIRRORS}
    answers = set(schemas) - {"ErrorResponse", "ErrorDetail"}  # errors.py: typed exceptions
    assert answers - mirrored - set(UNMIRRORED) == set()
    assert (mirrored | set(UNMIRRORED)) - answers == set()  # nothing named that is not served


def test_every_client_answer_mirrors_a_documented_one() -> None:
    classes = {getattr(models, name) for name in models.__all__}
    mirrored = {cls for mirror in MIRRORS for cls in mirror.client}
    assert classes - mirrored - INPUTS == set()
