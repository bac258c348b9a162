"""examples/imdb_lstm.py runs a few steps on every backend, on synthetic reviews and on an
imdb.npz in Keras's format (the small one tests/fixtures/keras_datasets holds)."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples"))
import imdb_lstm  # noqa: E402

FIXTURES = os.path.join(REPO, "tests", "fixtures", "keras_datasets", "files")
SMALL = ["--epochs", "1", "--units", "8", "--max-features", "100", "--maxlen", "20",
         "--batch-size", "16", "--verbose", "0"]


def test_runs_on_every_backend_with_synthetic_reviews(active_backend, capsys):
    history = imdb_lstm.main(["--backend", active_backend, "--synthetic", "--train-limit", "64",
                              "--test-limit", "32", *SMALL])
    assert len(history["loss"]) == 1 and 0.0 <= history["val_accuracy"][0] <= 1.0
    assert f"on {active_backend}" in capsys.readouterr().out


def test_reads_imdb_in_keras_format(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    try:
        history = imdb_lstm.main(["--backend", "numpy", "--data-dir", FIXTURES, *SMALL])
    finally:
        monkeypatch.delenv("MINIDL_DATA_DIR", raising=False)
        import minidl
        minidl.settings.reload()
    out = capsys.readouterr().out
    assert "12 train / 10 test reviews" in out and len(history["loss"]) == 1


def test_without_data_says_where_to_put_it(tmp_path):
    env = dict(os.environ, PYTHONPATH=REPO, MINIDL_HOME=str(tmp_path / "home"),
               KERAS_HOME=str(tmp_path / "keras"), https_proxy="http://127.0.0.1:9",
               HTTPS_PROXY="http://127.0.0.1:9")
    env.pop("MINIDL_DATA_DIR", None)
    done = subprocess.run([sys.executable, os.path.join(REPO, "examples", "imdb_lstm.py"),
                           "--backend", "numpy", *SMALL], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode != 0
    assert "imdb.npz" in done.stderr and "--synthetic" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("flag", ["--epochs=0", "--max-features=5"])
def test_argument_errors(flag):
    with pytest.raises(SystemExit):
        imdb_lstm.parse_args([flag])
