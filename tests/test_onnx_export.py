"""model.export(path, format="onnx") (minidl/keras_files/onnx_export.py): every exportable
layer on every backend, run by ONNX Runtime against minidl's predict."""

import os

import numpy as np
import pytest

import minidl
import minidl.applications
import minidl.zoo
from minidl import layers as L

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def randomize(model, seed=0):
    """Random weights (variances positive), so that no layer is an identity by chance."""
    rng = np.random.default_rng(seed)
    for layer in model._weighted_layers:
        for sub in (layer._weighted_layers if hasattr(layer, "graph") else [layer]):
            if sub.weights:
                sub.set_weights([np.abs(rng.standard_normal(w.shape)).astype("float32") + 0.5
                                 if "variance" in w.name else
                                 rng.standard_normal(w.shape).astype("float32") * 0.3
                                 for w in sub.weights])
    return model


def run_onnx(path, xs):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), xs)})


def assert_exports(model, xs, path, atol=1e-5):
    model.export(path, format="onnx", verbose=False)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    assert proto.opset_import[0].version >= 17
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    want = model.predict(xs if len(xs) > 1 else xs[0], verbose=0)
    want = want if isinstance(want, list) else [want]
    got = run_onnx(path, xs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=atol, rtol=1e-5)


def layer_zoo():
    return minidl.Sequential([
        L.InputLayer((12, 12, 3)), L.Rescaling(0.5, offset=0.1), L.ZeroPadding2D(1),
        L.Conv2D(4, 3, activation="relu"),
        L.DepthwiseConv2D(3, padding="same", depth_multiplier=2), L.LeakyReLU(0.1),
        L.SeparableConv2D(5, 3, padding="same"), L.PReLU(), L.BatchNormalization(),
        L.MaxPooling2D(2), L.Conv2DTranspose(3, 3, strides=2, padding="same"), L.ELU(),
        L.UpSampling2D(2), L.Cropping2D(2),
        L.Conv2D(4, 3, strides=2, padding="same", activation="gelu"),
        L.AveragePooling2D(2, strides=1, padding="same"), L.ReLU(max_value=6.0),
        L.GlobalAveragePooling2D(), L.Dense(6, activation="silu"), L.LayerNormalization(),
        L.Reshape((2, 3)), L.Permute((2, 1)), L.Flatten(), L.RepeatVector(2), L.Flatten(),
        L.Dropout(0.1), L.GaussianNoise(0.1), L.Dense(4, activation="softmax")], name="zoo")


def test_layer_zoo_exports(active_backend, tmp_path):
    model = randomize(layer_zoo())
    x = np.random.default_rng(1).standard_normal((3, 12, 12, 3)).astype("float32")
    assert_exports(model, [x], tmp_path / "zoo.onnx")
    # the batch axis is dynamic
    np.testing.assert_allclose(run_onnx(tmp_path / "zoo.onnx", [x[:1]])[0],
                               model.predict(x[:1], verbose=0), atol=1e-5)


@pytest.mark.parametrize("activation", ["sigmoid", "tanh", "softplus", "softsign", "selu",
                                        "elu", "exponential", "hard_sigmoid", "hard_silu",
                                        "mish", "gelu_approximate", "relu6", "leaky_relu"])
def test_activations_export(activation, tmp_path):
    minidl.set_backend("numpy")
    model = randomize(minidl.Sequential([L.InputLayer((5,)), L.Dense(4, activation=activation)]))
    x = np.random.default_rng(2).standard_normal((3, 5)).astype("float32") * 2
    assert_exports(model, [x], tmp_path / "a.onnx")


@pytest.mark.parametrize("layer, shape", [
    (L.Conv2DTranspose(3, 1, strides=2, padding="same"), (5, 5, 2)),
    (L.Conv2DTranspose(3, 5, strides=2, padding="valid"), (5, 4, 2)),
    (L.Conv2DTranspose(3, 1, strides=3, padding="valid"), (4, 4, 2)),
    (L.Conv2D(2, 4, strides=3, padding="same", dilation_rate=1), (9, 9, 2)),
    (L.Conv2D(4, 3, padding="same", dilation_rate=2), (9, 9, 2)),
    (L.Conv2D(4, 3, groups=2), (7, 7, 4)),
    (L.MaxPooling2D(3, strides=2, padding="same"), (8, 7, 2)),
    (L.GlobalMaxPooling2D(keepdims=True), (4, 4, 3)),
    (L.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.25]), (3, 2)),
    (L.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.25], invert=True), (3, 2)),
    (L.Softmax(axis=1), (3, 4)),
])
def test_window_and_shape_layers_export(layer, shape, tmp_path):
    minidl.set_backend("numpy")
    model = randomize(minidl.Sequential([L.InputLayer(shape), layer]))
    x = np.random.default_rng(3).standard_normal((2,) + shape).astype("float32")
    assert_exports(model, [x], tmp_path / "w.onnx")


def test_functional_nested_model_exports(active_backend, tmp_path):
    a, b = L.Input((6,)), L.Input((6,))
    shared = L.Dense(5, activation="gelu")
    s = L.Subtract()([shared(a), shared(b)])
    p = L.Multiply()([shared(a), shared(b)])
    extremes = L.Average()([L.Maximum()([s, p]), L.Minimum()([s, p])])
    merged = L.Concatenate()([extremes, L.Add()([s, p])])
    inner = minidl.Sequential([L.InputLayer((10,)), L.Dense(4, activation="tanh"),
                               L.LayerNormalization()])
    model = randomize(minidl.Model([a, b], [L.Dense(2)(inner(merged)), L.Softmax()(merged)]))
    xs = [np.random.default_rng(i).standard_normal((3, 6)).astype("float32") for i in range(2)]
    assert_exports(model, xs, tmp_path / "fun.onnx")


