"""`embedding-service train-demo OUT`: a real, small word2vec run, written as a checkpoint set.

Skip-gram with negative sampling (gensim, the optional `train` extra) on the English text that
ships inside the gensim package, so nothing is downloaded: the shortened English Wikipedia
extract of its test data (206 articles, 453,267 tokens after gensim's wiki tokenizer) and the
Lee corpus (lee_background.cor and lee.cor, 63,873 tokens). Checkpoint 0 is the initial table,
drawn from a small Gaussian (gensim's own initialisation is uniform; the standard deviation is
that of gensim's uniform, 1 / (dim * sqrt(12)), so only the shape changes); then a snapshot
after every 1/S of each epoch. One worker thread and a seed make the run reproducible: with
several workers gensim's threads race on the shared rows (hogwild), so two runs differ.

Every checkpoint is a projector file (`NNN-LABEL_tensors.bytes` + `_labels.tsv` with a `count`
column, the corpus count of each word), so OUT is ready to serve as a checkpoint set:
`embedding-service serve --table demo=OUT,checkpoints=true`. This is a demonstration of the
mechanism, not a production table: a corpus this small gives noisy neighbours.
"""

from __future__ import annotations

import argparse
import bz2
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

WIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
LEE = ("lee_background.cor", "lee.cor")
# Wikipedia articles are cut into pieces of this many tokens (gensim truncates a "sentence"
# at 10,000 words; a window never crosses a piece).
PIECE_TOKENS = 1000
Corpus = Literal["all", "lee"]


class MissingExtra(Exception):
    """gensim is not installed: the message says which extra brings it."""

    def __init__(self) -> None:
        super().__init__(
            "train-demo needs gensim, which the optional 'train' extra installs: "
            "pip install -e '.[train]' (or scripts/bootstrap train)"
        )


@dataclass(frozen=True)
class DemoOptions:
    """The run's parameters (the defaults take about a minute on 2 cores)."""

    epochs: int = 10
    dim: int = 50
    snapshots_per_epoch: int = 2
    seed: int = 1
    corpus: Corpus = "all"
    min_count: int = 5
    window: int = 5
    negative: int = 5


@dataclass
class Report:
    """What the run did, written to OUT/training.json and printed."""

    options: dict[str, Any]
    gensim: str
    sentences: int
    corpus_tokens: int
    vocabulary: int
    init_std: float
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    read_seconds: float = 0.0
    train_seconds: float = 0.0
    total_seconds: float = 0.0


def require_gensim() -> str:
    """gensim's version; MissingExtra when it is not installed."""
    try:
        import gensim
    except ImportError:
        raise MissingExtra() from None
    return str(gensim.__version__)


def read_corpus(corpus: Corpus) -> list[list[str]]:
    """The sentences: Wikipedia articles in pieces (with "all"), then the Lee documents."""
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki, tokenize
    from gensim.test.utils import datapath
    from gensim.utils import simple_preprocess

    sentences: list[list[str]] = []
    if corpus == "all":
        with bz2.open(datapath(WIKI)) as wiki:
            for _, text, _ in extract_pages(wiki, filter_namespaces=("0",)):
                tokens = tokenize(filter_wiki(text))
                pieces = range(0, len(tokens), PIECE_TOKENS)
                sentences += [tokens[i : i + PIECE_TOKENS] for i in pieces]
    for name in LEE:
        # lee.cor has one Latin-1 byte (a pound sign); the rest is ASCII.
        with open(datapath(name), encoding="latin-1") as lines:
            sentences += [simple_preprocess(line) for line in lines]
    return [sentence for sentence in sentences if sentence]


class Writer:
    """Writes each checkpoint as projector files in OUT, numbered in order."""

    def __init__(self, out: Path, tokens: list[str], counts: list[int], report: Report) -> None:
        self.out = out
        self.report = report
        rows = "".join(f"{t}\t{n}\n" for t, n in zip(tokens, counts, strict=True))
        self.labels = "word\tcount\n" + rows

    def write(self, vectors: np.ndarray, label: str, words: int) -> None:
        """One checkpoint: `vectors` after `words` words of training."""
        stem = f"{len(self.report.checkpoints):03d}-{label}"
        np.ascontiguousarray(vectors, dtype="<f4").tofile(self.out / f"{stem}_tensors.bytes")
        (self.out / f"{stem}_labels.tsv").write_text(self.labels, encoding="utf-8")
        self.report.checkpoints.append({"label": stem, "words_trained": words})
        print(f"train-demo: checkpoint {stem} ({words:,} words trained)", file=sys.stderr)


