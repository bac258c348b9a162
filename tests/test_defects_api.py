"""Issue 21's API defects (items 5, 6, 9, 13-18), each with the case that failed before: quantized
files the int8 kernels would read differently per ISA path, dtype policies in model files,
ModelCheckpoint filepath templates, CI phases, the opencl set-up message, QuantizedModel's Keras
arguments, verbose output, backend switches and the test extra."""

import io
import json
import zipfile

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.models import Sequential
from minidl.models.minidl_files import ModelFileError
from minidl.quantization import load_quantized_model, quantize


# ------------------------------------------------------------------ item 5: quantized files
def _small_quantized(tmp_path):
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((4, 4, 2)), layers.Conv2D(3, 2, name="conv"),
                        layers.Flatten(name="flat"), layers.Dense(2, name="head")])
    x = np.random.default_rng(0).random((8, 4, 4, 2)).astype(np.float32)
    path = tmp_path / "q.minidl"
    quantize(model, x).save(path)
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}, x


def _rewritten(tmp_path, members, header=None, arrays=None):
    """A copy of a quantized file's members with the header's steps or quantized.npz changed."""
    members = dict(members)
    if header is not None:
        h = json.loads(members["minidl_quantized.json"])
        header(h)
        members["minidl_quantized.json"] = json.dumps(h).encode()
    if arrays is not None:
        a = dict(np.load(io.BytesIO(members["quantized.npz"])))
        arrays(a)
        buf = io.BytesIO()
        np.savez(buf, **a)
        members["quantized.npz"] = buf.getvalue()
    path = tmp_path / "bad.minidl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.mark.parametrize("value", [127, -128, 64])
def test_quantized_file_with_8bit_weights_is_refused(tmp_path, value):
    members, _ = _small_quantized(tmp_path)

    def eight_bit(a):
        a["0/w"][5] = value       # AVX2's vpmaddubsw saturates sums of such weights
    with pytest.raises(ModelFileError, match=r"layer 'conv' has int8 weights .*7-bit"):
        load_quantized_model(_rewritten(tmp_path, members, arrays=eight_bit))


@pytest.mark.parametrize("key", ["multiplier", "weight_scale"])
@pytest.mark.parametrize("value", [np.nan, np.inf, 0.0, -1.0])
def test_quantized_file_with_bad_multipliers_is_refused(tmp_path, key, value):
    members, _ = _small_quantized(tmp_path)

    def spoil(a):
        a[f"2/{key}"][1] = value
    with pytest.raises(ModelFileError, match=f"layer 'head' has {key} .* at column 1"):
        load_quantized_model(_rewritten(tmp_path, members, arrays=spoil))


def test_quantized_file_with_a_conv_step_on_flatten_is_refused(tmp_path):
    members, x = _small_quantized(tmp_path)

    def conv_on_flatten(h):
        h["steps"][1] = dict(h["steps"][0])
    with pytest.raises(ModelFileError, match="step 1 is 'conv', but layer 'flat' .Flatten."):
        load_quantized_model(_rewritten(tmp_path, members, header=conv_on_flatten))
    loaded = load_quantized_model(_rewritten(tmp_path, members))   # the untouched file loads
    assert loaded.predict(x).shape == (8, 2)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # inf rows through numpy's matmul
@pytest.mark.parametrize("fill", [np.nan, np.inf, -np.inf])
def test_quantize_refuses_calibration_data_without_a_finite_value(fill):
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((4,)), layers.Dense(3)])
    with pytest.raises(ValueError, match="calibration_data holds no finite value"):
        quantize(model, np.full((6, 4), fill, np.float32))
    mixed = np.random.default_rng(1).random((6, 4)).astype(np.float32)
    mixed[0] = fill                  # some non-finite values among finite ones still calibrate
    assert np.isfinite(quantize(model, mixed).predict(mixed[1:])).all()


# ------------------------------------------------------------------ item 13: .ci/run's phases
_FAKE_PYTHON = """#!/usr/bin/env bash
# python3 as .ci/run calls it: pip and -c succeed, each pytest run prints a summary line and
# exits with the status the test chose for that phase
echo "$*" >> "$CALLS"
case "$*" in
    *"-k opencl"*) echo "7 passed in 0.1s"; exit "$RUSTICL_STATUS" ;;
    *"-m pytest"*) echo "1 failed, 9 passed in 0.2s"; exit "$MAIN_STATUS" ;;
esac
exit 0
"""