def test_keras_fixture_models_export(tmp_path):
    pytest.importorskip("h5py")
    minidl.set_backend("numpy")
    folder = os.path.join(os.path.dirname(__file__), "fixtures", "keras_files")
    for name in ("cnn", "two_inputs", "nested"):
        model = minidl.models.load_model(os.path.join(folder, f"{name}.keras"))
        xs = [np.load(os.path.join(folder, f"{name}_x{i}.npy")) for i in range(2)
              if os.path.exists(os.path.join(folder, f"{name}_x{i}.npy"))]
        assert_exports(model, xs, tmp_path / f"{name}.onnx")


@pytest.mark.parametrize("build", ["MobileNetV2", "EfficientNetB0", "ResNet50"])
def test_applications_export(build, tmp_path):
    minidl.set_backend("cpu" if "cpu" in minidl.available_backends() else "numpy")
    size = {"MobileNetV2": 64, "EfficientNetB0": 64, "ResNet50": 64}[build]
    model = getattr(minidl.applications, build)(weights=None, input_shape=(size, size, 3),
                                                classes=10, classifier_activation=None)
    randomize(model, 4)
    x = np.random.default_rng(5).uniform(0, 255, (2, size, size, 3)).astype("float32")
    model.export(tmp_path / "app.onnx", format="onnx", verbose=False)
    got, want = run_onnx(tmp_path / "app.onnx", [x])[0], model.predict(x, verbose=0)
    scale = max(1.0, float(np.abs(want).max()))
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got / scale, want / scale, atol=1e-5)
    np.testing.assert_array_equal(got.argmax(1), want.argmax(1))


def test_what_onnx_cannot_express_is_refused_by_name(tmp_path):
    minidl.set_backend("numpy")
    model = minidl.Sequential([L.InputLayer((3,)), L.Lambda(lambda t: t * 2, name="doubler"),
                               L.Dense(2)])
    with pytest.raises(ValueError, match="Lambda 'doubler' cannot be exported"):
        model.export(tmp_path / "m.onnx", format="onnx")

    class Twice(minidl.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = L.Dense(2)

        def call(self, inputs):
            return self.dense(inputs) * 2.0

    subclassed = Twice(name="twice")
    subclassed.build((None, 3))
    with pytest.raises(ValueError, match="'twice' cannot be exported.*Python code"):
        subclassed.export(tmp_path / "s.onnx", format="onnx")
    assert not os.path.exists(tmp_path / "m.onnx")
    with pytest.raises(ValueError, match="format='onnx'"):
        model.export(tmp_path / "m", format="tf_saved_model")
    plain = minidl.Sequential([L.InputLayer((3,)), L.Dense(2)])
    with pytest.raises(ValueError, match="opset_version"):
        plain.export(tmp_path / "m.onnx", format="onnx", opset_version=11)


def test_quantized_model_exports_as_qdq(active_backend, tmp_path):
    from minidl.quantization import quantize
    rng = np.random.default_rng(6)
    inputs = L.Input((12, 12, 3))
    h = L.ReLU()(L.BatchNormalization()(L.Conv2D(8, 3, padding="same")(inputs)))
    h = L.Activation("relu")(L.Add()([h, L.Conv2D(8, 1)(inputs)]))
    h = L.Conv2D(12, 3, strides=2, padding="same", activation="relu")(L.MaxPooling2D()(h))
    h = L.Dense(16, activation="relu")(L.Dropout(0.2)(L.Flatten()(h)))
    model = randomize(minidl.Model(inputs, L.Dense(10, activation="softmax")(h)), 6)
    x = rng.standard_normal((48, 12, 12, 3)).astype("float32")
    qmodel = quantize(model, x[:32])
    qmodel.export(tmp_path / "q.onnx", verbose=False)
    proto = onnx.load(str(tmp_path / "q.onnx"))
    ops = {n.op_type for n in proto.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv", "MatMul"} <= ops
    assert "BatchNormalization" not in ops          # folded into the int8 weights, as minidl
    int8 = [t for t in proto.graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert len(int8) >= 8                          # weights and their zero points
    got, want = run_onnx(tmp_path / "q.onnx", [x])[0], qmodel.predict(x)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_array_equal(got.argmax(1), want.argmax(1))


@pytest.mark.parametrize("name", ["keras_cnn", "tf_tutorial", "resnet20", "airbench94",
                                  "mobilenet_v2"])
def test_zoo_models_export(name, tmp_path):
    minidl.set_backend("cpu" if "cpu" in minidl.available_backends() else "numpy")
    model = randomize(minidl.zoo.build(name), 8)
    shape = model.input_shape[1:]
    x = np.random.default_rng(9).standard_normal((2,) + tuple(shape)).astype("float32")
    model.export(tmp_path / "zoo.onnx", format="onnx", verbose=False)
    got, want = run_onnx(tmp_path / "zoo.onnx", [x])[0], model.predict(x, verbose=0)
    assert np.isfinite(want).all()
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got / scale, want / scale, atol=1e-5)