def train_demo(out: Path, options: DemoOptions) -> Report:
    """Train and write the checkpoint set into `out` (a new or empty directory)."""
    started = time.perf_counter()
    version = require_gensim()
    _check_options(options)
    _prepare_folder(out)
    sentences = read_corpus(options.corpus)
    model = _model(options)
    model.build_vocab(sentences)
    tokens = list(model.wv.index_to_key)
    counts = [int(model.wv.get_vecattr(t, "count")) for t in tokens]
    std = 1.0 / (options.dim * math.sqrt(12.0))
    corpus_tokens = sum(map(len, sentences))
    report = Report(asdict(options), version, len(sentences), corpus_tokens, len(tokens), std)
    report.read_seconds = time.perf_counter() - started
    writer = Writer(out, tokens, counts, report)
    rng = np.random.default_rng(options.seed)
    model.wv.vectors[:] = rng.normal(0.0, std, size=model.wv.vectors.shape)
    writer.write(model.wv.vectors, "init", 0)
    model.on_snapshot = writer.write
    training = time.perf_counter()
    model.train(
        sentences,
        total_examples=model.corpus_count,
        epochs=options.epochs,
        callbacks=[_epoch_callback()],
    )
    report.train_seconds = time.perf_counter() - training
    report.total_seconds = time.perf_counter() - started
    (out / "training.json").write_text(json.dumps(asdict(report), indent=2) + "\n")
    return report


def _check_options(options: DemoOptions) -> None:
    for name, value, low, high in (
        ("epochs", options.epochs, 1, 1000),
        ("dim", options.dim, 3, 1000),
        ("snapshots per epoch", options.snapshots_per_epoch, 1, 100),
    ):
        if not low <= value <= high:
            raise ValueError(f"{name} must be between {low} and {high}, got {value}")


def _prepare_folder(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} must be a new or empty directory")
    out.mkdir(parents=True, exist_ok=True)


def _model(options: DemoOptions) -> Any:
    """A skip-gram Word2Vec that snapshots after each 1/S of an epoch's words."""
    from gensim.models import Word2Vec

    class SnapshottingWord2Vec(Word2Vec):
        on_snapshot: Callable[[np.ndarray, str, int], None]
        epoch = 0
        epoch_words = 0
        total_words = 0

        def _do_train_job(self, sentences: Any, alpha: float, inits: Any) -> Any:
            # gensim has no per-batch callback; this runs in the one worker thread after each
            # job (batch_words words), so a snapshot is exactly the rows after that job.
            tally, raw = super()._do_train_job(sentences, alpha, inits)
            per_snapshot = self.corpus_total_words / options.snapshots_per_epoch
            before = int(self.epoch_words // per_snapshot)
            self.epoch_words += raw
            self.total_words += raw
            after = int(self.epoch_words // per_snapshot)
            if after > before and after < options.snapshots_per_epoch:
                epoch = self.epoch + after / options.snapshots_per_epoch
                self.on_snapshot(self.wv.vectors, f"epoch-{epoch:.2f}", self.total_words)
            return tally, raw

    return SnapshottingWord2Vec(
        vector_size=options.dim,
        sg=1,
        window=options.window,
        negative=options.negative,
        min_count=options.min_count,
        workers=1,
        seed=options.seed,
    )


def _epoch_callback() -> Any:
    """gensim's callback: a snapshot at the end of each epoch."""
    from gensim.models.callbacks import CallbackAny2Vec

    class EpochEnd(CallbackAny2Vec):
        def on_epoch_begin(self, model: Any) -> None:
            model.epoch_words = 0

        def on_epoch_end(self, model: Any) -> None:
            model.epoch += 1
            model.on_snapshot(model.wv.vectors, f"epoch-{model.epoch:.2f}", model.total_words)

    return EpochEnd()


def add_command(commands: Any) -> None:
    """The `train-demo` sub-command."""
    demo = commands.add_parser(
        "train-demo",
        help="train a small word2vec (gensim, the 'train' extra) on the text inside the gensim "
        "package and write its checkpoints as a checkpoint set",
    )
    demo.add_argument("out", type=Path, help="a new or empty directory for the checkpoints")
    demo.add_argument("--epochs", type=int, default=10, help="passes over the corpus (10)")
    demo.add_argument("--dim", type=int, default=50, help="row width (50)")
    demo.add_argument(
        "--snapshots-per-epoch", type=int, default=2, help="checkpoints per epoch (2)"
    )
    demo.add_argument("--seed", type=int, default=1, help="of the initial rows and gensim (1)")
    demo.add_argument(
        "--corpus",
        choices=["all", "lee"],
        default="all",
        help="all: the Wikipedia extract and the Lee corpus; lee: the Lee corpus alone (fast)",
    )


def command(args: argparse.Namespace) -> int:
    """Train the demo word2vec and print what it wrote, as JSON."""
    options = DemoOptions(
        epochs=args.epochs,
        dim=args.dim,
        snapshots_per_epoch=args.snapshots_per_epoch,
        seed=args.seed,
        corpus=args.corpus,
    )
    report = asdict(train_demo(args.out, options))
    report["serve"] = f".venv/bin/embedding-service serve --table demo={args.out},checkpoints=true"
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0
