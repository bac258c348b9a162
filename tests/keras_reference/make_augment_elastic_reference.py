"""Writes augment_elastic_reference.npz: real Keras 3.15.1's resampling and elastic transform
for given numbers, read by tests/test_augment_elastic.py. Run in a venv with Keras 3.15.1 and
torch (never by the test suite):

    KERAS_BACKEND=torch python tests/keras_reference/make_augment_elastic_reference.py

Keys: "x" (2 x 9 x 11 x 3 images, whole numbers in 0..255), "field" (2 x 9 x 11 x 2 (dy, dx)
displacements, several pixels wide so that taps fall outside), and for each (interpolation,
fill_mode) of RESAMPLE "map_<interpolation>_<fill_mode>": keras.ops.image.map_coordinates of
each image's channels at (i + dy, j + dx) (fill_value FILL_VALUE). For each case of ELASTIC:
"big" (2 x 24 x 20 x 3 images), "<case>_noise" (2 x 24 x 20 x 2: the N(0, 1) draws (dy, dx)
that torch.normal is made to return) and "<case>": Keras's backend elastic_transform of "big"
with the alpha and sigma RandomElasticTransform derives from the factor."""

import os

import numpy as np

FILL_VALUE = -7.0
RESAMPLE = [(interpolation, fill_mode) for interpolation in ("nearest", "bilinear")
            for fill_mode in ("constant", "nearest", "wrap", "reflect", "mirror")]
# case -> (distortion factor, interpolation, fill_mode)
ELASTIC = {
    "elastic_reflect": (0.8, "bilinear", "reflect"),
    "elastic_constant": (0.5, "bilinear", "constant"),
    "elastic_small": (0.1, "bilinear", "nearest"),
}


def inputs():
    rng = np.random.default_rng(24)
    x = np.floor(rng.uniform(0, 256, (2, 9, 11, 3))).astype(np.float32)
    field = (rng.standard_normal((2, 9, 11, 2)) * 4).astype(np.float32)
    big = np.floor(rng.uniform(0, 256, (2, 24, 20, 3))).astype(np.float32)
    noise = {case: rng.standard_normal((2, 24, 20, 2)).astype(np.float32) for case in ELASTIC}
    return x, field, big, noise


def main():
    import torch
    from keras import ops
    from keras.src.backend.torch import image as torch_image
    from keras.src.layers import RandomElasticTransform

    x, field, big, noise = inputs()
    result = {"x": x, "field": field, "big": big}
    n, h, w, c = x.shape
    rows = np.arange(h, dtype=np.float32)[None, :, None] + field[..., 0]
    cols = np.arange(w, dtype=np.float32)[None, None, :] + field[..., 1]
    for interpolation, fill_mode in RESAMPLE:
        out = np.zeros_like(x)
        for s in range(n):
            for ch in range(c):
                out[s, ..., ch] = ops.convert_to_numpy(ops.image.map_coordinates(
                    x[s, ..., ch], [rows[s], cols[s]], order=int(interpolation == "bilinear"),
                    fill_mode=fill_mode, fill_value=FILL_VALUE))
        result[f"map_{interpolation}_{fill_mode}"] = out
    layer = RandomElasticTransform()
    for case, (factor, interpolation, fill_mode) in ELASTIC.items():
        alpha, sigma = layer.get_elastic_transform_params(big.shape[1], big.shape[2], factor)
        draws = [torch.from_numpy(noise[case][..., 1].copy()),    # Keras draws dx first, then dy
                 torch.from_numpy(noise[case][..., 0].copy())]
        real_normal = torch.normal
        torch.normal = lambda *args, **kwargs: draws.pop(0)
        try:
            out = torch_image.elastic_transform(big, alpha=alpha, sigma=sigma,
                                                interpolation=interpolation, fill_mode=fill_mode,
                                                fill_value=FILL_VALUE, data_format="channels_last")
        finally:
            torch.normal = real_normal
        assert not draws
        result[f"{case}_noise"] = noise[case]
        result[case] = ops.convert_to_numpy(out)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "augment_elastic_reference.npz")
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **result)
    os.replace(tmp, path)
    print("wrote", path, sorted(result))


if __name__ == "__main__":
    main()
