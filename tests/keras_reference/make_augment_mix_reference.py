"""Writes augment_mix_reference.npz: real Keras 3.15.1's outputs of RandomGaussianBlur and
RandomSharpness in their deterministic settings (probability 1, a sigma or factor (f, f)),
read by tests/test_augment_mixing.py. Run in a venv with Keras 3.15.1 and torch (never by the
test suite):

    KERAS_BACKEND=torch python tests/keras_reference/make_augment_mix_reference.py

Keys: "x" (the input images, 0..255), "x01" (the same in 0..1), one per case of CASES, and
"configs": the JSON list of Keras's serialize_keras_object of each layer of CONFIGS."""

import json
import os

import numpy as np

# case -> (layer class name, constructor arguments, input key); the test builds the same
CASES = {
    "blur": ("RandomGaussianBlur", dict(factor=(1.0, 1.0), sigma=(0.7, 0.7)), "x"),
    "blur5": ("RandomGaussianBlur", dict(factor=(1.0, 1.0), kernel_size=5, sigma=(0.4, 0.4)), "x"),
    "blur01": ("RandomGaussianBlur", dict(factor=(1.0, 1.0), sigma=(1.0, 1.0), value_range=(0, 1)), "x01"),
    "blur_none": ("RandomGaussianBlur", dict(factor=(0.0, 0.0)), "x"),
    "sharpen": ("RandomSharpness", dict(factor=(0.9, 0.9)), "x"),
    "soften": ("RandomSharpness", dict(factor=(0.2, 0.2)), "x"),
    "sharpness_same": ("RandomSharpness", dict(factor=(0.5, 0.5)), "x"),
    "sharpen01": ("RandomSharpness", dict(factor=(1.0, 1.0), value_range=(0, 1)), "x01"),
    "erase_none": ("RandomErasing", dict(factor=(0.0, 0.0)), "x"),
}

# layer class name -> constructor arguments of the layers whose Keras configs minidl must load
CONFIGS = [("RandomErasing", dict(factor=0.4, scale=(0.1, 0.2), fill_value=3.0, seed=2)),
           ("RandomGaussianBlur", dict(factor=(0.2, 0.9), kernel_size=5, sigma=(0.2, 0.6))),
           ("RandomSharpness", dict(factor=0.3, value_range=(0, 1))),
           ("MixUp", dict(alpha=0.4, seed=7)), ("CutMix", dict(factor=0.7)),
           ("Pipeline", dict(layers=[("MixUp", dict(alpha=0.3)), ("RandomSharpness", dict(factor=0.2))]))]


def main():
    import keras
    rng = np.random.default_rng(0)
    arrays = {"x": rng.uniform(0, 255, (3, 5, 6, 3)).astype(np.float32)}
    arrays["x01"] = arrays["x"] / np.float32(255)
    for case, (name, kwargs, source) in CASES.items():
        layer = getattr(keras.layers, name)(**kwargs)
        arrays[case] = keras.ops.convert_to_numpy(layer(arrays[source], training=True))
    def make(name, kwargs):
        if name == "Pipeline":
            kwargs = dict(layers=[make(*spec) for spec in kwargs["layers"]])
        return getattr(keras.layers, name)(**kwargs)
    arrays["configs"] = np.array(json.dumps(
        [keras.saving.serialize_keras_object(make(name, kwargs)) for name, kwargs in CONFIGS]))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "augment_mix_reference.npz")
    temporary = path + ".tmp.npz"
    np.savez(temporary, **arrays)
    os.replace(temporary, path)


if __name__ == "__main__":
    main()
