"""Writes augment_b_reference.npz: real Keras 3.15.1's outputs of Equalization,
ContrastLimitedAdaptiveHistogramEqualization (both deterministic) and RandomPerspective (its
resampling for given corner points), read by tests/test_augment_equalize.py. Run in a venv
with Keras 3.15.1 and torch (never by the test suite):

    KERAS_BACKEND=torch python tests/keras_reference/make_augment_b_reference.py

Keys: "x" (images 0..255 with a few repeated values), "x01" (the same in 0..1), "flat" (one
channel constant), "big" (2 x 37 x 29 x 3, not whole tiles), one per case of EQUALIZE and
CLAHE, and for each case of PERSPECTIVE: "<case>_end" (the (N, 4, 2) corners Keras drew)
and "<case>" (its output); "randaugment": RandAugment on "x" with its choice fixed to
RANDAUGMENT_OPS; "augmix": AugMix on "x" with the draws AUGMIX_*."""

import os

import numpy as np

# case -> (layer class name, constructor arguments, input key); the test builds the same
EQUALIZE = {
    "equalize": ("Equalization", dict(), "x"),
    "equalize_bins64": ("Equalization", dict(bins=64), "x"),
    "equalize01": ("Equalization", dict(value_range=(0, 1)), "x01"),
    "equalize_flat": ("Equalization", dict(), "flat"),
    "clahe": ("ContrastLimitedAdaptiveHistogramEqualization", dict(), "big"),
    "clahe_grid": ("ContrastLimitedAdaptiveHistogramEqualization",
                   dict(tile_grid_size=(3, 2), clip_limit=2.0), "big"),
    "clahe_noclip": ("ContrastLimitedAdaptiveHistogramEqualization",
                     dict(tile_grid_size=(2, 4), clip_limit=0.0), "big"),
    "clahe01": ("ContrastLimitedAdaptiveHistogramEqualization",
                dict(value_range=(0, 1), tile_grid_size=(4, 4)), "x01"),
    "clahe_clip": ("ContrastLimitedAdaptiveHistogramEqualization",
                   dict(tile_grid_size=(2, 2), clip_limit=4.0), "big"),
    "clahe_small": ("ContrastLimitedAdaptiveHistogramEqualization", dict(), "x"),
}

# RandomPerspective cases -> constructor arguments (factor 1: every image is transformed)
PERSPECTIVE = {
    "perspective": dict(factor=(1.0, 1.0), scale=1.0),
    "perspective_nearest": dict(factor=(1.0, 1.0), scale=0.6, interpolation="nearest",
                                fill_value=9.0),
}

# RandAugment's op indices (Keras's list: 9 auto_contrast, 10 equalization) -> key "randaugment"
RANDAUGMENT_OPS = (9, 10)

# AugMix's fixed draws -> key "augmix": its chains (op names), chain weights and m
AUGMIX_CHAINS = (("auto_contrast",), ("equalization", "auto_contrast"), ())
AUGMIX_WEIGHTS = (0.2, 0.5, 0.3)
AUGMIX_M = 0.4


def main():
    import keras
    rng = np.random.default_rng(1)
    arrays = {"x": np.round(rng.uniform(0, 255, (3, 9, 10, 3)) / 8).astype(np.float32) * 8}
    arrays["x01"] = arrays["x"] / np.float32(255)
    arrays["flat"] = arrays["x"].copy()
    arrays["flat"][..., 1] = 17.0
    arrays["big"] = rng.uniform(0, 255, (2, 37, 29, 3)).astype(np.float32)
    arrays["big"][0, :20] = np.floor(arrays["big"][0, :20] / 40) * 40 + 5
    for case, (name, kwargs, source) in EQUALIZE.items():
        layer = getattr(keras.layers, name)(**kwargs)
        arrays[case] = keras.ops.convert_to_numpy(layer(arrays[source], training=True))
    for case, kwargs in PERSPECTIVE.items():
        layer = keras.layers.RandomPerspective(seed=3, **kwargs)
        t = layer.get_random_transformation(arrays["big"], training=True)
        arrays[f"{case}_end"] = keras.ops.convert_to_numpy(t["end_points"])
        arrays[case] = keras.ops.convert_to_numpy(layer.transform_images(arrays["big"], t))
    # RandAugment with its choice fixed to its deterministic ops (auto_contrast, equalization),
    # factor 0: Keras's RandAugment runs every op's transform_images and keeps the chosen ones,
    # and on the torch backend RandomBrightness's adds its delta to its input in place, so
    # any other factor also brightens the images (a Keras bug minidl does not copy)
    layer = keras.layers.RandAugment(num_ops=2, factor=0.0)
    t = layer.get_random_transformation(arrays["x"], training=True)
    t["layer_idxes"] = np.array(RANDAUGMENT_OPS)
    arrays["randaugment"] = keras.ops.convert_to_numpy(layer.transform_images(arrays["x"], t))
    # AugMix with its draws fixed: chains of its deterministic ops, given weights
    layer = keras.layers.AugMix(all_ops=False)
    chains = [[{"layer_name": name, "transformation": None} for name in chain]
              for chain in AUGMIX_CHAINS]
    arrays["augmix"] = keras.ops.convert_to_numpy(layer.transform_images(arrays["x"], {
        "chain_mixing_weights": np.float32(AUGMIX_WEIGHTS), "weight_sample": np.float32(AUGMIX_M),
        "chain_transforms": chains}))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "augment_b_reference.npz")
    np.savez(path + ".tmp.npz", **arrays)
    os.replace(path + ".tmp.npz", path)


if __name__ == "__main__":
    main()
