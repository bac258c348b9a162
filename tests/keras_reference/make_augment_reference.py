"""Writes augment_reference.npz: real Keras 3.15.1's outputs of the augmentation layers in
their deterministic settings (probability 1, a factor (f, f), Solarization's defaults), read
by tests/test_augment_keras3.py. Run in a venv with Keras 3.15.1 and torch (never by the
test suite):

    KERAS_BACKEND=torch python tests/keras_reference/make_augment_reference.py

Keys: "x" (the input images, 0..255), "x01" (the same in 0..1), "flat" (two channels, one of
them constant in image 1), one per case of CASES, and
"hue_plus" / "hue_minus": RandomHue's two outcomes for a factor (0.4, 0.4), and the two
outcomes of each RandomShear case of SHEARS."""

import os

import numpy as np

# case -> (layer class name, constructor arguments, input key); the test builds the same
CASES = {
    "grayscale": ("RandomGrayscale", dict(factor=1.0), "x"),
    "invert": ("RandomInvert", dict(factor=(1.0, 1.0)), "x"),
    "invert01": ("RandomInvert", dict(factor=(1.0, 1.0), value_range=(0, 1)), "x01"),
    "posterize3": ("RandomPosterization", dict(factor=(3, 3)), "x"),
    "posterize5_01": ("RandomPosterization", dict(factor=(5, 5), value_range=(0, 1)), "x01"),
    "solarize": ("Solarization", dict(), "x"),
    "solarize01": ("Solarization", dict(value_range=(0, 1)), "x01"),
    "degenerate": ("RandomColorDegeneration", dict(factor=(0.7, 0.7)), "x"),
    "degenerate_neg": ("RandomColorDegeneration", dict(factor=(-0.6, -0.6)), "x"),
    "saturation_same": ("RandomSaturation", dict(factor=(0.5, 0.5)), "x"),
    "saturation_up": ("RandomSaturation", dict(factor=(0.6, 0.6)), "x"),
    "saturation_gray01": ("RandomSaturation", dict(factor=(0.0, 0.0), value_range=(0, 1)), "x01"),
    "hue_zero": ("RandomHue", dict(factor=(0.0, 0.0)), "x"),
    "autocontrast": ("AutoContrast", dict(), "x"),
    "autocontrast01": ("AutoContrast", dict(value_range=(0, 1)), "x01"),
    "autocontrast_flat": ("AutoContrast", dict(), "flat"),
    "jitter": ("RandomColorJitter", dict(brightness_factor=(0.1, 0.1), saturation_factor=(0.6, 0.6),
                                         hue_factor=(0.0, 0.0)), "x"),
    "jitter01": ("RandomColorJitter", dict(value_range=(0, 1), brightness_factor=(-0.2, -0.2),
                                           saturation_factor=(0.3, 0.3)), "x01"),
}

# RandomShear cases (fixed factors) -> constructor arguments; keys "<case>_plus", "<case>_minus"
SHEARS = {
    "shear_x": dict(x_factor=(0.3, 0.3)),
    "shear_xy_nearest": dict(x_factor=(0.2, 0.2), y_factor=(0.4, 0.4), interpolation="nearest",
                             fill_mode="constant", fill_value=7.0),
    "shear_y_wrap": dict(y_factor=(0.25, 0.25), fill_mode="wrap"),
}


def main():
    import keras
    rng = np.random.default_rng(0)
    arrays = {"x": rng.uniform(0, 255, (3, 5, 6, 3)).astype(np.float32)}
    arrays["x01"] = arrays["x"] / np.float32(255)
    arrays["flat"] = arrays["x"][:, :, :, :2].copy()   # a constant channel and a varying one
    arrays["flat"][1, :, :, 0] = 17.0
    for case, (name, kwargs, source) in CASES.items():
        layer = getattr(keras.layers, name)(**kwargs)
        arrays[case] = keras.ops.convert_to_numpy(layer(arrays[source], training=True))
    # RandomHue((0.4, 0.4)) shifts each image by +0.2 or -0.2 (a coin): both, for every image
    hue = keras.layers.RandomHue((0.4, 0.4))
    for key, sign in (("hue_plus", 1.0), ("hue_minus", -1.0)):
        shift = np.full((len(arrays["x"]),), 0.2 * sign, np.float32)
        arrays[key] = keras.ops.convert_to_numpy(hue.transform_images(arrays["x"], {"factor": shift}))
    # RandomShear with fixed factors shears each image one way or the other (a coin): both
    for case, kwargs in SHEARS.items():
        layer = keras.layers.RandomShear(**kwargs)
        for key, sign in (("plus", 1.0), ("minus", -1.0)):
            shear = np.tile(np.float32([[kwargs.get("x_factor", (0, 0))[0],
                                         kwargs.get("y_factor", (0, 0))[0]]]) * sign, (3, 1))
            arrays[f"{case}_{key}"] = keras.ops.convert_to_numpy(layer.transform_images(
                arrays["x"], {"shear_factor": shear, "input_shape": arrays["x"].shape}))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "augment_reference.npz")
    np.savez(path + ".tmp.npz", **arrays)
    os.replace(path + ".tmp.npz", path)


if __name__ == "__main__":
    main()
