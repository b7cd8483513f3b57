"""/trajectory and /drift over a checkpoint set and between tables, against numpy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings, TableSpec
from tests.checkpoint_sets import TOKENS, synthetic_rows, write_checkpoint_set

WORDS, COUNTS, ROWS = synthetic_rows()
LAST = len(ROWS) - 1


def write_npy(folder: Path, name: str, tokens: list[str], rows: np.ndarray) -> TableSpec:
    np.save(folder / f"{name}.npy", rows)
    (folder / f"{name}.vocab").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return TableSpec(name=name, path=folder / f"{name}.npy")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, small_table_files: Path) -> Iterator[TestClient]:
    """The run, a table sharing 50 of its tokens (reordered, 16 wide), one sharing none, and
    the 4-wide small table; limits low enough to reach."""
    folder = tmp_path_factory.mktemp("training")
    run = TableSpec(name="run", checkpoints=write_checkpoint_set(folder / "run"))
    rng = np.random.default_rng(3)
    shared = [WORDS[i] for i in range(199, 49, -3)] + ["new"]
    partial = write_npy(folder, "partial", shared, rng.normal(size=(len(shared), 16)))
    stranger = write_npy(folder, "stranger", ["p", "q", "r"], rng.normal(size=(3, 16)))
    small = TableSpec(name="small", path=small_table_files)
    settings = Settings(
        tables=[run, partial, stranger, small],
        max_trajectory_points=300,
        max_trajectory_values=1000,
        max_drift_limit=150,
        max_drift_tokens=4,
        cache_bytes=0,
    )
    with TestClient(create_app(settings)) as client:
        yield client


def post(client: TestClient, path: str, body: dict, status: int = 200) -> dict:
    response = client.post(f"/v1/tables/{path}", json=body)
    assert response.status_code == status, response.text
    return response.json()


def test_trajectory_ends_where_the_projection_puts_the_rows(app: TestClient) -> None:
    tokens = ["w0", "w9", "w150"]
    answer = post(app, "run/trajectory", {"tokens": tokens})
    picture = post(app, "run/projection", {"selection": {"tokens": tokens}})
    assert [c["label"] for c in answer["checkpoints"]] == [f"{c:03d}-step{c}" for c in range(5)]
    for point, placed in zip(answer["points"], picture["points"], strict=True):
        assert point["token"] == placed["token"]
        assert (point["x"][LAST], point["y"][LAST]) == (placed["x"], placed["y"])
        assert point["norm"][LAST] == pytest.approx(placed["norm"], rel=1e-6)
        assert point["metadata"] == {"count": int(COUNTS[point["id"]])}
        start = ROWS[0][point["id"]].astype(np.float64)
        distances = [np.linalg.norm(r[point["id"]] - start) for r in ROWS]
        assert point["distance_to_initial"] == pytest.approx(distances, rel=1e-12)
        assert point["cosine_to_initial"][0] == pytest.approx(1.0)


def test_trajectory_of_points_with_the_summary(app: TestClient) -> None:
    answer = post(app, "run/trajectory", {"points": 200, "dims": 3})
    assert len(answer["points"]) == 200 and len(answer["points"][0]["z"]) == len(ROWS)
    assert (answer["count_column"], answer["counted_rows"]) == ("count", TOKENS)
    first, last = answer["checkpoints"][0], answer["checkpoints"][-1]
    assert first["mean_distance_to_initial"] == 0.0 and "spearman_distance" not in first
    assert last["spearman_distance"]["rho"] > 0.9  # this run's rare rows stall by design
    assert last["spearman_distance"]["n"] == TOKENS


def test_drift_from_the_first_to_the_last_checkpoint_is_numpys(app: TestClient) -> None:
    answer = post(app, "run/drift", {"limit": 7})
    a, b = ROWS[0].astype(np.float64), ROWS[LAST].astype(np.float64)
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    order = np.lexsort((np.arange(TOKENS), cosines))
    assert [r["from_id"] for r in answer["most_moved"]] == order[:7].tolist()
    assert [r["to_id"] for r in answer["least_moved"]] == order[::-1][:7].tolist()
    top = answer["most_moved"][0]
    assert top["cosine"] == pytest.approx(cosines[order[0]], rel=1e-12)
    assert top["count"] == COUNTS[order[0]]
    assert (answer["shared_tokens"], answer["compared_rows"]) == (TOKENS, TOKENS)
    assert answer["mean_cosine"] == pytest.approx(cosines.mean(), rel=1e-12)
    assert (answer["from"]["index"], answer["to"]["index"]) == (0, LAST)
    assert answer["counts"]["rows"] == TOKENS


def test_named_tokens_have_neighbors_answers_at_both_versions(app: TestClient) -> None:
    answer = post(app, "run/drift", {"from": 1, "to": 3, "tokens": ["w2", "w40"], "k": 4})
    for report in answer["tokens"]:
        token = report["token"]
        before = post(app, "run/neighbors", {"token": token, "k": 4, "checkpoint": 1})
        after = post(app, "run/neighbors", {"token": token, "k": 4, "checkpoint": 3})
        assert report["before"] == before["neighbors"]
        assert report["after"] == after["neighbors"]
        names = [{n["token"] for n in side["neighbors"]} for side in (before, after)]
        assert report["overlap"] == len(names[0] & names[1])
        assert set(report["entered"]) == names[1] - names[0]
        assert set(report["left"]) == names[0] - names[1]


def test_drift_between_two_tables_over_their_shared_tokens(app: TestClient) -> None:
    answer = post(app, "run/drift", {"from": "partial", "limit": 150, "tokens": ["w199"]})
    assert answer["shared_tokens"] == 50
    assert answer["from"] | {"loaded": None} == {
        "table": "partial",
        "index": 0,
        "label": "table",
        "source": "partial.npy",
        "rows": 51,
        "loaded": None,
    }
    assert answer["to"]["table"] == "run" and answer["to"]["index"] == LAST
    moved = answer["most_moved"]
    assert len(moved) == 50 and moved[0]["from_id"] != moved[0]["to_id"]
    assert all(WORDS[row["to_id"]] == row["token"] for row in moved)
    assert answer["tokens"][0]["to_id"] == 199 and answer["tokens"][0]["from_id"] == 0


@pytest.mark.parametrize(
    ("path", "body", "status", "kind"),
    [
        ("run/drift", {"from": "stranger"}, 422, "InvalidQuery"),  # no shared tokens
        ("run/drift", {"from": "small"}, 422, "InvalidQuery"),  # 4 wide, not 16
        ("run/drift", {"from": "nosuch"}, 404, "UnknownTable"),
        ("run/drift", {"to": 5}, 404, "UnknownCheckpoint"),
        ("run/drift", {"limit": 151}, 422, "LimitExceeded"),
        ("run/drift", {"tokens": ["w1", "w2", "w3", "w4", "w5"]}, 422, "LimitExceeded"),
        ("run/drift", {"from": "partial", "tokens": ["w1"]}, 404, "UnknownToken"),
        ("run/drift", {"from": -1}, 422, "ValidationError"),
        ("run/trajectory", {"points": 301}, 422, "LimitExceeded"),
        ("run/trajectory", {"points": 201}, 422, "LimitExceeded"),  # 201 x 5 > 1000 values
        ("run/trajectory", {"tokens": ["nope"]}, 404, "UnknownToken"),
        ("run/trajectory", {"points": 3, "tokens": ["w1"]}, 422, "ValidationError"),
    ],
)
def test_bad_requests_get_the_envelope(app: TestClient, path, body, status, kind) -> None:
    error = post(app, path, body, status)["error"]
    assert error["type"] == kind, error
    assert post(app, "run/drift", {"limit": 1})["shared_tokens"] == TOKENS  # still serving
