"""The model zoo's architectures, fit with an ArrayIterator, and examples/cifar10.py end to end
on a small CIFAR-10 written here in the official format (numpy backend: runs everywhere)."""

import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers, zoo
from minidl.data import ArrayIterator, Augment
from minidl.datasets import cifar10
from minidl.models import Sequential

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


@pytest.mark.parametrize("name, input_shape, params, trainable", [
    ("keras_cnn", (32, 32, 3), 1_250_858, 1_250_858),   # as Keras's cifar10_cnn example reports
    ("tf_tutorial", (24, 24, 3), 1_068_810, 1_068_554),  # TF tutorial's 1,068,298 + 2 BatchNorms
    ("resnet20", (32, 32, 3), 274_042, 272_474),        # He et al.: 0.27M
])
def test_zoo_architectures(name, input_shape, params, trainable):
    model = zoo.build(name)
    assert model.input_shape == (None,) + input_shape and model.output_shape == (None, 10)
    assert model.count_params() == params
    assert sum(int(np.prod(w.shape)) for layer in model.layers
               for w in layer.trainable_weights) == trainable
    assert not model.compiled


def test_resnet20_layers():
    model = zoo.resnet20()
    kinds = [type(layer).__name__ for layer in model.layers]
    convs = [layer for layer in model.layers if type(layer).__name__ == "Conv2D"]
    # 19 3x3 convolutions + the dense layer = 20 weight layers, plus two 1x1 projection shortcuts
    assert sum(layer.kernel_size == (3, 3) for layer in convs) == 19
    assert [layer.strides for layer in convs if layer.kernel_size == (1, 1)] == [(2, 2), (2, 2)]
    assert kinds.count("Add") == 9 and kinds.count("Dense") == 1
    with pytest.raises(ValueError, match="unknown model"):
        zoo.build("vgg16")


def test_fit_takes_an_array_iterator_and_saves_its_state():
    x = np.random.default_rng(0).integers(0, 256, size=(40, 6, 6, 1), dtype=np.uint8)
    y = (x.reshape(40, -1).mean(axis=1) > 127).astype(np.int32)
    train = ArrayIterator(x, y, batch_size=16, seed=3, augment=Augment(pad=1, crop=(6, 6), flip=True))
    model = Sequential([layers.Input((6, 6, 1)), layers.Flatten(), layers.Dense(2, activation="softmax")])
    model.compile(optimizer=optimizers.SGD(0.1), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(train, epochs=2, verbose=0,
                        validation_data=ArrayIterator(x, y, batch_size=32, shuffle=False))
    assert len(history.history["loss"]) == 2 and "val_accuracy" in history.history
    assert model.fit_state["iterator_state"] == train.get_state()
    assert len(model.predict(ArrayIterator(x, batch_size=16, shuffle=False))) == 40


def write_small_cifar(root, per_batch=20, test=20):
    folder = root / cifar10.FOLDER_NAME
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name, n in [(f, per_batch) for f in cifar10.TRAIN_FILES] + [(cifar10.TEST_FILE, test)]:
        batch = {b"data": rng.integers(0, 256, size=(n, 3072), dtype=np.uint8),
                 b"labels": rng.integers(0, 10, size=n).tolist()}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=4))


