"""ImageDataGenerator (Keras 2) with fit, the image file helpers and
image_dataset_from_directory on a generated folder of PNGs."""

import os
import sys

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.preprocessing.image import ImageDataGenerator, array_to_img, img_to_array, load_img, save_img
from minidl.utils import image_dataset_from_directory


@pytest.fixture(autouse=True)
def numpy_backend():
    minidl.set_backend("numpy")
    minidl.set_seed(0)


def images(n=8, h=8, w=10, c=3, seed=0):
    return np.random.default_rng(seed).uniform(0, 255, (n, h, w, c)).astype(np.float32)


def batches(iterator):
    return [(x.copy(), None if y is None else y.copy()) for x, y in iterator]


# ------------------------------------------------------------------ ImageDataGenerator
def test_standardize_is_keras_2s_formula():
    x = images()
    gen = ImageDataGenerator(rescale=1 / 255, featurewise_center=True, featurewise_std_normalization=True,
                             samplewise_center=True)
    gen.fit(x)
    scaled = x.astype(np.float64) / 255
    np.testing.assert_allclose(gen.mean, scaled.mean(axis=(0, 1, 2)), rtol=1e-5)
    np.testing.assert_allclose(gen.std, scaled.std(axis=(0, 1, 2)), rtol=1e-5)
    (out, _), = batches(gen.flow(x, batch_size=8, shuffle=False))
    expect = scaled - scaled.mean(axis=(1, 2, 3), keepdims=True)
    expect = (expect - gen.mean) / (gen.std + 1e-6)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-5)


def test_standardize_needs_fit():
    with pytest.raises(ValueError, match="featurewise_center needs fit"):
        batches(ImageDataGenerator(featurewise_center=True).flow(images()))


def test_flips_are_exact_and_about_half():
    x = images(n=400, h=3, w=4, c=1)
    (out, _), = batches(ImageDataGenerator(horizontal_flip=True).flow(x, batch_size=400, shuffle=False, seed=1))
    flipped = np.all(out == x[:, :, ::-1], axis=(1, 2, 3))
    assert np.all(flipped | np.all(out == x, axis=(1, 2, 3))) and 160 < flipped.sum() < 240


def keras2_matrix(theta, tx, ty, shear, zx, zy, h, w):
    """Keras 2's apply_affine_transform matrix (row, col coordinates) about the image centre."""
    t = np.array([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]])
    t = t @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    t = t @ np.array([[1, -np.sin(shear), 0], [0, np.cos(shear), 0], [0, 0, 1]])
    t = t @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    o = np.array([[1, 0, h / 2 - 0.5], [0, 1, w / 2 - 0.5], [0, 0, 1]])
    r = np.array([[1, 0, -(h / 2 - 0.5)], [0, 1, -(w / 2 - 0.5)], [0, 0, 1]])
    return o @ t @ r


def test_affine_transform_matches_scipy_as_keras_2_calls_it():
    ndimage = pytest.importorskip("scipy.ndimage")
    x = images(n=6, h=9, w=11)
    gen = ImageDataGenerator(rotation_range=30, width_shift_range=0.2, height_shift_range=2.0,
                             shear_range=10, zoom_range=0.2, fill_mode="nearest")
    rng = np.random.default_rng(5)
    transforms, _ = gen.draw_transforms(np.random.default_rng(5), 6, 9, 11)
    theta = np.deg2rad(rng.uniform(-30, 30, 6))
    tx, ty = rng.uniform(-2, 2, 6), rng.uniform(-0.2, 0.2, 6) * 11
    shear = np.deg2rad(rng.uniform(-10, 10, 6))
    zx, zy = rng.uniform(0.8, 1.2, (2, 6))
    out = np.empty_like(x)
    from minidl.preprocessing.image import transform_images
    transform_images(out, x, transforms, "bilinear", "nearest", 0.0)
    for i in range(6):
        m = keras2_matrix(theta[i], tx[i], ty[i], shear[i], zx[i], zy[i], 9, 11)
        for c in range(3):
            want = ndimage.affine_transform(x[i, :, :, c].astype(np.float64), m[:2, :2], m[:2, 2],
                                            order=1, mode="nearest")
            np.testing.assert_allclose(out[i, :, :, c], want, rtol=1e-4, atol=2e-3)