@pytest.mark.parametrize("main_status,rusticl_status,ok",
                         [(1, 0, False), (0, 0, True), (5, 0, False), (0, 2, False)])
def test_ci_runs_every_phase_and_fails_at_the_end(tmp_path, main_status, rusticl_status, ok):
    import os
    import shutil
    import subprocess
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / ".ci").mkdir()
    shutil.copy(os.path.join(repo, ".ci", "run"), tmp_path / ".ci" / "run")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, text in {"python3": _FAKE_PYTHON,
                       "dpkg-query": "#!/bin/sh\necho 'install ok installed'\n"}.items():
        (stubs / name).write_text(text)
        (stubs / name).chmod(0o755)
    icd = tmp_path / "rusticl.icd"
    icd.write_text("libRusticlOpenCL.so.1\n")
    calls = tmp_path / "calls"
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", CALLS=str(calls),
               MAIN_STATUS=str(main_status), RUSTICL_STATUS=str(rusticl_status),
               MINIDL_CI_RUSTICL_ICD=str(icd))
    done = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)
    ran = calls.read_text()
    assert "-m pytest -q tests" in ran and "-k opencl" in ran    # the rusticl phase ran too
    assert (done.returncode == 0) == ok, done.stdout + done.stderr
    tail = done.stdout.strip().splitlines()[-4:]
    assert "tests: 1 failed, 9 passed in 0.2s" in tail and "rusticl: 7 passed in 0.1s" in tail
    if main_status == 5:
        assert "FAILED tests: pytest collected no tests (exit 5)" in tail
    assert tail[-1] == "every phase passed" if ok else tail[-1].startswith("FAILED ")


# ------------------------------------------------------------------ items 14 and 18: setup.py
def _setup_arguments():
    """The keyword arguments of setup.py's setup() call, read without running setup.py."""
    import ast
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "setup.py")
    with open(path) as f:
        tree = ast.parse(f.read())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "setup")
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords
            if k.arg in ("install_requires", "extras_require")}


def _names(requirements):
    import re
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def test_pip_install_brings_pyopencl_and_the_test_extra_scipy():
    args = _setup_arguments()
    assert "pyopencl" in _names(args["install_requires"])     # --backend opencl after quick start
    assert "scipy" in _names(args["extras_require"]["test"])  # test_image_utils' scipy reference


def _run_example(env_changes, *argv):
    import os
    import subprocess
    import sys
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=repo)
    env.update(env_changes)
    return subprocess.run([sys.executable, os.path.join(repo, "examples", "cifar10.py"), *argv],
                          env=env, capture_output=True, text=True, timeout=120)


def test_opencl_without_a_platform_is_one_paragraph(tmp_path):
    """No OpenCL driver (an empty ICD vendors folder): the example and set_backend say what to
    install, without a traceback and without telling to install pyopencl, which is there."""
    pytest.importorskip("pyopencl")
    (tmp_path / "vendors").mkdir()
    no_icd = {"OCL_ICD_VENDORS": str(tmp_path / "vendors"), "MINIDL_DATA_DIR": str(tmp_path)}
    done = _run_example(no_icd, "--backend", "opencl", "--epochs", "1")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    message = done.stderr.strip()
    assert message.startswith("cifar10.py: the opencl backend cannot run here.")
    assert len(message.splitlines()) == 1
    assert "pocl-opencl-icd" in message and "pip install pyopencl" not in message
    import os
    import subprocess
    import sys
    probe = ("import minidl\ntry:\n    minidl.set_backend('opencl')\nexcept minidl.backends."
             "BackendUnavailable as exc:\n    print(exc)\n")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=repo, **no_icd)).stdout
    assert "install an OpenCL driver" in out and "pip install pyopencl" not in out, out


def test_opencl_without_pyopencl_is_one_paragraph(tmp_path):
    (tmp_path / "pyopencl.py").write_text("raise ImportError('No module named pyopencl')\n")
    import os
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = _run_example({"PYTHONPATH": f"{tmp_path}{os.pathsep}{repo}",
                         "MINIDL_DATA_DIR": str(tmp_path)}, "--backend", "opencl", "--epochs", "1")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "pip install pyopencl" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ item 9: ModelCheckpoint paths
def _fit_with_checkpoint(checkpoint, epochs=1):
    minidl.set_backend("numpy")
    model = Sequential([layers.Input((3,)), layers.Dense(2)])
    model.compile("sgd", "mse")
    x = np.ones((4, 3), np.float32)
    model.fit(x, np.zeros((4, 2), np.float32), epochs=epochs, verbose=0, callbacks=[checkpoint])
    return model


