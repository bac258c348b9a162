#!/usr/bin/env python3
"""Keras's imdb_lstm recipe: sentiment of IMDB movie reviews with Embedding + LSTM.

    python examples/imdb_lstm.py                       # 20,000 words, reviews cut to 80, 2 epochs
    python examples/imdb_lstm.py --backend opencl --epochs 15
    python examples/imdb_lstm.py --synthetic --epochs 1 --train-limit 256   # no data needed

The model is Keras's: Embedding(max_features, 128), LSTM(128, dropout=0.2,
recurrent_dropout=0.2), Dense(1, sigmoid), trained with Adam on binary cross-entropy, batch 32.
The data comes from minidl.datasets.imdb.load_data (Keras's imdb.npz, from MINIDL_DATA_DIR,
minidl's cache or Keras's ~/.keras/datasets; --data-dir sets MINIDL_DATA_DIR). --synthetic
trains on generated reviews instead, in which a few "positive" and "negative" words decide the
label, so a working model learns it within an epoch (for tests and for machines without the
data). Each epoch prints its loss, accuracy and validation accuracy; the last line sums it up.
"""

import argparse
import os
import sys
import time

import numpy as np

try:
    import minidl
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minidl

from minidl import layers
from minidl.utils import pad_sequences


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["cpu", "opencl", "numpy"], default=None,
                   help="compute backend (default: MINIDL_BACKEND, else the fastest usable)")
    p.add_argument("--max-features", type=int, default=20000, help="vocabulary size (num_words)")
    p.add_argument("--maxlen", type=int, default=80, help="words kept per review (pad_sequences)")
    p.add_argument("--units", type=int, default=128, help="embedding size and LSTM units")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--train-limit", type=int, metavar="N", help="train on the first N reviews only")
    p.add_argument("--test-limit", type=int, metavar="N", help="validate on the first N reviews only")
    p.add_argument("--data-dir", help="folder holding imdb.npz (sets MINIDL_DATA_DIR)")
    p.add_argument("--synthetic", action="store_true",
                   help="generated reviews instead of IMDB (no data needed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", type=int, choices=[0, 1, 2], default=2)
    args = p.parse_args(argv)
    for name in ("max_features", "maxlen", "units", "batch_size", "epochs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_features < 10:
        p.error("--max-features must be at least 10 (indices 0-2 are padding, start and OOV)")
    return args


def synthetic_reviews(n, max_features, seed):
    """Reviews of random words in which three "positive" and three "negative" words decide
    the label: (x as a list of int lists, y int64 (n,)), shaped as imdb.load_data's."""
    rng = np.random.default_rng(seed)
    positive, negative = [4, 5, 6], [7, 8, 9]
    x, y = [], np.empty(n, dtype=np.int64)
    for i in range(n):
        words = list(rng.integers(10, max_features, rng.integers(20, 120)))
        label = int(rng.integers(0, 2))
        for _ in range(3):   # within the last 60 words, which pad_sequences keeps
            at = len(words) - 1 - int(rng.integers(min(len(words), 60)))
            words[at] = int(rng.choice(positive if label else negative))
        x.append([1] + [int(w) for w in words])
        y[i] = label
    return x, y


def load(args):
    if args.synthetic:
        train = synthetic_reviews(args.train_limit or 2000, args.max_features, args.seed)
        test = synthetic_reviews(args.test_limit or 500, args.max_features, args.seed + 1)
        return train, test
    if args.data_dir:
        os.environ["MINIDL_DATA_DIR"] = args.data_dir
        minidl.settings.reload()
    from minidl.datasets import imdb
    from minidl.datasets.cifar10 import CorruptDatasetError
    try:
        (x_train, y_train), (x_test, y_test) = imdb.load_data(num_words=args.max_features)
    except CorruptDatasetError as exc:
        sys.exit(f"imdb_lstm.py: {exc}")
    except FileNotFoundError as exc:   # DatasetNotFoundError: one paragraph, no traceback
        sys.exit(f"imdb_lstm.py: {exc} Or pass --data-dir, or --synthetic to run without it.")
    limit = lambda a, n: a[:n] if n else a
    return ((limit(x_train, args.train_limit), limit(y_train, args.train_limit)),
            (limit(x_test, args.test_limit), limit(y_test, args.test_limit)))


def build_model(args):
    model = minidl.Sequential([
        minidl.Input((args.maxlen,), dtype="int32"),
        layers.Embedding(args.max_features, args.units),
        layers.LSTM(args.units, dropout=0.2, recurrent_dropout=0.2),
        layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    return model


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.backend:
            minidl.set_backend(args.backend)
        backend = minidl.get_backend()
    except minidl.backends.BackendUnavailable as exc:
        sys.exit(f"imdb_lstm.py: the {args.backend or 'default'} backend cannot run here. {exc}.")
    minidl.utils.set_random_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load(args)
    x_train = pad_sequences(x_train, maxlen=args.maxlen)
    x_test = pad_sequences(x_test, maxlen=args.maxlen)
    model = build_model(args)
    name = getattr(backend, "name", type(backend).__name__)
    print(f"imdb_lstm: {len(x_train)} train / {len(x_test)} test reviews of {args.maxlen} words, "
          f"{model.count_params():,} weights, backend {name}"
          + (" (synthetic data)" if args.synthetic else ""))
    start = time.perf_counter()
    history = model.fit(x_train, y_train.astype(np.float32), batch_size=args.batch_size,
                        epochs=args.epochs, validation_data=(x_test, y_test.astype(np.float32)),
                        verbose=args.verbose)
    seconds = time.perf_counter() - start
    h = history.history
    print(f"summary: {args.epochs} epochs in {seconds:.1f} s on {name}: loss {h['loss'][-1]:.4f}, "
          f"accuracy {h['accuracy'][-1]:.4f}, val_accuracy {h['val_accuracy'][-1]:.4f}")
    return h


if __name__ == "__main__":
    main()
