"""A Python client of the embedding service: typed answers, numpy in and out, batches, retries.

    from embedding_service import Client
    with Client("http://127.0.0.1:8000") as client:
        client.neighbors("minilm", "king", k=3)

`AsyncClient` has the same methods as coroutines; `RemoteKeyedVectors` is gensim's
KeyedVectors API over the same HTTP calls. The package imports only numpy, httpx and the
standard library (never the server's own `service` package), so importing it is light.
"""

from embedding_service.async_client import AsyncClient
from embedding_service.client import Client
from embedding_service.errors import (
    BadAnswer,
    LimitExceeded,
    NotReady,
    Overloaded,
    ServiceError,
    TableNotReady,
    TimedOut,
    Unauthorized,
    UnknownTable,
    UnknownToken,
    Unreachable,
)
from embedding_service.keyedvectors import RemoteKeyedVectors
from embedding_service.models import Analogy, Text

__all__ = [
    "Analogy",
    "AsyncClient",
    "BadAnswer",
    "Client",
    "LimitExceeded",
    "NotReady",
    "Overloaded",
    "RemoteKeyedVectors",
    "ServiceError",
    "TableNotReady",
    "Text",
    "TimedOut",
    "Unauthorized",
    "UnknownTable",
    "UnknownToken",
    "Unreachable",
]