@pytest.mark.parametrize("template,why", [
    ("{epoch.__class__.__init__.__globals__}", "attribute, index and positional"),
    ("{epoch[0]}", "attribute, index and positional"),
    ("{}-{0}", "attribute, index and positional"),
    ("{epoch!r}", "converts the field"),
    ("{epoch:{loss}}", "format spec"),
    ("{epoch:>1000000000}", "width of 1000000000"),
    ("{val_loss:.999999999f}", "precision of 999999999"),
    ("ckpt-{epoch", "is not a format string"),
])
def test_checkpoint_templates_are_checked_at_construction(tmp_path, template, why):
    from minidl.callbacks import ModelCheckpoint
    path = str(tmp_path / template)
    with pytest.raises(ValueError, match="ModelCheckpoint: filepath .*" + why):
        ModelCheckpoint(path)


def test_checkpoint_plain_templates_still_format(tmp_path):
    from minidl.callbacks import ModelCheckpoint
    _fit_with_checkpoint(ModelCheckpoint(str(tmp_path / "m-{epoch:03d}-{loss:.2f}-{{x}}.minidl")),
                         epochs=2)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[1].startswith("m-002-") and names[1].endswith("-{x}.minidl")


def test_checkpoint_with_a_254_character_file_name(tmp_path):
    from minidl.callbacks import ModelCheckpoint
    from minidl.models import load_model
    name = "c" * 244 + "-{epoch:02d}.minidl"          # 254 characters once formatted
    assert len(name.format(epoch=1)) == 254
    model = _fit_with_checkpoint(ModelCheckpoint(str(tmp_path / name)))
    saved = tmp_path / name.format(epoch=1)
    assert sorted(tmp_path.iterdir()) == [saved]       # and no temporary left behind
    np.testing.assert_array_equal(load_model(saved).get_weights()[0], model.get_weights()[0])
    model.save(saved)                                  # replacing it works too


# ------------------------------------------------------------------ item 6: dtype policies in files
@pytest.fixture
def global_policy_restored():
    from minidl import mixed_precision
    yield mixed_precision
    mixed_precision.set_global_policy("float32")


@pytest.mark.filterwarnings("ignore:mixed_bfloat16 on the:RuntimeWarning")   # the emulation note
def test_a_file_loads_with_the_policies_it_was_saved_with(active_backend, tmp_path,
                                                          global_policy_restored):
    from minidl.models import load_model
    mixed_precision = global_policy_restored
    model = Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"),
                        layers.Dense(4, dtype="mixed_bfloat16"), layers.LeakyReLU()])
    assert model.get_config()["layers"][1]["config"]["dtype"] == {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
        "registered_name": None}                     # Keras 3's form
    model.save(tmp_path / "m.minidl")
    x = np.random.default_rng(0).random((5, 8)).astype(np.float32)
    expected = model.predict(x, verbose=0)
    for policy in ("mixed_bfloat16", "mixed_float16", "float32"):
        mixed_precision.set_global_policy(policy)
        loaded = load_model(tmp_path / "m.minidl")
        assert [l.dtype_policy.name for l in loaded.layers] == ["float32", "mixed_bfloat16",
                                                                  "float32"]
        np.testing.assert_array_equal(loaded.predict(x, verbose=0), expected)


def test_a_config_without_policies_still_loads(active_backend, global_policy_restored):
    """Older files have no "dtype" in float32 layers' configs: they get the global policy."""
    model = Sequential([layers.Input((8,)), layers.Dense(4)])
    config = model.get_config()
    for spec in config["layers"][1:]:
        del spec["config"]["dtype"]
    assert Sequential.from_config(config).layers[0].dtype_policy.name == "float32"
    global_policy_restored.set_global_policy("mixed_bfloat16")
    assert Sequential.from_config(config).layers[0].dtype_policy.name == "mixed_bfloat16"


