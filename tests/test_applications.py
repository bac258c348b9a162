"""minidl.applications against the figures Keras 3.15.1 (torch backend) reports for the same
calls with weights=None: weight counts (total, trainable, non-trainable), the number of
layers, their names, the output shape and the model name. Layer names are compared through
NAMES: the SHA-1 (first 16 hex digits) of Keras's layer names, trailing "_<n>" counters of
automatic names removed, sorted and joined with newlines (Keras lists the layers in
topological order, minidl in order of creation; the set is the same)."""

import hashlib
import re

import numpy as np
import pytest

import minidl
from minidl import applications, layers, zoo
from minidl.applications import imagenet_utils

# (builder, keyword arguments): (total, trainable, non-trainable, layers, output shape, name, names)
KERAS = {
    ("ResNet50", ()): (25636712, 25583592, 53120, 177, (1000,), "resnet50", "97aa00e1c86b30e8"),
    ("ResNet50", (("include_top", False), ("input_shape", (32, 32, 3)))):
        (23587712, 23534592, 53120, 175, (1, 1, 2048), "resnet50", "45740b87378612f6"),
    ("ResNet50", (("include_top", False), ("input_shape", (32, 32, 3)), ("pooling", "avg"))):
        (23587712, 23534592, 53120, 176, (2048,), "resnet50", "cb2d0b6899a1cddc"),
    ("ResNet50", (("classes", 10), ("input_shape", (32, 32, 3)))):
        (23608202, 23555082, 53120, 177, (10,), "resnet50", "97aa00e1c86b30e8"),
    ("VGG16", (("include_top", False), ("input_shape", (32, 32, 3)), ("pooling", "max"))):
        (14714688, 14714688, 0, 20, (512,), "vgg16", "55f153b1e8f492a2"),
    ("VGG16", (("classes", 10), ("input_shape", (32, 32, 3)))):
        (33638218, 33638218, 0, 23, (10,), "vgg16", "ae513e8886a1caa8"),
    ("MobileNetV2", ()): (3538984, 3504872, 34112, 156, (1000,), "mobilenetv2_1.00_224",
                          "3c2334b1e71a2462"),
    ("MobileNetV2", (("alpha", 0.35), ("classes", 10), ("input_shape", (32, 32, 3)))):
        (423018, 408938, 14080, 156, (10,), "mobilenetv2_0.35_32", "3c2334b1e71a2462"),
    ("MobileNetV2", (("classes", 10), ("input_shape", (32, 32, 3)))):
        (2270794, 2236682, 34112, 156, (10,), "mobilenetv2_1.00_32", "3c2334b1e71a2462"),
    ("MobileNetV2", (("alpha", 1.4), ("include_top", False), ("input_shape", (33, 35, 3)))):
        (4363712, 4315776, 47936, 154, (2, 2, 1792), "mobilenetv2_1.40_33", "128c5859a8e30298"),
    ("MobileNetV2", (("alpha", 0.5), ("input_shape", (96, 96, 3)))):
        (1987224, 1968680, 18544, 156, (1000,), "mobilenetv2_0.50_96", "3c2334b1e71a2462"),
    ("EfficientNetB0", ()): (5330571, 5288548, 42023, 240, (1000,), "efficientnetb0",
                             "225a6508b23b1f29"),
    ("EfficientNetB0", (("classes", 10), ("input_shape", (32, 32, 3)))):
        (4062381, 4020358, 42023, 240, (10,), "efficientnetb0", "225a6508b23b1f29"),
    ("EfficientNetB0", (("include_top", False), ("input_shape", (33, 35, 3)), ("pooling", "avg"))):
        (4049571, 4007548, 42023, 238, (1280,), "efficientnetb0", "edd3e70de0970075"),
}


def names_digest(model):
    names = sorted(re.sub(r"_\d+$", "", layer.name) for layer in model.layers)
    return hashlib.sha1("\n".join(names).encode()).hexdigest()[:16]


def sizes(weights):
    return sum(int(np.prod(w.shape)) for w in weights)


