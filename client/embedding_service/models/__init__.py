"""The client's answers (and a few inputs) as frozen dataclasses, one module per feature.

Answers mirror the service's JSON field for field (its OpenAPI document; tests/client/
test_model_parity.py fails on a field either side lacks), with vectors as
numpy float32 arrays instead of base64 text. Nothing here imports anything but numpy.
"""

from embedding_service.models.diagnostics import (
    AnalogyEvaluation,
    CorrelationFigure,
    CountBin,
    CountFigures,
    Diagnostics,
    Indicator,
    NormSummary,
    PairsEvaluation,
    RowReport,
    SectionQuestions,
    SectionScore,
    SpearmanFigure,
    TokenReport,
)
from embedding_service.models.projection import ProjectedPoint, ProjectedVector, Projection
from embedding_service.models.ranking import Cosines, Rank, Ranks
from embedding_service.models.search import Analogy, Neighbor, Neighbors, Text
from embedding_service.models.tables import Checkpoint, IndexInfo, TableInfo
from embedding_service.models.text import Detokenized, Piece, Tokenized, TokenizedWord
from embedding_service.models.training import (
    CheckpointSummary,
    Drift,
    DriftCounts,
    MovedRow,
    TokenDrift,
    Trajectory,
    TrajectoryPoint,
    VersionInfo,
)
from embedding_service.models.vectors import (
    Lookup,
    Score,
    ScoredToken,
    Similarities,
    SimilarityMatrix,
    TargetScore,
)

__all__ = [
    "Analogy",
    "AnalogyEvaluation",
    "Checkpoint",
    "CheckpointSummary",
    "CorrelationFigure",
    "Cosines",
    "CountBin",
    "CountFigures",
    "Detokenized",
    "Diagnostics",
    "Drift",
    "DriftCounts",
    "IndexInfo",
    "Indicator",
    "Lookup",
    "MovedRow",
    "Neighbor",
    "Neighbors",
    "NormSummary",
    "PairsEvaluation",
    "Piece",
    "ProjectedPoint",
    "ProjectedVector",
    "Projection",
    "Rank",
    "Ranks",
    "RowReport",
    "Score",
    "ScoredToken",
    "SectionQuestions",
    "SectionScore",
    "Similarities",
    "SimilarityMatrix",
    "SpearmanFigure",
    "TableInfo",
    "TargetScore",
    "Text",
    "TokenDrift",
    "TokenReport",
    "Tokenized",
    "TokenizedWord",
    "Trajectory",
    "TrajectoryPoint",
    "VersionInfo",
]