def test_channel_shift_stays_within_the_image_range():
    x = images(n=20)
    (out, _), = batches(ImageDataGenerator(channel_shift_range=50).flow(x, batch_size=20, shuffle=False, seed=2))
    shift = (out - x).reshape(20, -1)
    assert np.all(out.min(axis=(1, 2, 3)) >= x.min(axis=(1, 2, 3)) - 1e-3)
    assert np.all(out.max(axis=(1, 2, 3)) <= x.max(axis=(1, 2, 3)) + 1e-3)
    assert np.all(np.abs(np.median(shift, axis=1)) <= 50) and np.median(shift, axis=1).std() > 5


def test_c_and_numpy_paths_agree_and_flow_repeats_and_resumes():
    x, y = images(n=20), np.arange(20)
    gen = ImageDataGenerator(rotation_range=20, zoom_range=0.1, horizontal_flip=True, fill_mode="reflect")
    c = batches(gen.flow(x, y, batch_size=6, seed=3, kernel="c"))
    ref = batches(gen.flow(x, y, batch_size=6, seed=3, kernel="numpy"))
    for (a, ya), (b, yb) in zip(c, ref):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(ya, yb)
    it = gen.flow(x, y, batch_size=6, seed=3)
    first = batches(it)
    state = it.get_state()
    second = batches(it)
    it.set_state(state)
    again = batches(it)
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(first, second))
    for (a, ya), (b, yb) in zip(second, again):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ya, yb)


def test_validation_split_subsets():
    x, y = images(n=10), np.arange(10)
    gen = ImageDataGenerator(validation_split=0.3)
    val = batches(gen.flow(x, y, batch_size=10, shuffle=False, subset="validation"))
    train = batches(gen.flow(x, y, batch_size=10, shuffle=False, subset="training"))
    np.testing.assert_array_equal(val[0][1], [0, 1, 2])
    np.testing.assert_array_equal(train[0][1], np.arange(3, 10))
    with pytest.raises(ValueError, match="subset must be"):
        gen.flow(x, y, subset="test")