@pytest.fixture(autouse=True)
def numpy_first():
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    yield
    minidl.set_backend("numpy")


@pytest.mark.parametrize("builder, kwargs", list(KERAS), ids=lambda v: str(v))
def test_architectures_match_keras(builder, kwargs):
    total, trainable, frozen, count, out, name, digest = KERAS[(builder, kwargs)]
    model = getattr(applications, builder)(weights=None, **dict(kwargs))
    assert model.count_params() == total
    assert sizes(model.trainable_weights) == trainable
    assert sizes(model.non_trainable_weights) == frozen
    assert len(model.layers) == count and type(model.layers[0]).__name__ == "InputLayer"
    assert model.output_shape == (None,) + out and model.name == name
    assert names_digest(model) == digest


def test_resnet50_blocks_and_default_input():
    model = applications.ResNet50(weights=None)
    assert model.input_shape == (None, 224, 224, 3)
    names = [layer.name for layer in model.layers]
    assert names[1:7] == ["conv1_pad", "conv1_conv", "conv1_bn", "conv1_relu", "pool1_pad",
                          "pool1_pool"]
    assert names[-2:] == ["avg_pool", "predictions"]
    assert model.get_layer("conv3_block1_1_conv").strides == (2, 2)
    assert model.get_layer("conv2_block1_1_conv").strides == (1, 1)
    assert model.get_layer("conv4_block6_add") is not None
    assert model.get_layer("conv1_bn").epsilon == pytest.approx(1.001e-5)
    assert model.get_layer("predictions").activation is minidl.activations.softmax


@pytest.mark.parametrize("builder, features, name, params", [
    ("ResNet50", 2048, "resnet50", 23587712), ("VGG16", 512, "vgg16", 14714688),
    ("MobileNetV2", 1280, "mobilenetv2_1.00_None", 2257984),
    ("EfficientNetB0", 1280, "efficientnetb0", 4049571)])
def test_without_top_any_image_size(builder, features, name, params):
    """include_top=False without input_shape: inputs (None, None, None, 3), as Keras 3.15.1
    (same output shape, name and weight count)."""
    model = getattr(applications, builder)(weights=None, include_top=False, pooling="avg")
    assert model.input_shape == (None, None, None, 3) and model.output_shape == (None, features)
    assert model.name == name and model.count_params() == params
    for hw in ((32, 32), (40, 48)):
        x = np.random.default_rng(0).uniform(0, 255, (2,) + hw + (3,)).astype(np.float32)
        out = model.predict(x, verbose=0)
        assert out.shape == (2, features) and np.all(np.isfinite(out))


def test_module_style_names():
    assert applications.resnet50.ResNet50 is applications.ResNet50
    assert applications.resnet.ResNet50 is applications.ResNet50
    assert applications.vgg16.VGG16 is applications.VGG16
    assert applications.mobilenet_v2.MobileNetV2 is applications.MobileNetV2
    assert applications.efficientnet.EfficientNetB0 is applications.EfficientNetB0


def test_deeper_resnets_count_their_blocks():
    for builder, blocks in (("ResNet101", 23), ("ResNet152", 36)):
        model = getattr(applications, builder)(weights=None, include_top=False,
                                               input_shape=(32, 32, 3))
        names = {layer.name for layer in model.layers}
        assert f"conv4_block{blocks}_out" in names and f"conv4_block{blocks + 1}_out" not in names


@pytest.mark.parametrize("builder", ["ResNet50", "VGG16", "MobileNetV2", "EfficientNetB0"])
def test_imagenet_weights_missing_name_the_file_and_folder(builder, tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"weights='imagenet'.*(resnet50_weights_tf_dim"
                                                r"|vgg16_weights|mobilenet_v2_weights_tf_dim_ord"
                                                r"ering_tf_kernels_1.0_224.h5|efficientnetb0.h5)"
                                                r".*" + str(tmp_path / "models")):
        getattr(applications, builder)()      # Keras's default weights="imagenet"
    with pytest.raises(ValueError, match="weights must be None"):
        getattr(applications, builder)(weights="no/such/file.weights")


