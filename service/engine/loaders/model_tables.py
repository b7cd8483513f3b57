"""Which tensors of a model are its tables: the input embedding, and the output one if untied.

The input embedding is found without its name: a 2-D tensor with one row per entry of the
vocabulary (config.json's `vocab_size`, or the tokenizer's size), an output tensor's name
(`lm_head.weight`, ...) left out. A list of the usual names only breaks a tie between several
such tensors, and names the embedding when no size matches (a config that contradicts the
tensors is then said so). When neither settles it the error names the candidates and the
`tensor` option that picks one.

The output table: none when config.json says `tie_word_embeddings: true`; else the tensor named
as an output table (`lm_head.weight`, `embed_out.weight`, `output.weight`), or, when
config.json says the model is untied and none is so named, the one other tensor shaped as the
input embedding.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.files.reading import read_json
from service.engine.loaders.safetensors_files import ModelTensors, Tensor

# Where the usual models keep their input embedding: only a tie-breaker, never required.
INPUT_NAMES = frozenset(
    {
        "model.embed_tokens.weight",  # Llama, Mistral, Qwen, Gemma, SmolLM, Phi-3
        "transformer.wte.weight",  # GPT-2 (with its head), GPT-J, Falcon
        "wte.weight",  # GPT-2 as saved without the head
        "gpt_neox.embed_in.weight",  # Pythia, GPT-NeoX
        "embeddings.word_embeddings.weight",  # BERT and its kin
        "bert.embeddings.word_embeddings.weight",
        "shared.weight",  # T5, BART
        "model.decoder.embed_tokens.weight",  # OPT
        "transformer.word_embeddings.weight",  # BLOOM
        "tok_embeddings.weight",  # Meta's own Llama checkpoints
        "model.embed_in.weight",
        "embed_tokens.weight",
        "embedding.weight",
    }
)
HEAD_NAMES = ("lm_head.weight", "embed_out.weight", "output.weight")
CONFIG = "config.json"
_WIDTH_KEYS = ("hidden_size", "n_embd", "d_model", "dim")


@dataclass(frozen=True)
class ModelConfig:
    """What config.json says of the tables (None for what it does not say)."""

    path: Path | None = None
    vocab_size: int | None = None
    width: int | None = None
    tied: bool | None = None


def read_config(folder: Path) -> ModelConfig:
    """The folder's config.json, or an empty config when there is none."""
    path = folder / CONFIG
    if not path.is_file():
        return ModelConfig()
    data = read_json(path)
    vocab_size = _number(path, data, "vocab_size")
    width = next((_number(path, data, key) for key in _WIDTH_KEYS if key in data), None)
    tied = data.get("tie_word_embeddings")
    if tied is not None and not isinstance(tied, bool):
        raise TableLoadError(path, "tie_word_embeddings is not true or false")
    return ModelConfig(path, vocab_size, width, tied)


