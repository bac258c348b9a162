"""Writes tests/data/keras_smart_resize.npz with real Keras 3.15.1:

    KERAS_BACKEND=torch /work/kvenv/bin/python tests/data/make_keras_smart_resize.py tests/data/keras_smart_resize.npz
"""
import numpy as np, keras, sys
rng = np.random.default_rng(4)
out = {}
for i, (shape, size, interp, fmt) in enumerate([((17, 9, 3), (8, 8), "bilinear", "channels_last"),
                                                ((2, 10, 23, 2), (6, 5), "nearest", "channels_last"),
                                                ((3, 12, 7), (5, 9), "bilinear", "channels_first")]):
    x = rng.random(shape).astype("float32") * 255
    out[f"x{i}"] = x
    out[f"y{i}"] = keras.preprocessing.image.smart_resize(x, size, interpolation=interp, data_format=fmt)
np.savez(sys.argv[1], **out)
