"""Every Client method against a real server: typed answers equal to the server's own JSON,
vectors equal to the table's rows, batches equal to their queries one by one."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from embedding_service import Analogy, Client, Text
from embedding_service.models import Neighbors, SectionQuestions
from tests.checkpoint_sets import synthetic_rows
from tests.client.helpers import assert_mirrors, minilm_rows, plain, raw_post

pytestmark = pytest.mark.slow

MINILM = "/v1/tables/minilm"


def test_tables_and_one_table(sync_client: Client) -> None:
    _, rows = minilm_rows()
    listed = {table.name: table for table in sync_client.tables()}
    assert set(listed) == {"minilm", "small", "run", "wordllama"}
    minilm = sync_client.table("minilm")
    assert (minilm.rows, minilm.width) == rows.shape
    assert minilm == listed["minilm"]
    assert [c.index for c in sync_client.table("run").checkpoints] == [0, 1, 2, 3, 4]


def test_lookup_answers_the_tables_float32_rows_bit_for_bit(sync_client: Client) -> None:
    tokens, rows = minilm_rows()
    ids = np.random.default_rng(1).choice(len(rows), size=600, replace=False)
    by_id = sync_client.lookup("minilm", ids=ids.tolist())  # 600 ids: three chunks of 256
    assert by_id.vectors is not None and by_id.vectors.dtype == np.float32
    np.testing.assert_array_equal(by_id.vectors, rows[ids])
    assert by_id.tokens == [tokens[i] for i in ids] and by_id.ids == ids.tolist()
    np.testing.assert_allclose(by_id.norms, np.linalg.norm(rows[ids], axis=1), rtol=1e-6)
    by_token = sync_client.lookup("minilm", by_id.tokens)
    assert by_token.vectors is not None
    np.testing.assert_array_equal(by_token.vectors, rows[ids])


def test_lookup_of_one_token_a_text_and_without_vectors(sync_client: Client) -> None:
    tokens, rows = minilm_rows()
    king = sync_client.lookup("minilm", "king")
    assert king.vectors is not None and king.vectors.shape == (1, rows.shape[1])
    pieces = ["un", "##bel", "##ie", "##va", "##bly"]
    mean = sync_client.lookup("minilm", [Text("unbelievably", pieces="mean")])
    assert mean.ids == [None] and mean.matched == {"unbelievably": pieces}
    expected = rows[[tokens.index(piece) for piece in pieces]].astype(np.float64).mean(axis=0)
    assert mean.vectors is not None
    np.testing.assert_allclose(mean.vectors[0], expected, rtol=1e-5, atol=1e-7)
    bare = sync_client.lookup("minilm", ["king", "queen"], include_vector=False)
    assert bare.vectors is None and bare.tokens == ["king", "queen"]


def test_lookup_at_a_checkpoint_answers_that_checkpoints_rows(sync_client: Client) -> None:
    tokens, _, checkpoints = synthetic_rows()
    for index in (0, 2, 4):
        found = sync_client.lookup("run", tokens[:10], checkpoint=index)
        assert found.vectors is not None
        np.testing.assert_array_equal(found.vectors, checkpoints[index][:10].astype(np.float32))


def test_neighbors_mirror_the_servers_json(sync_client: Client, served: str) -> None:
    answer = raw_post(served, f"{MINILM}/neighbors", {"token": "king", "k": 5})
    mine = sync_client.neighbors("minilm", "king", 5)
    assert isinstance(mine, Neighbors)
    assert_mirrors(mine, answer)
    assert mine.tokens[:2] == ["kings", "queen"]
    assert mine.scores.tolist() == [n["score"] for n in answer["neighbors"]]


def test_a_vector_query_is_the_cosine_ranking_of_the_rows(sync_client: Client) -> None:
    _, rows = minilm_rows()
    vector = np.random.default_rng(3).normal(size=rows.shape[1]).astype(np.float32)
    found = sync_client.neighbors("minilm", vector, 10)
    cosines = rows.astype(np.float64) @ vector / np.linalg.norm(rows, axis=1)
    cosines /= np.linalg.norm(vector)
    assert found.ids.tolist() == np.argsort(-cosines)[:10].tolist()
    np.testing.assert_allclose(found.scores, np.sort(cosines)[::-1][:10], atol=1e-6)


def test_a_batch_of_mixed_queries_is_its_queries_one_by_one(sync_client: Client) -> None:
    tokens, rows = minilm_rows()
    queries = [*tokens[2000:2300], 5000, rows[7000], Text("running")]  # 303: two chunks
    batch = sync_client.neighbors("minilm", queries, 4, exclude=["the"], restrict=20000)
    assert len(batch) == len(queries)
    for index in (0, 1, 2, 255, 256, 300, 301, 302):
        alone = sync_client.neighbors("minilm", queries[index], 4, exclude=["the"], restrict=20000)
        assert batch[index] == alone
    assert all(n.id < 20000 for result in batch for n in result)


def test_neighbors_among_a_set_of_rows_single_and_batched(sync_client: Client) -> None:
    _, rows = minilm_rows()
    among = np.random.default_rng(6).choice(len(rows), size=3000, replace=False)
    units = rows.astype(np.float64) / np.linalg.norm(rows, axis=1)[:, None]
    queries = [int(i) for i in among[:300]]  # two chunks, each sending the set once
    batch = sync_client.neighbors("minilm", queries, 5, among=among)
    for query, found in zip(queries[::60], batch[::60], strict=True):
        others = np.setdiff1d(among, [query])
        cosines = units[others] @ units[query]
        assert found.ids.tolist() == others[np.lexsort((others, -cosines))[:5]].tolist()
        assert sync_client.neighbors("minilm", query, 5, among=among.tolist()) == found
    with pytest.raises(TypeError, match="among is a list of row ids"):
        sync_client.neighbors("minilm", "king", among=5)  # type: ignore[arg-type]


def test_neighbors_at_a_checkpoint(sync_client: Client) -> None:
    tokens, _, _ = synthetic_rows()
    first = sync_client.neighbors("run", tokens[0], 3, checkpoint=0)
    last = sync_client.neighbors("run", tokens[0], 3)
    assert first != last and last == sync_client.neighbors("run", tokens[0], 3, checkpoint=4)


def test_analogies_single_weighted_and_batched(sync_client: Client, served: str) -> None:
    single = sync_client.analogy("minilm", ["king", "woman"], ["man"], 3)
    answer = raw_post(
        served, f"{MINILM}/analogy", {"positive": ["king", "woman"], "negative": ["man"], "k": 3}
    )
    assert_mirrors(single, answer)
    assert single.tokens[0] == "queen"
    weighted = sync_client.analogy("minilm", [("king", 2.0), "woman"], ["man"], 3)
    assert weighted != single
    questions = [Analogy(["king", "woman"], ["man"]), Analogy(["paris", "germany"], ["france"])]
    batch = sync_client.analogy("minilm", questions * 150, k=3)  # 300: two chunks
    assert batch[0] == single and batch[-1].tokens[0] == "berlin"
    assert batch[1] == sync_client.analogy("minilm", ["paris", "germany"], ["france"], 3)
    cosmul = sync_client.analogy("minilm", ["king", "woman"], ["man"], 3, method="mul")
    assert cosmul.tokens[0] == "queen" and cosmul.scores[0] > 0.8
    alone = sync_client.analogy("minilm", [], ["man"], 3)  # negative terms alone: 3CosAdd
    assert_mirrors(alone, raw_post(served, f"{MINILM}/analogy", {"negative": ["man"], "k": 3}))
    king = 3 * minilm_rows()[1][2332]  # a raw vector of norm far above 1
    given = sync_client.analogy("minilm", [king], ["man"], 3, method="mul", vector_terms="as_given")
    assert given != sync_client.analogy("minilm", [king], ["man"], 3, method="mul")


def test_similarity_of_pairs_and_the_matrix_are_the_cosines(sync_client: Client) -> None:
    tokens, rows = minilm_rows()
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    rng = np.random.default_rng(4)
    pairs = [(tokens[a], tokens[b]) for a, b in rng.integers(999, len(rows), size=(400, 2))]
    scored = sync_client.similarity("minilm", pairs)
    assert scored.pairs == pairs
    expected = [float(unit[tokens.index(a)] @ unit[tokens.index(b)]) for a, b in pairs]
    np.testing.assert_allclose(scored.scores, expected, atol=1e-6)
    matrix = sync_client.similarity("minilm", tokens=["king", "queen", "apple"])
    ids = [tokens.index(t) for t in ("king", "queen", "apple")]
    np.testing.assert_allclose(matrix.matrix, unit[ids] @ unit[ids].T, atol=1e-6)


def test_score_is_the_raw_logits_of_the_rows(sync_client: Client, served: str) -> None:
    tokens, rows = minilm_rows()
    vector = rows[tokens.index("king")]
    scored = sync_client.score("minilm", vector, 5, softmax=True, target="queen")
    logits = rows.astype(np.float64) @ vector.astype(np.float64)
    assert [t.id for t in scored.top] == np.argsort(-logits)[:5].tolist()
    np.testing.assert_allclose([t.logit for t in scored.top], np.sort(logits)[::-1][:5], rtol=1e-6)
    assert scored.target is not None
    assert scored.target.rank == 1 + int(np.sum(logits > logits[tokens.index("queen")]))
    answer = raw_post(served, f"{MINILM}/score", {"text": "king", "k": 2})
    assert_mirrors(sync_client.score("minilm", Text("king"), 2), answer)


def test_tokenize_a_text_a_batch_and_back(sync_client: Client, served: str) -> None:
    _, rows = minilm_rows()
    split = sync_client.tokenize("minilm", "unbelievably running", include_vector=True)
    answer = raw_post(served, f"{MINILM}/tokenize", {"text": "unbelievably running"})
    assert plain(split.pieces) == answer["pieces"] and plain(split.words) == answer["words"]
    assert split.tokenizer == "huggingface"
    assert split.vectors is not None
    np.testing.assert_array_equal(split.vectors, rows[split.ids])
    texts = [f"word{i} and more" for i in range(300)]  # two chunks
    batch = sync_client.tokenize("minilm", texts)
    assert [t.text for t in batch] == texts
    assert batch[299] == sync_client.tokenize("minilm", texts[299])
    back = sync_client.detokenize("minilm", split.ids)
    assert back.text == "unbelievably running" and back.ids == split.ids
    special = sync_client.tokenize("minilm", "king", add_special_tokens=True)
    assert [p.token for p in special.pieces] == ["[CLS]", "king", "[SEP]"]


def test_projection_and_project_place_rows_alike(sync_client: Client, served: str) -> None:
    picture = sync_client.projection("minilm", points=50, selection="random", seed=3)
    answer = raw_post(
        served, f"{MINILM}/projection", {"points": 50, "selection": "random", "seed": 3}
    )
    assert_mirrors(picture, answer)
    assert picture.coordinates.shape == (50, 2)
    words = sync_client.projection("minilm", points=50, selection="words")
    assert_mirrors(
        words, raw_post(served, f"{MINILM}/projection", {"points": 50, "selection": "words"})
    )
    assert words.words == 50
    named = [p.token for p in picture.points[:5]]
    chosen = sync_client.projection("minilm", selection=named, dims=3)
    assert [p.token for p in chosen.points] == named and chosen.coordinates.shape == (5, 3)
    own = sync_client.projection("minilm", selection=named, dims=3, fit="selection")
    assert (own.fit, own.sample_rows, chosen.fit) == ("selection", 5, "table")
    body = {"selection": {"tokens": named}, "dims": 3, "fit": "selection"}
    assert_mirrors(own, raw_post(served, f"{MINILM}/projection", body))
    placed = sync_client.project("minilm", named)
    np.testing.assert_allclose(
        [[p.x, p.y] for p in placed], picture.coordinates[:5], rtol=1e-9, atol=1e-12
    )
    rows = sync_client.lookup("minilm", named).vectors
    assert rows is not None
    by_vector = sync_client.project("minilm", vectors=list(rows))
    np.testing.assert_allclose([[p.x, p.y] for p in by_vector], picture.coordinates[:5], atol=1e-6)


def test_diagnostics_mirror_the_servers_json(sync_client: Client, served: str) -> None:
    report = sync_client.diagnostics("minilm", tokens=["king", "[unused7]"], limit=5)
    answer = raw_post(
        served, f"{MINILM}/diagnostics", {"tokens": ["king", "[unused7]"], "limit": 5}
    )
    assert_mirrors(report, answer)
    assert [t.reference for t in report.tokens] == [False, True]
    assert sync_client.diagnostics("minilm", reference=None, limit=1).indicator.name == "norm"
    chosen = sync_client.diagnostics("minilm", reference=["[unused0]", "[unused1]"], limit=1)
    assert chosen.indicator.reference_rows == 2
    patterned = sync_client.diagnostics("minilm", pattern=r"^\[unused[0-9]\]$", limit=1)
    assert patterned.indicator.reference_rows == 10
    deeper = sync_client.diagnostics("minilm", limit=6).suspects
    assert deeper[:5] == report.suspects
    assert sync_client.diagnostics("minilm", limit=3, offset=3).suspects == deeper[3:6]


def test_evaluate_analogies_and_pairs(sync_client: Client, served: str) -> None:
    analogies = ": family\nking queen man woman\nboy girl brother sister\n: other\na b c d\n"
    figures = sync_client.evaluate("minilm", analogies=analogies)
    assert_mirrors(figures, raw_post(served, f"{MINILM}/evaluate", {"analogies": analogies}))
    assert [s.section for s in figures.sections] == ["family", "other"]
    listed = sync_client.evaluate("minilm", analogies=analogies, questions=True, dummy4unknown=True)
    body = {"analogies": analogies, "questions": True, "dummy4unknown": True}
    assert_mirrors(listed, raw_post(served, f"{MINILM}/evaluate", body))
    assert listed.sections[1].questions == SectionQuestions([], [("A", "B", "C", "D")])
    pairs = "king\tqueen\t9\nman\twoman\t8\napple\tpear\t5\nking\tapple\t1\n"
    correlation = sync_client.evaluate("minilm", pairs=pairs, case_insensitive=False)
    answer = raw_post(served, f"{MINILM}/evaluate", {"pairs": pairs, "case_insensitive": False})
    assert_mirrors(correlation, answer)
    assert correlation.pairs == 4


def test_trajectory_and_drift_mirror_the_servers_json(sync_client: Client, served: str) -> None:
    tokens, _, _ = synthetic_rows()
    path = sync_client.trajectory("run", tokens[:3])
    assert_mirrors(path, raw_post(served, "/v1/tables/run/trajectory", {"tokens": tokens[:3]}))
    assert [p.token for p in path.points] == tokens[:3]
    assert all(len(p.norm) == 5 for p in path.points)
    sample = sync_client.trajectory("run", points=7, selection="random", seed=2, dims=3)
    assert len(sample.points) == 7 and all(p.z is not None for p in sample.points)
    drift = sync_client.drift("run", source=0, target=4, tokens=tokens[:2], k=3, limit=5)
    body = {"from": 0, "to": 4, "tokens": tokens[:2], "k": 3, "limit": 5}
    answer = raw_post(served, "/v1/tables/run/drift", body)
    assert_mirrors(drift, answer, renamed={"source": "from", "target": "to"})
    assert (drift.source.index, drift.target.index) == (0, 4)
    cosines = [row.cosine for row in drift.most_moved]
    assert cosines == sorted(cosines) and len(drift.tokens[0].after) == 3


def test_cosines_of_a_query_a_vector_and_an_analogy(sync_client: Client, served: str) -> None:
    _, rows = minilm_rows()
    answer = raw_post(served, f"{MINILM}/cosines", {"token": "king", "offset": 100, "limit": 50})
    page = sync_client.cosines("minilm", "king", offset=100, limit=50)
    assert (page.rows, page.offset, page.count, page.end) == (len(rows), 100, 50, 150)
    assert page.scores.dtype == np.float32
    assert page.scores.tobytes() == base64.b64decode(answer["scores_b64"])
    wide = rows.astype(np.float64)
    norms = np.linalg.norm(wide, axis=1)
    vector = wide[7] * 3
    every = sync_client.cosines("minilm", vector.astype(np.float32)).scores
    np.testing.assert_allclose(every, wide @ vector / (norms * np.linalg.norm(vector)), atol=1e-6)
    mul = sync_client.cosines("minilm", Analogy(["king", "woman"], ["man"]), method="mul")
    top = sync_client.analogy("minilm", ["king", "woman"], ["man"], 5, method="mul")
    assert [mul.scores[n.id] for n in top] == [np.float32(n.score) for n in top]
    with pytest.raises(TypeError, match="Analogy"):
        sync_client.cosines("minilm", "king", method="mul")
    alone = sync_client.cosines("minilm", Analogy([], ["man"]), limit=50)
    assert np.argmax(alone.scores) == np.argmin(
        sync_client.cosines("minilm", "man", limit=50).scores
    )
    given = sync_client.cosines("minilm", Analogy([vector]), method="mul", vector_terms="as_given")
    shifted = (1 + np.linalg.norm(vector) * every) / 2  # its cosines times its norm
    np.testing.assert_allclose(given.scores, shifted, rtol=1e-6, atol=1e-6)


def test_ranks_of_many_others_and_a_page_of_closer_rows(sync_client: Client, served: str) -> None:
    tokens, _ = minilm_rows()
    others = tokens[5000:5300]  # two chunks of the server's max_batch
    ranks = sync_client.rank("minilm", "king", others)
    assert [r.token for r in ranks] == others and (ranks.token, ranks.id) == ("king", 2332)
    assert all(r.rank == r.closer + 1 for r in ranks)
    assert sync_client.rank("minilm", 2332, others[299])[0] == ranks[299]  # by id
    body = {"token": "king", "others": ["paris"], "closer_rows": {"offset": 3, "limit": 4}}
    listed = sync_client.rank("minilm", "king", "paris", closer_rows=True, offset=3, limit=4)
    assert_mirrors(listed, raw_post(served, f"{MINILM}/rank", body))
    assert listed.closer_rows is not None and len(listed.closer_rows) == 4
