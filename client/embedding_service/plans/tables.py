"""The tables a server serves, and one table's facts."""

from __future__ import annotations

from embedding_service.decoding import decode, decode_list
from embedding_service.models.tables import TableInfo
from embedding_service.plans import Call, Plan, one_call, table_path


def tables() -> Plan[list[TableInfo]]:
    """Every served table's facts."""
    return one_call(
        Call("GET", "/v1/tables"), lambda answer: decode_list(TableInfo, answer["tables"])
    )


def table(name: str) -> Plan[TableInfo]:
    """One table's facts: rows, width, index, source, checkpoints."""
    return one_call(Call("GET", table_path(name)), lambda answer: decode(TableInfo, answer))
