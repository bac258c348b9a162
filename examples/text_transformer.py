#!/usr/bin/env python3
"""Keras's text_classification_with_transformer recipe: IMDB sentiment with one transformer block.

    python examples/text_transformer.py           # 20,000 words, reviews cut to 200, 2 epochs
    python examples/text_transformer.py --backend opencl
    python examples/text_transformer.py --synthetic --epochs 1 --train-limit 256   # no data needed

The model is Keras's: a TokenAndPositionEmbedding (token Embedding + position Embedding, added),
a TransformerBlock (MultiHeadAttention(num_heads=2, key_dim=32) with dropout, residual and
LayerNormalization(epsilon=1e-6), then a relu Dense(32) / Dense(32) feed-forward with dropout,
residual and LayerNormalization), GlobalAveragePooling1D, Dropout(0.1), Dense(20, relu),
Dropout(0.1), Dense(2, softmax); Adam on sparse categorical cross-entropy, batch 32, 2 epochs.
Both custom layers are written as in the recipe, subclassing minidl.layers.Layer with a call()
on built-in layers and minidl.ops. The data comes from minidl.datasets.imdb.load_data (Keras's
imdb.npz, from MINIDL_DATA_DIR, minidl's cache or Keras's ~/.keras/datasets; --data-dir sets
MINIDL_DATA_DIR); --synthetic trains on generated reviews in which a few words decide the
label (examples/imdb_lstm.py's), for tests and machines without the data.
"""

import argparse
import os
import sys
import time

try:
    import minidl
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import minidl

from minidl import layers, ops
from minidl.utils import pad_sequences

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from imdb_lstm import synthetic_reviews  # noqa: E402  (the same generated reviews)


class TransformerBlock(layers.Layer):
    """Self-attention then a feed-forward network, each with dropout, a residual connection
    and layer normalization (the recipe's block)."""

    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = minidl.Sequential([layers.Dense(ff_dim, activation="relu"),
                                      layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    """The embedding of each token plus the embedding of its position."""

    def __init__(self, maxlen, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = ops.shape(x)[-1]
        positions = ops.arange(start=0, stop=maxlen, step=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["cpu", "opencl", "numpy"], default=None,
                   help="compute backend (default: MINIDL_BACKEND, else the fastest usable)")
    p.add_argument("--vocab-size", type=int, default=20000, help="vocabulary size (num_words)")
    p.add_argument("--maxlen", type=int, default=200, help="words kept per review (pad_sequences)")
    p.add_argument("--embed-dim", type=int, default=32, help="embedding size of each token")
    p.add_argument("--num-heads", type=int, default=2, help="attention heads")
    p.add_argument("--ff-dim", type=int, default=32,
                   help="hidden size of the feed-forward network")
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
    for name in ("vocab_size", "maxlen", "embed_dim", "num_heads", "ff_dim", "batch_size",
                 "epochs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.vocab_size < 10:
        p.error("--vocab-size must be at least 10 (indices 0-2 are padding, start and OOV)")
    return args


def load(args):
    if args.synthetic:
        train = synthetic_reviews(args.train_limit or 2000, args.vocab_size, args.seed)
        test = synthetic_reviews(args.test_limit or 500, args.vocab_size, args.seed + 1)
        return train, test
    if args.data_dir:
        os.environ["MINIDL_DATA_DIR"] = args.data_dir
        minidl.settings.reload()
    from minidl.datasets import imdb
    from minidl.datasets.cifar10 import CorruptDatasetError
    try:
        (x_train, y_train), (x_val, y_val) = imdb.load_data(num_words=args.vocab_size)
    except CorruptDatasetError as exc:
        sys.exit(f"text_transformer.py: {exc}")
    except FileNotFoundError as exc:   # DatasetNotFoundError: one paragraph, no traceback
        sys.exit(f"text_transformer.py: {exc} Or pass --data-dir, or --synthetic to run "
                 f"without it.")
    limit = lambda a, n: a[:n] if n else a
    return ((limit(x_train, args.train_limit), limit(y_train, args.train_limit)),
            (limit(x_val, args.test_limit), limit(y_val, args.test_limit)))


def build_model(args):
    inputs = layers.Input(shape=(args.maxlen,))
    embedding_layer = TokenAndPositionEmbedding(args.maxlen, args.vocab_size, args.embed_dim)
    x = embedding_layer(inputs)
    transformer_block = TransformerBlock(args.embed_dim, args.num_heads, args.ff_dim)
    x = transformer_block(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    model = minidl.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def main(argv=None):
    args = parse_args(argv)
    try:
        if args.backend:
            minidl.set_backend(args.backend)
        backend = minidl.get_backend()
    except minidl.backends.BackendUnavailable as exc:
        sys.exit(f"text_transformer.py: the {args.backend or 'default'} backend cannot run "
                 f"here. {exc}.")
    minidl.utils.set_random_seed(args.seed)
    (x_train, y_train), (x_val, y_val) = load(args)
    x_train = pad_sequences(x_train, maxlen=args.maxlen)
    x_val = pad_sequences(x_val, maxlen=args.maxlen)
    model = build_model(args)
    name = getattr(backend, "name", type(backend).__name__)
    print(f"text_transformer: {len(x_train)} train / {len(x_val)} validation reviews of "
          f"{args.maxlen} words, {model.count_params():,} weights, backend {name}"
          + (" (synthetic data)" if args.synthetic else ""))
    start = time.perf_counter()
    history = model.fit(x_train, y_train, batch_size=args.batch_size, epochs=args.epochs,
                        validation_data=(x_val, y_val), verbose=args.verbose)
    seconds = time.perf_counter() - start
    h = history.history
    print(f"summary: {args.epochs} epochs in {seconds:.1f} s on {name}: loss {h['loss'][-1]:.4f}, "
          f"accuracy {h['accuracy'][-1]:.4f}, val_accuracy {h['val_accuracy'][-1]:.4f}")
    return h


if __name__ == "__main__":
    main()
