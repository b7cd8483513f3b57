"""Table routes: what is served, and the facts of one table."""

from __future__ import annotations

from fastapi import APIRouter, Request

from service.api.deps import RegistryDep, TableDep
from service.engine.served import ServedTable
from service.engine.tables.embedding import StaticEmbedding
from service.engine.tables.model import head_of, model_sizes
from service.schemas.embedding import StaticEmbeddingInfo
from service.schemas.tables import (
    CheckpointInfo,
    IndexInfo,
    LimitsResponse,
    ModelSizes,
    TableInfo,
    TableList,
)

router = APIRouter(prefix="/v1", tags=["tables"])


@router.get("/tables")
def list_tables(registry: RegistryDep) -> TableList:
    """Every loaded table with its size and provenance."""
    return TableList(tables=[describe(served) for served in registry.served()])


@router.get("/tables/{table}")
def table_info(served: TableDep) -> TableInfo:
    """One table: rows, width, parameters, bytes held, index type, source, load time."""
    return describe(served)


@router.get("/limits")
def limits(request: Request) -> LimitsResponse:
    """The request limits this server enforces, so clients can size their batches."""
    settings = request.app.state.settings
    return LimitsResponse(**{name: getattr(settings, name) for name in LimitsResponse.model_fields})


def describe(served: ServedTable) -> TableInfo:
    """The public facts of a served table."""
    table, versions = served.table, served.versions
    return TableInfo(
        name=served.name,
        rows=table.rows,
        width=table.width,
        parameters=table.parameters,
        bytes=served.search.nbytes,
        index_type=served.search.kind,
        index=IndexInfo(**served.indexing.facts()),
        zero_rows=served.search.zero_rows,
        source=table.source,
        loaded_at=served.loaded_at,
        load_seconds=served.load_seconds,
        version=served.version,
        metadata_columns=list(table.metadata),
        case_insensitive=served.case_insensitive,
        checkpoints=[CheckpointInfo(**served.versions.describe(i)) for i in range(versions.count)],
        head=head_of(table),
        model=None if table.model is None else ModelSizes(**model_sizes(table)),
        embedding=None if table.static is None else static_info(table.static),
    )


def static_info(static: StaticEmbedding) -> StaticEmbeddingInfo:
    """A static model's recipe as GET /v1/tables/{table} says it."""
    facts = static.to_json()
    return StaticEmbeddingInfo(**facts, token_weights=static.weights is not None)