# ------------------------------------------------------------------ item 15: QuantizedModel's API
def _compiled_cnn():
    rng = np.random.default_rng(0)
    x = rng.random((60, 8, 8, 3)).astype(np.float32)
    y = (x[:, :4].mean(axis=(1, 2, 3)) * 20).astype(np.int64) % 4
    model = Sequential([layers.Input((8, 8, 3)), layers.Conv2D(8, 3, activation="relu"),
                        layers.BatchNormalization(), layers.MaxPooling2D(2), layers.Flatten(),
                        layers.Dense(4, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=2, verbose=0)
    return model, x, y


class _Counting(minidl.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_predict_batch_end(self, batch, logs=None):
        self.calls.append(("predict", batch, type(self.model).__name__))

    def on_test_batch_end(self, batch, logs=None):
        self.calls.append(("test", batch, sorted(logs)))


def test_quantized_predict_takes_keras_arguments(active_backend, capsys):
    model, x, _ = _compiled_cnn()
    qmodel = quantize(model, x)
    full = qmodel.predict(x)
    counting = _Counting()
    part = qmodel.predict(x, batch_size=7, verbose=1, steps=3, callbacks=[counting])
    np.testing.assert_array_equal(part, full[:21])
    assert counting.calls == [("predict", i, "QuantizedModel") for i in range(3)]
    captured = capsys.readouterr()
    assert "Predict" in captured.out + captured.err      # verbose=1: the progress bar
    with pytest.raises(ValueError, match="steps must be a positive int"):
        qmodel.predict(x, steps=0)
    with pytest.raises(TypeError, match="callbacks must be a list"):
        qmodel.predict(x, callbacks=print)


def test_quantized_evaluate_reports_the_float_models_loss_and_metrics(active_backend):
    model, x, y = _compiled_cnn()
    qmodel = quantize(model, x)
    expected = model.evaluate(x, y, return_dict=True)
    got = qmodel.evaluate(x, y, batch_size=16, return_dict=True)
    assert sorted(got) == sorted(expected) == ["accuracy", "loss"]
    assert abs(got["loss"] - expected["loss"]) < 0.05
    # the same numbers as the float model's evaluate of the int8 predictions
    probs = qmodel.predict(x)
    ce = -np.log(np.clip(probs[np.arange(len(y)), y], 1e-7, 1)).mean()
    assert got["loss"] == pytest.approx(ce, rel=1e-4)
    assert got["accuracy"] == pytest.approx((probs.argmax(1) == y).mean())
    loss, accuracy = qmodel.evaluate(x, y, steps=2, batch_size=10)   # the first 20 samples
    assert accuracy == pytest.approx((probs[:20].argmax(1) == y[:20]).mean())
    weights = np.zeros(len(y), np.float32)
    weights[:10] = 1.0
    weighted = qmodel.evaluate(x, y, sample_weight=weights, return_dict=True)
    assert weighted["loss"] == pytest.approx(
        -np.log(np.clip(probs[np.arange(10), y[:10]], 1e-7, 1)).sum() / len(y), rel=1e-4)
    counting = _Counting()
    qmodel.evaluate(x, y, batch_size=32, callbacks=[counting])
    assert counting.calls == [("test", 0, ["accuracy", "loss"]), ("test", 1, ["accuracy", "loss"])]


def test_loaded_quantized_model_evaluates_after_compile(active_backend, tmp_path):
    model, x, y = _compiled_cnn()
    quantize(model, x).save(tmp_path / "q.minidl")
    loaded = load_quantized_model(tmp_path / "q.minidl")
    with pytest.raises(ValueError, match="no loss to evaluate: compile the float model"):
        loaded.evaluate(x, y)
    loaded.compile(loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert loaded.evaluate(x, y, return_dict=True) == pytest.approx(
        quantize(model, x).evaluate(x, y, return_dict=True))
    with pytest.raises(ValueError, match="evaluate expects inputs of shape"):
        loaded.evaluate(x[:, :4], y)


def test_quantized_summary_says_how_each_layer_runs(active_backend):
    model, x, _ = _compiled_cnn()
    qmodel = quantize(model, x)
    lines = []
    qmodel.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert text.startswith(f'QuantizedModel: "{model.name}"')
    conv, dense = model.layers[0], model.layers[-1]
    row = {l.name: next(line for line in lines if line.startswith(f" {l.name} ("))
           for l in model.layers}
    assert "int8" in row[conv.name] and "int8" in row[dense.name]
    assert "Runs as" in text and "int8 layers: 2" in text


# ------------------------------------------------------------------ item 16: output and timings
def _small_cifar(root, per_batch=12, test=12):
    import pickle
    from minidl.datasets import cifar10
    folder = root / cifar10.FOLDER_NAME
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name, n in [(f, per_batch) for f in cifar10.TRAIN_FILES] + [(cifar10.TEST_FILE, test)]:
        batch = {b"data": rng.integers(0, 256, size=(n, 3072), dtype=np.uint8),
                 b"labels": rng.integers(0, 10, size=n).tolist()}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=4))


@pytest.mark.parametrize("verbose", ["0", "2"])
def test_example_prints_each_epoch_once(tmp_path, verbose):
    _small_cifar(tmp_path / "data")
    done = _run_example({"MINIDL_HOME": str(tmp_path / "home")}, "--backend", "numpy", "--model",
                        "tf_tutorial", "--data-dir", str(tmp_path / "data"), "--epochs", "2",
                        "--batch-size", "30", "--verbose", verbose)
    assert done.returncode == 0, done.stderr
    lines = [line for line in (done.stdout + done.stderr).replace("\r", "\n").splitlines()
             if line.lower().startswith("epoch 2/2")]
    script_lines = [line for line in lines if line.startswith("epoch 2/2:")]
    fit_lines = [line for line in lines if line.startswith("Epoch 2/2 -")]
    assert (len(script_lines), len(fit_lines)) == {"0": (1, 0), "2": (0, 1)}[verbose]


def test_opencl_info_does_not_start_the_tuner(tmp_path, monkeypatch):
    pytest.importorskip("pyopencl")
    from minidl import settings
    from minidl.backends import BackendUnavailable
    from minidl.backends.opencl import create, tuner
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path))       # nothing tuned on this device yet
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", "1")
    monkeypatch.setattr(settings, "_current", settings.read())

    def refuse(*args, **kwargs):
        raise AssertionError("info() started the GEMM tuner")
    monkeypatch.setattr(tuner, "tune", refuse)
    try:
        backend = create()
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    info = backend.info()
    assert info["gemm"] is None and info["gemm_source"].startswith("not tuned yet")
    monkeypatch.setenv("MINIDL_OPENCL_TUNE", "0")
    monkeypatch.setattr(settings, "_current", settings.read())
    info = create(runtime=backend.rt).info()                 # known without tuning: the default
    assert info["gemm"]["family"] in ("direct", "tiled") and info["gemm_source"] == "default"


