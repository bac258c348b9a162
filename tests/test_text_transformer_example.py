"""examples/text_transformer.py (Keras's text_classification_with_transformer recipe) runs a
few steps on every backend, on synthetic reviews and on an imdb.npz in Keras's format (the
small one tests/fixtures/keras_datasets holds)."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples"))
import text_transformer  # noqa: E402

FIXTURES = os.path.join(REPO, "tests", "fixtures", "keras_datasets", "files")
SMALL = ["--epochs", "1", "--embed-dim", "8", "--ff-dim", "8", "--vocab-size", "100",
         "--maxlen", "20", "--batch-size", "16", "--verbose", "0"]


def test_runs_on_every_backend_with_synthetic_reviews(active_backend, capsys):
    history = text_transformer.main(["--backend", active_backend, "--synthetic",
                                     "--train-limit", "64", "--test-limit", "32", *SMALL])
    assert len(history["loss"]) == 1 and 0.0 <= history["val_accuracy"][0] <= 1.0
    out = capsys.readouterr().out
    # Keras's model at these sizes: token and position embeddings (100 + 20) * 8,
    # attention 3 * (8 * 16 + 16) + 16 * 8 + 8, feed-forward 2 * (8 * 8 + 8), two layer
    # norms 4 * 8, Dense(20) 8 * 20 + 20, Dense(2) 20 * 2 + 2
    assert "1,926 weights" in out and f"on {active_backend}" in out


def test_learns_the_synthetic_task():
    """Three words decide a review's label: three epochs of 1,000 reviews find them (the
    run is seeded; it reaches 1.0 here)."""
    history = text_transformer.main(["--backend", "cpu", "--synthetic", "--train-limit", "1000",
                                     "--test-limit", "128", "--epochs", "3", "--maxlen", "80",
                                     "--vocab-size", "200", "--verbose", "0"])
    assert history["loss"][-1] < history["loss"][0] * 0.6
    assert history["val_accuracy"][-1] > 0.8


def test_reads_imdb_in_keras_format(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    try:
        history = text_transformer.main(["--backend", "numpy", "--data-dir", FIXTURES, *SMALL])
    finally:
        monkeypatch.delenv("MINIDL_DATA_DIR", raising=False)
        import minidl
        minidl.settings.reload()
    out = capsys.readouterr().out
    assert "12 train / 10 validation reviews" in out and len(history["loss"]) == 1


@pytest.mark.parametrize("flag", ["--epochs=0", "--vocab-size=5", "--num-heads=0"])
def test_argument_errors(flag):
    with pytest.raises(SystemExit):
        text_transformer.parse_args([flag])