def run_example(args, cwd):
    env = dict(os.environ, PYTHONPATH=REPO, MINIDL_HOME=str(cwd / "home"))
    return subprocess.run([sys.executable, os.path.join(REPO, "examples", "cifar10.py"), *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_cifar10_example_trains_logs_checkpoints_and_resumes(tmp_path):
    write_small_cifar(tmp_path / "data")
    common = ["--backend", "numpy", "--model", "tf_tutorial", "--data-dir", str(tmp_path / "data"),
              "--batch-size", "32", "--test-limit", "16", "--checkpoint", str(tmp_path / "ckpt.mdl"),
              "--log", str(tmp_path / "log.json"), "--verbose", "0"]
    first = run_example(common + ["--epochs", "1"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "epoch 1/1:" in first.stdout and "images/s" in first.stdout and "test accuracy" in first.stdout
    assert "summary: tf_tutorial on numpy" in first.stdout
    log = json.loads((tmp_path / "log.json").read_text())
    assert [r["epoch"] for r in log["epochs"]] == [1] and log["train_images"] == 100
    assert 0 <= log["epochs"][0]["val_accuracy"] <= 1
    assert log["epochs"][0]["images_per_second"] > 0   # 100 images: 3 full batches and one of 4

    resumed = run_example(common + ["--epochs", "2", "--resume"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming" in resumed.stdout and "1 epochs done" in resumed.stdout
    assert "epoch 2/2:" in resumed.stdout and "epoch 1/2:" not in resumed.stdout
    log = json.loads((tmp_path / "log.json").read_text())
    assert [r["epoch"] for r in log["epochs"]] == [1, 2]


def test_cifar10_example_trains_under_a_mixed_precision_policy(tmp_path):
    write_small_cifar(tmp_path / "data")
    done = run_example(["--backend", "numpy", "--model", "keras_cnn", "--data-dir", str(tmp_path / "data"),
                        "--batch-size", "50", "--epochs", "1", "--test-limit", "10", "--verbose", "0",
                        "--dtype-policy", "mixed_bfloat16", "--checkpoint", str(tmp_path / "m.mdl")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "mixed_bfloat16" in done.stdout.splitlines()[0]
    model = minidl.models.load_model(str(tmp_path / "m.mdl"))   # the policy is in the file
    assert model.get_layer(index=1).dtype_policy.name == "mixed_bfloat16"
    bad = run_example(["--dtype-policy", "float64"], tmp_path)
    assert bad.returncode == 2 and "--dtype-policy" in bad.stderr


def test_cifar10_example_argument_errors(tmp_path):
    done = run_example(["--resume"], tmp_path)
    assert done.returncode == 2 and "--resume needs --checkpoint" in done.stderr
    done = run_example(["--epochs", "0"], tmp_path)
    assert done.returncode == 2 and "--epochs must be positive" in done.stderr


def test_cifar10_example_without_data_prints_one_paragraph(tmp_path):
    """Offline (a proxy that refuses every connection) and without data: no traceback, but
    where it looked, the download it tried, and the flag and variable that point at data."""
    env = dict(os.environ, PYTHONPATH=REPO, MINIDL_HOME=str(tmp_path / "home"),
               https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    env.pop("MINIDL_DATA_DIR", None)
    done = subprocess.run([sys.executable, os.path.join(REPO, "examples", "cifar10.py"),
                           "--backend", "numpy", "--epochs", "1"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 1
    message = done.stderr.strip()
    assert "Traceback" not in message and len(message.splitlines()) == 1, message
    cache = str(tmp_path / "home" / "datasets")
    for part in (f"Looked in: {cache}", cifar10.URL, "--data-dir", "MINIDL_DATA_DIR"):
        assert part in message, part
    assert "to_official.py" not in message


def test_benchmark_runners_live_in_benchmarks_and_run(tmp_path):
    """The smallest run of benchmarks/bench_zoo.py, and `python -m minidl.bench` reaching
    benchmarks/bench_backends.py (its --help: a real run takes minutes)."""
    env = dict(os.environ, PYTHONPATH=REPO, MINIDL_HOME=str(tmp_path / "home"))
    zoo_run = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "bench_zoo.py"), "--backends", "numpy",
         "--models", "tf_tutorial", "--steps", "1", "--warmup", "1", "--batch-size", "4",
         "--no-torch", "--json", str(tmp_path / "zoo.json")],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert zoo_run.returncode == 0, zoo_run.stderr[-2000:]
    assert "| tf_tutorial | numpy |" in zoo_run.stdout and (tmp_path / "zoo.json").exists()
    entry = subprocess.run([sys.executable, "-m", "minidl.bench", "--help"], capture_output=True,
                           text=True, cwd=tmp_path, env=env, timeout=120)
    assert entry.returncode == 0, entry.stderr[-2000:]
    assert "bench_backends.py" in entry.stdout and "--memory" in entry.stdout
    assert not os.path.exists(os.path.join(REPO, "examples", "benchmark.py"))