def test_flow_feeds_fit_evaluate_and_predict():
    x, y = images(n=32, h=8, w=8), np.arange(32) % 2
    gen = ImageDataGenerator(rescale=1 / 255, rotation_range=10, horizontal_flip=True)

    def train():
        minidl.set_seed(0)
        model = minidl.Sequential([layers.Input((8, 8, 3)), layers.Conv2D(4, 3, activation="relu"),
                                   layers.Flatten(), layers.Dense(2, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(gen.flow(x, y, batch_size=8, seed=1), epochs=2, verbose=0)
        return model, history
    model, history = train()
    assert len(history.history["loss"]) == 2
    for a, b in zip(model.get_weights(), train()[0].get_weights()):
        np.testing.assert_array_equal(a, b)
    plain = ImageDataGenerator(rescale=1 / 255)
    loss, _ = model.evaluate(plain.flow(x, y, batch_size=8, shuffle=False), verbose=0)
    assert np.isclose(loss, model.evaluate(x / 255, y, batch_size=8, verbose=0)[0], rtol=1e-5)
    np.testing.assert_allclose(model.predict(plain.flow(x, batch_size=8, shuffle=False)),
                               model.predict(x / 255, batch_size=8), rtol=1e-5)


@pytest.mark.parametrize("kwargs, message", [({"rotation_range": -1}, "rotation_range must be"),
                                             ({"fill_mode": "mirror"}, "fill_mode must be one of"),
                                             ({"zoom_range": (1, 2, 3)}, "zoom_range must be"),
                                             ({"validation_split": 1.5}, "validation_split must be")])
def test_generator_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ImageDataGenerator(**kwargs)


# ------------------------------------------------------------------ image files
def test_save_and_load_round_trip(tmp_path):
    pixels = np.random.default_rng(0).integers(0, 256, (5, 7, 3)).astype(np.float32)
    path = tmp_path / "a.png"
    save_img(path, pixels, scale=False)
    back = img_to_array(load_img(path))
    np.testing.assert_array_equal(back, pixels)
    assert img_to_array(load_img(path, color_mode="grayscale")).shape == (5, 7, 1)
    assert img_to_array(load_img(path, target_size=(3, 4))).shape == (3, 4, 3)
    scaled = img_to_array(array_to_img(pixels / 1000))   # scale=True spans 0..255
    assert scaled.min() == 0 and scaled.max() == 255


def test_save_img_never_leaves_a_half_written_file(tmp_path):
    path = tmp_path / "keep.png"
    save_img(path, np.zeros((4, 4, 3)), scale=False)
    before = path.read_bytes()
    with pytest.raises(Exception):
        save_img(path, np.zeros((4, 4, 3)), file_format="no-such-format")
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["keep.png"]
    with pytest.raises(ValueError, match="cannot tell the format"):
        save_img(tmp_path / "noextension", np.zeros((4, 4, 3)))


def test_missing_pillow_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install pillow"):
        array_to_img(np.zeros((2, 2, 3)))


# ------------------------------------------------------------------ image_dataset_from_directory
@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    for name, count in (("cats", 5), ("dogs", 4), ("emus", 3)):
        (tmp_path / name).mkdir()
        for i in range(count):
            h, w = rng.integers(6, 14, 2)
            save_img(tmp_path / name / f"{i}.png", rng.integers(0, 256, (h, w, 3)), scale=False)
    (tmp_path / "cats" / "notes.txt").write_text("not an image")
    return tmp_path


def test_dataset_classes_labels_and_sizes(folder):
    ds = image_dataset_from_directory(folder, image_size=(8, 8), batch_size=5, shuffle=False, verbose=False)
    assert ds.class_names == ["cats", "dogs", "emus"] and len(ds) == 3
    xs, ys = zip(*batches(ds))
    x, y = np.concatenate(xs), np.concatenate(ys)
    assert x.shape == (12, 8, 8, 3) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 255
    np.testing.assert_array_equal(y, [0] * 5 + [1] * 4 + [2] * 3)
    # resized as the Resizing layer resizes
    original = img_to_array(load_img(ds.file_paths[0]))[None]
    resizing = layers.Resizing(8, 8)
    model = minidl.Sequential([layers.Input(original.shape[1:]), resizing])
    np.testing.assert_allclose(x[0], model.predict(original)[0], rtol=1e-5, atol=1e-3)


def test_dataset_label_modes(folder):
    onehot = image_dataset_from_directory(folder, label_mode="categorical", image_size=(4, 4),
                                          shuffle=False, verbose=False)
    (_, y), = batches(onehot)
    assert y.shape == (12, 3) and np.all(y.sum(axis=1) == 1)
    (x, y), = batches(image_dataset_from_directory(folder, labels=None, image_size=(4, 4), verbose=False))
    assert y is None and x.shape == (12, 4, 4, 3)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        image_dataset_from_directory(folder, label_mode="binary", verbose=False)
    two = image_dataset_from_directory(folder, label_mode="binary", class_names=["dogs", "emus"],
                                       image_size=(4, 4), shuffle=False, verbose=False)
    (_, y), = batches(two)
    np.testing.assert_array_equal(y[:, 0], [0] * 4 + [1] * 3)


def test_dataset_validation_split_is_a_partition(folder):
    train, val = image_dataset_from_directory(folder, validation_split=0.25, subset="both", seed=7,
                                              image_size=(4, 4), verbose=False)
    assert len(train.file_paths) == 9 and len(val.file_paths) == 3
    assert sorted(train.file_paths + val.file_paths) == sorted(
        image_dataset_from_directory(folder, image_size=(4, 4), verbose=False).file_paths)
    again = image_dataset_from_directory(folder, validation_split=0.25, subset="validation", seed=7,
                                         image_size=(4, 4), verbose=False)
    assert again.file_paths == val.file_paths
    with pytest.raises(ValueError, match="pass a seed"):
        image_dataset_from_directory(folder, validation_split=0.25, subset="training", verbose=False)


def test_dataset_feeds_fit(folder):
    ds = image_dataset_from_directory(folder, image_size=(8, 8), batch_size=4, seed=1, verbose=False)
    model = minidl.Sequential([layers.Input((8, 8, 3)), layers.Rescaling(1 / 255), layers.RandomFlip(),
                               layers.Flatten(), layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    assert len(model.fit(ds, epochs=2, verbose=0).history["loss"]) == 2