def test_readme_states_the_tuning_time_the_message_states():
    import os
    import re
    from minidl.backends.opencl import tuner
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    stated = set(re.findall(r"up to ~(\d+) s", text))
    assert stated == {f"{tuner.TIME_BUDGET_S + tuner.CONV_BUDGET_S:.0f}"}


# ------------------------------------------------------------------ item 17: a backend switch
def _other_backend(name):
    return next((b for b in minidl.available_backends() if b != name), None)


def test_a_model_says_once_that_it_runs_on_its_own_backend(active_backend):
    import warnings
    other = _other_backend(active_backend)
    if other is None:
        pytest.skip("one backend only here")
    model = Sequential([layers.Input((3,)), layers.Dense(2)])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # on its own backend: silent
        model.fit(x, y, verbose=0)
    minidl.set_backend(other)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, y, verbose=0)
        model.predict(x)
        model.evaluate(x, y)
        model.train_on_batch(x, y)
        model.predict_on_batch(x)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1, messages
    assert (f"built on the {active_backend} backend and runs there, not on the active {other} "
            f"backend") in messages[0]
    assert model.backend.name == active_backend      # it did not move
    minidl.set_backend(active_backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # back on its backend: silent again
        model.predict(x)


def test_quantized_evaluate_agrees_on_every_cpu_isa_path(isa):
    """The int8 sums are exact on every path (weights within 7 bits, as item 5 enforces for
    files): evaluate on cpu-<isa> gives numpy's numbers, up to the float softmax."""
    minidl.set_backend("numpy")
    minidl.set_seed(3)
    model, x, y = _compiled_cnn()
    expected = quantize(model, x).evaluate(x, y, return_dict=True)
    minidl.set_backend("cpu")
    try:
        other = Sequential.from_config(model.get_config())
        other.set_weights(model.get_weights())
        other.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        got = quantize(other, x).evaluate(x, y, return_dict=True)
    finally:
        minidl.set_backend("numpy")
    # calibration ranges come from each backend's float forward: a last-bit difference may
    # move a scale, so allow one sample's flip and a small loss change
    assert got["accuracy"] == pytest.approx(expected["accuracy"], abs=1.01 / len(y))
    assert got["loss"] == pytest.approx(expected["loss"], rel=1e-3)
