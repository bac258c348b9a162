"""What Keras scripts do in their first lines, with `keras` replaced by `minidl`.

Top-level names, keras.utils / keras.backend / keras.saving, Sequential built from
input_shape= or from the data, Keras-only and Keras 2 arguments. Model tests run on every
available backend.
"""

import hashlib
import io
import os
import sys
import tarfile
import warnings

import numpy as np
import pytest

import minidl
from minidl import layers, optimizers, settings
from minidl.models import ModelFileError

BACKENDS = minidl.available_backends()


@pytest.fixture(params=BACKENDS)
def active_backend(request):
    """Each test taking it runs with every usable backend active."""
    minidl.set_backend(request.param)
    minidl.set_seed(0)
    yield request.param
    minidl.set_backend("numpy")


@pytest.fixture
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def blobs(n=96, dim=4, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, size=(classes, dim))
    y = rng.integers(0, classes, size=n)
    return (centers[y] + rng.normal(size=(n, dim))).astype(np.float32), y


def quiet(factory):
    """Build layers that take input_shape= without the Keras 3 warning cluttering output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return factory()


# ------------------------------------------------------------------ top-level names
def test_top_level_names_are_the_keras_ones():
    assert minidl.Sequential is minidl.models.Sequential
    assert minidl.Model is minidl.models.Model
    assert minidl.Input is minidl.layers.Input
    for name in ("layers", "models", "optimizers", "losses", "metrics", "callbacks",
                 "initializers", "utils", "saving", "backend"):
        assert name in minidl.__all__ and hasattr(minidl, name)
    assert minidl.saving.load_model is minidl.models.load_model
    for name in ("to_categorical", "normalize", "set_random_seed", "plot_model",
                 "model_to_dot", "get_file"):
        assert callable(getattr(minidl.utils, name))
    # Keras 2 spellings of its examples
    from minidl.utils import np_utils
    assert np_utils.to_categorical is minidl.utils.to_categorical
    assert minidl.optimizers.rmsprop is minidl.optimizers.RMSprop
    assert minidl.Input((3,)).dtype == "float32"


def test_backend_namespace():
    K = minidl.backend
    assert K.image_data_format() == "channels_last"
    assert K.floatx() == "float32"
    assert K.epsilon() == 1e-7
    K.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="channels_last"):
        K.set_image_data_format("channels_first")
    with pytest.raises(ValueError, match="float32"):
        K.set_floatx("float16")
    K.set_epsilon(1e-4)
    try:
        assert K.epsilon() == 1e-4
        with pytest.raises(ValueError, match="positive"):
            K.set_epsilon(0)
    finally:
        K.set_epsilon(1e-7)
    minidl.set_backend("numpy")
    assert K.backend() == "numpy"


def test_clear_session_resets_auto_names():
    layers.Dense(2)
    minidl.Sequential()
    minidl.backend.clear_session()
    assert layers.Dense(2).name == "dense"
    assert layers.Dense(2).name == "dense_1"
    assert minidl.Sequential().name == "sequential"
    assert layers.Input((3,)).layer.name == "input_layer"


# ------------------------------------------------------------------ utils
def test_to_categorical_matches_keras():
    out = minidl.utils.to_categorical([0, 2, 1])
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert out.dtype == np.float64
    # CIFAR-10's (N, 1) uint8 labels: the trailing 1 is dropped
    labels = np.array([[3], [0]], dtype=np.uint8)
    assert minidl.utils.to_categorical(labels, 10).shape == (2, 10)
    assert minidl.utils.to_categorical(np.zeros((2, 3), int), num_classes=4).shape == (2, 3, 4)
    assert minidl.utils.to_categorical(np.array([1.0, 2.0])).shape == (2, 3)


@pytest.mark.parametrize("x, num_classes, match", [
    ([0, 5], 3, r"0\.\.2.*\[5\]"),
    ([-1, 0], None, r"\[-1\]"),
    ([0.5, 1], None, "whole-number"),
    (["a"], None, "integer class indices"),
    ([0, 1], 0, "num_classes must be a positive int"),
    ([], None, "empty"),
])
def test_to_categorical_errors(x, num_classes, match):
    with pytest.raises((ValueError, TypeError), match=match):
        minidl.utils.to_categorical(x, num_classes)


def test_normalize():
    out = minidl.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    out = minidl.utils.normalize(np.array([[1.0, 2.0], [3.0, 6.0]]), axis=0, order=1)
    np.testing.assert_allclose(out, [[0.25, 0.25], [0.75, 0.75]])
    with pytest.raises(ValueError, match="axis"):
        minidl.utils.normalize(np.ones((2, 2)), axis=2)


def test_set_random_seed_repeats_weights_and_numpy(numpy_backend):
    def draw():
        minidl.utils.set_random_seed(7)
        model = minidl.Sequential([layers.Input((3,)), layers.Dense(2)])
        return model.get_weights()[0], np.random.rand(), __import__("random").random()

    (w1, n1, r1), (w2, n2, r2) = draw(), draw()
    np.testing.assert_array_equal(w1, w2)
    assert (n1, r1) == (n2, r2)
    with pytest.raises(ValueError, match="integer"):
        minidl.utils.set_random_seed(1.5)


# ------------------------------------------------------------------ get_file
@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIDL_HOME", str(tmp_path / "home"))
    settings.reload()
    yield tmp_path / "home"
    monkeypatch.undo()
    settings.reload()


def served(tmp_path, name, data):
    path = tmp_path / "server" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path.as_uri()


def test_get_file_downloads_once_into_the_cache_and_checks_the_hash(tmp_path, home):
    data = b"minidl" * 1000
    origin = served(tmp_path, "blob.bin", data)
    sha = hashlib.sha256(data).hexdigest()
    path = minidl.utils.get_file(origin=origin, file_hash=sha)
    assert path == str(home / "datasets" / "blob.bin")
    assert open(path, "rb").read() == data
    os.remove(tmp_path / "server" / "blob.bin")            # now the cached copy must be used
    assert minidl.utils.get_file("blob.bin", origin, md5_hash=hashlib.md5(data).hexdigest()) == path
    # a cached file whose hash does not match is downloaded again
    origin2 = served(tmp_path, "blob.bin", b"new contents")
    with open(path, "wb") as f:
        f.write(b"stale")
    minidl.utils.get_file("blob.bin", origin2, file_hash=hashlib.sha256(b"new contents").hexdigest())
    assert open(path, "rb").read() == b"new contents"


def test_get_file_keeps_nothing_when_the_hash_is_wrong(tmp_path, home):
    origin = served(tmp_path, "bad.bin", b"tampered")
    with pytest.raises(minidl.utils.DownloadError, match="md5.*expected 0123"):
        minidl.utils.get_file(origin=origin, md5_hash="0123456789abcdef0123456789abcdef")
    assert os.listdir(home / "datasets") == []


def test_get_file_offline_error_says_where_to_put_the_file(home):
    origin = "http://127.0.0.1:9/mnist.npz"   # the discard port: nothing listens there
    with pytest.raises(minidl.utils.DownloadError) as info:
        minidl.utils.get_file("mnist.npz", origin, file_hash="ab" * 32)
    message = str(info.value)
    assert origin in message and str(home / "datasets" / "mnist.npz") in message
    assert "sha256" in message


def test_get_file_arguments(tmp_path, home):
    with pytest.raises(ValueError, match="origin"):
        minidl.utils.get_file("x.bin")
    with pytest.raises(ValueError, match="not a path"):
        minidl.utils.get_file("a/b.bin", "file:///nowhere/b.bin")
    cache = tmp_path / "elsewhere"
    path = minidl.utils.get_file("c.bin", served(tmp_path, "c.bin", b"c"), cache_dir=str(cache),
                                 cache_subdir="sub")
    assert path == str(cache / "sub" / "c.bin")


def tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_get_file_extracts_archives_inside_their_folder_only(tmp_path, home):
    origin = served(tmp_path, "pack.tar.gz", tar_bytes({"pack/a.txt": b"A"}))
    folder = minidl.utils.get_file("pack.tar.gz", origin, extract=True)
    assert folder == str(home / "datasets" / "pack_extracted")
    assert open(os.path.join(folder, "pack", "a.txt"), "rb").read() == b"A"
    evil = served(tmp_path, "evil.tar.gz", tar_bytes({"../../escaped.txt": b"x"}))
    with pytest.raises(minidl.utils.DownloadError, match="outside"):
        minidl.utils.get_file("evil.tar.gz", evil, extract=True)
    assert not (home / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()


# ------------------------------------------------------------------ plot_model
def test_model_visualization_names_pydot_when_missing(numpy_backend, monkeypatch):
    model = minidl.Sequential([layers.Input((3,)), layers.Dense(2)])
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(ImportError, match=r"pip install pydot"):
        minidl.utils.model_to_dot(model)
    with pytest.raises(ImportError, match=r"pip install pydot"):
        minidl.utils.plot_model(model)


def test_model_to_dot_sequential_and_functional(numpy_backend):
    pytest.importorskip("pydot")
    seq = minidl.Sequential([layers.Input((4,)), layers.Dense(3, name="hidden"),
                             layers.Dense(2, name="out")])
    dot = minidl.utils.model_to_dot(seq, show_shapes=True, show_trainable=True)
    name = {str(id(layer)): layer.name for layer in seq.graph.layers}   # nodes are ids, as Keras's
    assert sorted(name[n.get_name()] for n in dot.get_nodes() if n.get_name() != "node") == \
        ["hidden", "out"]
    assert [(name[e.get_source()], name[e.get_destination()]) for e in dot.get_edges()] == \
        [("hidden", "out")]
    text = dot.to_string()
    assert "(None, 4)" in text and "(None, 2)" in text and "Trainable" in text
    inp = layers.Input((4,), name="x")
    a = layers.Dense(4, name="a")(inp)
    out = layers.Add(name="sum")([inp, a])
    dot = minidl.utils.model_to_dot(minidl.Model(inp, out), rankdir="LR")
    name = {str(id(layer)): layer.name for layer in (inp.producer, a.producer, out.producer)}
    edges = sorted((name[e.get_source()], name[e.get_destination()]) for e in dot.get_edges())
    assert edges == [("a", "sum"), ("x", "a"), ("x", "sum")]
    with pytest.raises(ValueError, match="not yet been built"):
        minidl.utils.model_to_dot(minidl.Sequential([layers.Dense(2)]))


def test_plot_model_writes_the_image_or_names_graphviz(numpy_backend, tmp_path, monkeypatch):
    pydot = pytest.importorskip("pydot")
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(2)])
    target = tmp_path / "model.png"
    target.write_bytes(b"previous plot")

    def no_graphviz(self, *args, **kwargs):
        raise FileNotFoundError(2, '"dot" not found in path.')

    with monkeypatch.context() as m:
        m.setattr(pydot.Dot, "create", no_graphviz)
        with pytest.raises(ImportError, match="Graphviz"):
            minidl.utils.plot_model(model, to_file=str(target))
    assert target.read_bytes() == b"previous plot"     # not clobbered by the failed render
    try:
        pydot.Dot().create(format="png")
    except FileNotFoundError:
        pytest.skip("Graphviz's dot is not installed")
    minidl.utils.plot_model(model, to_file=str(target), show_shapes=True, dpi=50)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ Sequential
def test_input_shape_on_the_first_layer_equals_an_input(active_backend):
    x, y = blobs(n=64, dim=6)
    x = x.reshape(64, 2, 3, 1)

    def make(first):
        minidl.set_seed(3)
        return minidl.Sequential(first + [layers.Conv2D(4, (2, 2), activation="relu"),
                                          layers.Flatten(), layers.Dense(3, activation="softmax")])

    with pytest.warns(UserWarning, match="prefer using an `Input"):
        conv = layers.Conv2D(4, (2, 2), activation="relu", input_shape=x.shape[1:])
    minidl.set_seed(3)
    compat = minidl.Sequential([conv, layers.Flatten(), layers.Dense(3, activation="softmax")])
    reference = make([layers.Input((2, 3, 1))])
    assert compat.input_shape == (None, 2, 3, 1) and compat.output_shape == (None, 3)
    assert [l.name for l in compat.layers][0] == conv.name   # no InputLayer in model.layers
    for model in (compat, reference):
        model.compile(optimizer=optimizers.SGD(lr=0.05), loss="sparse_categorical_crossentropy")
        model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(compat.predict(x), reference.predict(x), rtol=1e-5, atol=1e-6)


def test_batch_input_shape_and_input_dim(numpy_backend):
    a = quiet(lambda: minidl.Sequential([layers.Dense(3, batch_input_shape=(None, 5))]))
    b = quiet(lambda: minidl.Sequential([layers.Dense(3, input_dim=5)]))
    c = quiet(lambda: minidl.Sequential([layers.Dense(3, batch_input_shape=(32, 5))]))
    assert a.input_shape == b.input_shape == c.input_shape == (None, 5)
    assert minidl.Sequential([layers.InputLayer(input_shape=(7,)), layers.Dense(1)]).input_shape \
        == (None, 7)
    assert minidl.Input(batch_shape=(None, 4, 2)).shape == (None, 4, 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(input_shape=("a", 3)), "input_shape.*tuple of ints"),   # None is allowed: unknown
    (dict(input_shape=(0, 3)), "input_shape.*positive ints"),
    (dict(input_shape=(4,), input_dim=4), "only one of"),
    (dict(input_dim=0), "input_dim must be a positive int"),
    (dict(batch_input_shape=(4,)), r"\(batch, \*shape\)"),
    (dict(batch_input_shape=(0, 4)), "batch size"),
])
def test_input_shape_argument_errors(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        quiet(lambda: layers.Dense(2, **kwargs))


def test_sequential_without_input_is_built_by_fit(active_backend):
    x, y = blobs()
    model = minidl.Sequential()
    model.add(layers.Dense(16, activation="relu"))
    model.add(layers.Dense(3, activation="softmax"))
    assert not model.built and model.weights == []
    with pytest.raises(ValueError, match="has not yet been built"):
        model.summary()
    with pytest.raises(AttributeError, match="not been built"):
        model.inputs
    # compile before the shape is known: checked now, applied when built
    with pytest.raises(ValueError, match="unknown optimizer"):
        model.compile(optimizer="adamw_typo", loss="sparse_categorical_crossentropy")
    model.compile(optimizer=optimizers.Adam(0.02), loss="sparse_categorical_crossentropy",
                  metrics=["acc"])
    history = model.fit(x, y, batch_size=16, epochs=12, verbose=0, validation_split=0.25)
    assert model.built and model.input_shape == (None, 4)
    assert history.history["acc"][-1] > 0.85 and "val_acc" in history.history
    lines = []
    model.summary(print_fn=lines.append)
    assert any("Total params: 131" in line for line in lines)


def test_sequential_built_by_build_predict_or_call(numpy_backend):
    x, _ = blobs(n=8)
    built = minidl.Sequential([layers.Dense(2)])
    built.build((None, 4))
    assert built.input_shape == (None, 4) and len(built.weights) == 2
    built.build((None, 4))                                 # the same shape again: nothing to do
    with pytest.raises(ValueError, match="was built for inputs of shape"):
        built.build((None, 5))
    with pytest.raises(ValueError, match="input_shape must be"):
        minidl.Sequential([layers.Dense(2)]).build((4,))
    assert minidl.Sequential([layers.Dense(2)]).predict(x).shape == (8, 2)
    called = minidl.Sequential([layers.Dense(2)])
    np.testing.assert_allclose(called(x), called.predict(x), rtol=1e-6)
    nested = called(layers.Input((4,)))     # a model called on a tensor: used as a layer
    assert nested.shape == (None, 2) and nested.node.parent.model is called


def test_a_failed_build_leaves_the_model_usable(numpy_backend):
    model = minidl.Sequential([layers.Dense(4), layers.Conv2D(2, 3)])   # Conv2D needs rank 4
    with pytest.raises(ValueError, match="Conv2D"):
        model.build((None, 3))
    assert not model.built
    model.pop()
    model.build((None, 3))
    assert model.output_shape == (None, 4)


def test_add_and_pop_keep_trained_weights(active_backend):
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(5, name="keep"),
                               layers.Dense(3, name="drop")])
    trained = [w + 1.0 for w in model.get_layer("keep").get_weights()]
    model.get_layer("keep").set_weights(trained)
    model.pop()
    assert [l.name for l in model.layers] == ["keep"] and model.output_shape == (None, 5)
    model.add(layers.Dense(2))
    for got, want in zip(model.get_layer("keep").get_weights(), trained):
        np.testing.assert_allclose(got, want)
    assert model.output.shape == (None, 2) and model.input.shape == (None, 4)
    with pytest.raises(IndexError, match="no layers"):
        minidl.Sequential().pop()


def test_weights_inputs_outputs_and_get_layer(numpy_backend):
    inp = layers.Input((4, 4, 1))
    model = minidl.Sequential([inp, layers.Conv2D(2, 3, name="conv"),
                               layers.BatchNormalization(name="bn"), layers.Flatten(),
                               layers.Dense(2, name="head")])
    assert len(model.weights) == 2 + 4 + 2
    assert len(model.trainable_weights) == 6 and len(model.non_trainable_weights) == 2
    assert [w.name for w in model.get_layer("bn").non_trainable_weights] == \
        [w.name for w in model.get_layer("bn").weights[2:]]
    model.get_layer("conv").trainable = False
    assert len(model.trainable_weights) == 4 and len(model.non_trainable_weights) == 4
    assert len(model.get_layer("conv").non_trainable_weights) == 2
    assert model.inputs == [inp] and model.input is inp
    assert model.outputs == [model.get_layer("head").output] and model.output.shape == (None, 2)
    assert model.get_layer(index=0).name == "conv" and model.get_layer(index=-1).name == "head"
    with pytest.raises(ValueError, match="no layer named 'nope'"):
        model.get_layer("nope")
    with pytest.raises(ValueError, match="index 9 but the model has 4 layers"):
        model.get_layer(index=9)
    with pytest.raises(ValueError, match="only a layer name or a layer index"):
        model.get_layer("conv", 0)
    with pytest.raises(ValueError, match="provide a layer name or a layer index"):
        model.get_layer()


# ------------------------------------------------------------------ Keras-only arguments
def test_keras_only_compile_and_fit_arguments(active_backend):
    x, y = blobs(n=32)
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", jit_compile=False,
                  steps_per_execution=8, run_eagerly=True, auto_scale_loss=False)
    model.fit(x, y, epochs=1, verbose=0, workers=4, use_multiprocessing=True, max_queue_size=3)
    for kwargs, match in [(dict(steps_per_execution=0), "steps_per_execution"),
                          (dict(jit_compile="xla"), "jit_compile"),
                          (dict(run_eagerly="yes"), "run_eagerly")]:
        with pytest.raises((TypeError, ValueError), match=match):
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", **kwargs)
    with pytest.raises(ValueError, match="workers"):
        model.fit(x, y, verbose=0, workers=-1)


def endless(x, y, batch):
    while True:
        for i in range(0, len(x), batch):
            yield x[i:i + batch], y[i:i + batch]


def test_generator_aliases_warn_once_and_train(active_backend, monkeypatch):
    from minidl.models import keras_api
    monkeypatch.setattr(keras_api, "_warned", set())
    x, y = blobs(n=64)
    model = minidl.Sequential([layers.Input((4,)), layers.Dense(3, activation="softmax")])
    model.compile(optimizer=optimizers.Adam(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    with pytest.warns(DeprecationWarning, match="fit_generator is deprecated"):
        history = model.fit_generator(endless(x, y, 16), steps_per_epoch=4, epochs=6, verbose=0,
                                      validation_data=(x, y), workers=2)
    assert len(history.history["loss"]) == 6 and history.history["val_accuracy"][-1] > 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # the second call is silent
        model.fit_generator(endless(x, y, 16), steps_per_epoch=1, verbose=0)
    with pytest.warns(DeprecationWarning, match="evaluate_generator"):
        loss, acc = model.evaluate_generator(endless(x, y, 16), steps=4)
    np.testing.assert_allclose([loss, acc], model.evaluate(x, y, batch_size=16), rtol=1e-5)
    with pytest.warns(DeprecationWarning, match="predict_generator"):
        out = model.predict_generator((xb for xb, _ in endless(x, y, 16)), steps=4)
    np.testing.assert_allclose(out, model.predict(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="steps_per_epoch is required"):
        model.fit_generator(endless(x, y, 16))


# ------------------------------------------------------------------ optimizers
def run_sgd(opt, steps):
    b = minidl.get_backend()
    w = b.from_numpy(np.ones((3,), np.float32))
    g = b.from_numpy(np.full((3,), 0.5, np.float32))
    opt.build(b, [w])
    for _ in range(steps):
        opt.apply_gradients([(g, w)])
    return b.to_numpy(w)


def test_keras2_lr_and_decay(active_backend):
    opt = optimizers.SGD(lr=0.1, decay=0.5)
    assert opt.learning_rate == 0.1 and opt.decay == 0.5
    assert optimizers.RMSprop(lr=1e-4, decay=1e-6).get_config()["decay"] == 1e-6
    assert "decay" not in optimizers.Adam().get_config()
    got = run_sgd(opt, 3)
    want = 1.0 - sum(0.1 / (1 + 0.5 * t) * 0.5 for t in range(3))  # lr / (1 + decay * iterations)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert opt.current_learning_rate() == 0.1            # what callbacks see and set
    clone = optimizers.SGD.from_config(opt.get_config())
    assert clone.decay == 0.5 and clone.learning_rate == 0.1
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        optimizers.Adam(betas=0.9)
    with pytest.raises(ValueError, match="decay must be >= 0"):
        optimizers.SGD(decay=-1)


# ------------------------------------------------------------------ saving registration
def test_registered_layers_load_and_unregistered_ones_are_refused(numpy_backend, tmp_path):
    from minidl.custom_objects import _GLOBAL, _NAMES

    class Swish(layers.Activation):                     # a user class built on a layer
        def __init__(self, name=None, trainable=True):
            super().__init__("sigmoid", name=name, trainable=trainable)

        def get_config(self):
            return {"name": self.name, "trainable": self.trainable}

    path = str(tmp_path / "m.minidl")
    model = minidl.Sequential([layers.Input((3,)), layers.Dense(2), Swish()])
    model.save(path)
    with pytest.raises(ModelFileError, match="unknown layer class 'Swish'.*register"):
        minidl.saving.load_model(path)
    loaded = minidl.saving.load_model(path, custom_objects={"Swish": Swish})
    assert isinstance(loaded.layers[-1], Swish)
    try:
        registered = minidl.saving.register_keras_serializable(package="mine")(Swish)
        assert minidl.saving.get_registered_name(registered) == "mine>Swish"
        model = minidl.Sequential([layers.Input((3,)), layers.Dense(2), Swish()])
        model.save(path)
        loaded = minidl.saving.load_model(path)
        assert isinstance(loaded.layers[-1], Swish)
        np.testing.assert_allclose(loaded.predict(np.ones((2, 3))), model.predict(np.ones((2, 3))))
        with pytest.raises(ValueError, match="already registered"):
            minidl.saving.register_keras_serializable(package="mine", name="Swish")(layers.ReLU)
    finally:
        _GLOBAL.pop("mine>Swish", None)
        _NAMES.pop(Swish, None)


def test_models_built_from_input_shape_or_data_save_and_load(active_backend, tmp_path):
    x, y = blobs(n=32)
    from_arg = quiet(lambda: minidl.Sequential([layers.Dense(3, activation="softmax",
                                                             input_dim=4)]))
    from_data = minidl.Sequential([layers.Dense(3, activation="softmax")])
    for i, model in enumerate((from_arg, from_data)):
        model.compile(optimizer=optimizers.SGD(lr=0.1, decay=0.01),
                      loss="sparse_categorical_crossentropy", metrics=["acc"])
        model.fit(x, y, epochs=2, verbose=0)
        path = str(tmp_path / f"m{i}.minidl")
        model.save(path)
        loaded = minidl.saving.load_model(path)
        assert loaded.optimizer.decay == 0.01 and loaded.metrics_names == ["loss", "acc"]
        np.testing.assert_allclose(loaded.predict(x), model.predict(x), rtol=1e-6)


def test_from_config_takes_custom_objects_for_every_model_kind(active_backend, tmp_path):
    class Gate(layers.Activation):                      # a user class, not registered
        def __init__(self, name=None, trainable=True):
            super().__init__("sigmoid", name=name, trainable=trainable)

        def get_config(self):
            return {"name": self.name, "trainable": self.trainable}

    inner = minidl.Sequential([layers.Input((3,)), layers.Dense(2), Gate()], name="inner")
    a, b = layers.Input((3,), name="a"), layers.Input((3,), name="b")
    outer = minidl.Model([a, b], layers.concatenate([inner(a), inner(b)]))
    for model in (inner, outer):
        config = model.get_config()
        with pytest.raises(ValueError, match="unknown layer class 'Gate'"):
            type(model).from_config(config)
        rebuilt = type(model).from_config(config, custom_objects={"Gate": Gate})
        assert rebuilt.get_config() == config
    x = np.ones((2, 3), np.float32)
    outer.save(tmp_path / "outer.minidl")
    loaded = minidl.saving.load_model(tmp_path / "outer.minidl", custom_objects={"Gate": Gate})
    np.testing.assert_array_equal(loaded.predict([x, 2 * x]), outer.predict([x, 2 * x]))
    assert len(loaded.weights) == 2 and type(loaded.layers[2].layers[1]).__name__ == "Gate"
