"""Every plan function under its client method's name: the API Client and AsyncClient expose."""

from embedding_service.plans.diagnostics import diagnostics, evaluate
from embedding_service.plans.embedding import embed
from embedding_service.plans.projection import project, projection
from embedding_service.plans.ranking import cosines, rank
from embedding_service.plans.search import analogy, neighbors
from embedding_service.plans.tables import table, tables
from embedding_service.plans.text import detokenize, tokenize
from embedding_service.plans.training import drift, trajectory
from embedding_service.plans.vectors import lookup, score, similarity

__all__ = [
    "analogy",
    "cosines",
    "detokenize",
    "diagnostics",
    "drift",
    "embed",
    "evaluate",
    "lookup",
    "neighbors",
    "project",
    "projection",
    "rank",
    "score",
    "similarity",
    "table",
    "tables",
    "tokenize",
    "trajectory",
]