def test_argument_errors():
    with pytest.raises(ValueError, match="pooling must be None, 'avg' or 'max'"):
        applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3),
                              pooling="mean")
    with pytest.raises(ValueError, match="at least 32x32"):
        applications.VGG16(weights=None, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="three integers"):
        applications.VGG16(weights=None, input_shape=(32, 32))
    with pytest.raises(ValueError, match="classes must be a positive int"):
        applications.ResNet50(weights=None, input_shape=(32, 32, 3), classes=0)
    with pytest.raises(ValueError, match="input_tensor must be a symbolic tensor"):
        applications.VGG16(weights=None, input_tensor=np.zeros((1, 32, 32, 3)))
    with pytest.raises(ValueError, match="does not match the input_tensor"):
        applications.VGG16(weights=None, input_tensor=layers.Input((32, 32, 3)),
                           input_shape=(48, 48, 3))


def test_input_tensor_and_logits():
    inputs = layers.Input((32, 32, 3))
    scaled = layers.Rescaling(1 / 255.0)(inputs)
    model = applications.VGG16(weights=None, include_top=True, input_tensor=scaled, classes=7,
                               classifier_activation=None)
    assert model.inputs[0] is inputs and model.output_shape == (None, 7)
    assert model.get_layer("predictions").activation is minidl.activations.linear
    assert type(model.layers[1]).__name__ == "Rescaling"


def test_weights_file_is_loaded(tmp_path):
    path = str(tmp_path / "resnet.weights.h5")
    first = applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3),
                                  pooling="avg")
    first.save_weights(path)
    minidl.set_seed(1)
    again = applications.ResNet50(weights=path, include_top=False, input_shape=(32, 32, 3),
                                  pooling="avg")
    fresh = applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3),
                                  pooling="avg")
    for a, b, c in zip(first.get_weights(), again.get_weights(), fresh.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, c) for a, c in zip(first.get_weights(), fresh.get_weights()))


@pytest.mark.parametrize("builder", ["ResNet50", "VGG16"])
def test_predict_on_a_tiny_batch(builder):
    model = getattr(applications, builder)(weights=None, input_shape=(32, 32, 3), classes=10)
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype(np.float32)
    probs = model.predict(x, verbose=0)
    assert probs.shape == (2, 10) and np.all(np.isfinite(probs))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_mobilenet_v2_blocks():
    model = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=10)
    depthwise = [layer for layer in model.layers if type(layer).__name__ == "DepthwiseConv2D"]
    assert len(depthwise) == 17 and not any(layer.use_bias for layer in depthwise)
    assert [layer.name for layer in depthwise if layer.strides == (2, 2)] == [
        "block_1_depthwise", "block_3_depthwise", "block_6_depthwise", "block_13_depthwise"]
    assert model.get_layer("block_1_pad").padding == ((0, 1), (0, 1))
    assert model.get_layer("Conv1_relu").max_value == 6.0
    assert model.get_layer("bn_Conv1").momentum == pytest.approx(0.999)
    assert model.get_layer("Conv1").filters == 16 and model.get_layer("Conv_1").filters == 1280
    assert sum(type(layer).__name__ == "Add" for layer in model.layers) == 10
    with pytest.raises(ValueError, match="alpha must be a positive number"):
        applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0)


def test_efficientnet_b0_blocks():
    model = applications.EfficientNetB0(weights=None, input_shape=(32, 32, 3), classes=10)
    drops = {layer.name: layer for layer in model.layers if type(layer).__name__ == "Dropout"}
    # stochastic depth on the 9 identity blocks, rate 0.2 * block index / 16, and the top dropout
    assert len(drops) == 10 and drops["top_dropout"].rate == pytest.approx(0.2)
    assert drops["block2b_drop"].rate == pytest.approx(0.2 * 2 / 16)   # Keras: 0.025
    assert drops["block2b_drop"].noise_shape == (None, 1, 1, 1)
    assert model.get_layer("block1a_se_excite").output_shape == (16, 16, 32)
    assert model.get_layer("block1a_se_reshape").output_shape == (1, 1, 32)
    assert model.get_layer("block6a_dwconv").kernel_size == (5, 5)
    assert model.get_layer("stem_activation").activation is minidl.activations.silu
    assert [type(layer).__name__ for layer in model.layers[1:3]] == ["Rescaling", "Normalization"]