def _number(path: Path, data: dict[str, object], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TableLoadError(path, f"{key} is not a positive integer")
    return value


def is_head(name: str) -> bool:
    """Whether a tensor is named as an output table."""
    return any(name == head or name.endswith("." + head) for head in HEAD_NAMES)


@dataclass(frozen=True)
class Chosen:
    """The model's tables: its input embedding, and its output table when untied."""

    input: Tensor
    head: Tensor | None
    # The rows that score the next token are the input tensor itself, an output table (named
    # with the tensor option to explore it as a table).
    input_is_head: bool = False


def choose(model: ModelTensors, config: ModelConfig, tokens: int, named: str | None) -> Chosen:
    """The input embedding (`named`, or found) and the output table, checked against config."""
    if named is not None:
        chosen = _named(model, named)
        if is_head(named):
            return Chosen(chosen, None, input_is_head=True)
    else:
        chosen = _found(model, config, tokens)
    _check_rank(chosen)
    _check_config(config, chosen)
    return Chosen(chosen, _head(model, config, chosen))


def _named(model: ModelTensors, named: str) -> Tensor:
    tensor = model.tensors.get(named)
    if tensor is None:
        raise TableLoadError(model.described_by, missing_tensor(named, list(model.tensors)))
    return tensor


def missing_tensor(tensor: str, names: list[str]) -> str:
    """The problem of a `tensor` option naming no tensor, with the likeliest names."""
    # Embedding-like names first: they are what the caller most likely meant.
    shown = ", ".join(sorted(names, key=lambda name: "embed" not in name)[:5])
    return f"no tensor {tensor!r}; {len(names)} tensors available, e.g. {shown}"


def _found(model: ModelTensors, config: ModelConfig, tokens: int) -> Tensor:
    sizes = {tokens} if config.vocab_size is None else {config.vocab_size, tokens}
    matrices = [t for t in model.tensors.values() if len(t.shape) == 2 and not is_head(t.name)]
    candidates = [t for t in matrices if t.shape[0] in sizes]
    usual = [t for t in candidates if t.name in INPUT_NAMES]
    if len(candidates) == 1 or len(usual) == 1:
        return candidates[0] if len(candidates) == 1 else usual[0]
    if candidates:
        raise TableLoadError(model.described_by, _ambiguous(candidates))
    # No size matches: a usual name still says which tensor the model meant (its rows are then
    # checked against the vocabulary and config.json, which say what is wrong).
    known = [t for t in model.tensors.values() if t.name in INPUT_NAMES]
    if len(known) == 1:
        return known[0]
    where = "" if config.vocab_size is None else f" or config.json's vocab_size {config.vocab_size}"
    raise TableLoadError(
        model.described_by,
        f"no 2-D tensor has one row per token of the vocabulary ({tokens} tokens{where}): "
        "name the input embedding with the tensor option",
    )


def _ambiguous(candidates: Iterable[Tensor]) -> str:
    names = sorted(t.name for t in candidates)
    listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    return (
        f"{len(names)} tensors could be the input embedding ({listed}): pick one with the "
        "tensor option (--tensor NAME, or tensor = NAME in the table's spec)"
    )


def _check_rank(chosen: Tensor) -> None:
    if len(chosen.shape) != 2:
        raise TableLoadError(
            chosen.path,
            f"the input embedding ({chosen.named}) has {len(chosen.shape)} dimensions, not 2",
        )


def _check_config(config: ModelConfig, chosen: Tensor) -> None:
    if config.path is None:
        return
    rows, width = chosen.shape
    if config.vocab_size is not None and config.vocab_size != rows:
        raise TableLoadError(
            config.path,
            f"vocab_size is {config.vocab_size}, but the input embedding ({chosen.named} of "
            f"{chosen.path.name}) has {rows} rows",
        )
    if config.width is not None and config.width != width:
        raise TableLoadError(
            config.path,
            f"the hidden size is {config.width}, but the input embedding ({chosen.named} of "
            f"{chosen.path.name}) is {width} wide",
        )


def _head(model: ModelTensors, config: ModelConfig, chosen: Tensor) -> Tensor | None:
    if config.tied:
        return None
    others = [t for t in model.tensors.values() if t.name != chosen.name]
    heads = [t for t in others if is_head(t.name)]
    if config.tied is False and not heads:
        heads = [t for t in others if t.shape == chosen.shape]
    if len(heads) == 1:
        return _checked_head(heads[0], chosen)
    if config.tied is False:
        found = "no" if not heads else f"{len(heads)} possible"
        assert config.path is not None
        raise TableLoadError(
            config.path,
            f"tie_word_embeddings is false, but the tensors have {found} output table(s) "
            f"shaped as the input embedding ({chosen.shape[0]} x {chosen.shape[1]})",
        )
    return None


def _checked_head(head: Tensor, chosen: Tensor) -> Tensor:
    if head.shape != chosen.shape:
        shape = " x ".join(map(str, head.shape))
        raise TableLoadError(
            head.path,
            f"the output table ({head.named}) is {shape}, the input embedding "
            f"{chosen.shape[0]} x {chosen.shape[1]}: they must match row for row",
        )
    return head