@pytest.mark.parametrize("builder", ["MobileNetV2", "EfficientNetB0"])
def test_predict_as_keras_would_without_weights(builder):
    """predict on a tiny batch: probabilities (EfficientNet's stem Normalization, never
    adapted, is the identity)."""
    model = getattr(applications, builder)(weights=None, input_shape=(32, 32, 3), classes=10)
    x = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype(np.float32)
    probs = model.predict(x, verbose=0)
    assert probs.shape == (2, 10) and np.all(np.isfinite(probs))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_mobilenet_v2_trains_on_every_backend(active_backend):
    model = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35,
                                     classes=10)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (8, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, 8)
    losses = model.fit(x, y, batch_size=8, epochs=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_efficientnet_b0_trains_on_cpu():
    minidl.set_backend("cpu")
    model = applications.EfficientNetB0(weights=None, input_shape=(32, 32, 3), classes=10)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (8, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, 8)
    losses = model.fit(x, y, batch_size=8, epochs=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_zoo_mobilenet_v2():
    model = zoo.build("mobilenet_v2")
    assert model.input_shape == (None, 32, 32, 3) and model.output_shape == (None, 10)
    assert model.count_params() == 2270794 and not model.compiled   # Keras's figure above


def test_preprocess_input_modes_as_keras():
    pixels = np.array([[[[10.0, 20.0, 30.0], [255.0, 0.0, 128.0]]]], np.float32)   # (1, 1, 2, 3)
    keep = pixels.copy()
    caffe = applications.resnet50.preprocess_input(pixels)
    np.testing.assert_allclose(caffe[0, 0, 0], [30 - 103.939, 20 - 116.779, 10 - 123.68],
                               rtol=1e-6)
    np.testing.assert_array_equal(pixels, keep)       # never changed in place
    tf = imagenet_utils.preprocess_input(pixels, mode="tf")
    np.testing.assert_allclose(tf[0, 0, 1], [1.0, -1.0, 128 / 127.5 - 1], atol=1e-6)
    torch = imagenet_utils.preprocess_input(pixels, mode="torch")
    np.testing.assert_allclose(torch[0, 0, 0], (np.array([10, 20, 30]) / 255 - [0.485, 0.456, 0.406])
                               / [0.229, 0.224, 0.225], rtol=1e-5)
    first = imagenet_utils.preprocess_input(np.transpose(pixels, (0, 3, 1, 2)),
                                            data_format="channels_first")
    np.testing.assert_allclose(np.transpose(first, (0, 2, 3, 1)), caffe, rtol=1e-6)
    assert imagenet_utils.preprocess_input(np.zeros((1, 2, 2, 3), np.uint8)).dtype == np.float32
    with pytest.raises(ValueError, match="mode must be one of"):
        imagenet_utils.preprocess_input(pixels, mode="imagenet")


def test_decode_predictions_says_what_it_needs():
    with pytest.raises(ValueError, match=r"shape \(samples, 1000\)"):
        applications.vgg16.decode_predictions(np.zeros((2, 10)))
    with pytest.raises(RuntimeError, match="imagenet_class_index.json"):
        applications.vgg16.decode_predictions(np.zeros((2, 1000)))


def test_correct_pad_as_keras():
    assert imagenet_utils.correct_pad((32, 32, 3), 3) == ((0, 1), (0, 1))
    assert imagenet_utils.correct_pad((33, 35, 3), 5) == ((2, 2), (2, 2))
    assert imagenet_utils.correct_pad((33, 32, 3), (3, 3)) == ((1, 1), (0, 1))
