"""Ternary kernels (larq's ste_tern, w in {-1, 0, +1}) on the binary inference ops as two
bit-planes: lq.convert's integer sums against numpy's (sign input, ternary kernel, larq's
padding) on every backend, with Ternary Weight Networks' threshold too, and folded with the
BatchNormalization after them."""

import numpy as np
import pytest

import minidl
import minidl.larq as lq


def larq_sign(x):
    return np.where(x >= 0, 1.0, -1.0)


def ternary(w, threshold):
    return np.where(w > threshold, 1.0, np.where(w < -threshold, -1.0, 0.0))


def conv_reference(x, w, pad_values):
    """'same' 3x3 convolution of sign(x) padded with pad_values, in float64 (exact integers)."""
    xs = np.pad(larq_sign(x), ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=pad_values)
    n, h, wd, _ = x.shape
    out = np.zeros((n, h, wd, w.shape[-1]))
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("nhwc,cf->nhwf", xs[:, dy:dy + h, dx:dx + wd], w[dy, dx])
    return out


@pytest.mark.parametrize("pad_values, twn", [(0.0, False), (1.0, False), (1.0, True)])
def test_ternary_conv_gives_the_exact_integer_sums(active_backend, pad_values, twn):
    rng = np.random.default_rng(0)
    quantizer = lq.quantizers.SteTern(threshold_value=0.3, ternary_weight_networks=twn)
    layer = lq.layers.QuantConv2D(37, 3, padding="same", pad_values=pad_values, input_quantizer="ste_sign",
                                  kernel_quantizer=quantizer, use_bias=False)
    model = minidl.Sequential([minidl.layers.Input((5, 6, 40)), layer])
    kernel = rng.standard_normal((3, 3, 40, 37)).astype(np.float32) * 0.5
    layer.set_weights([kernel])
    x = rng.standard_normal((3, 5, 6, 40)).astype(np.float32)
    threshold = 0.7 * np.abs(kernel).astype(np.float64).mean() if twn else 0.3
    w = ternary(kernel, threshold)
    assert 0.1 < (w == 0).mean() < 0.9                      # zeros and non-zeros both present
    want = conv_reference(x, w, pad_values)
    np.testing.assert_array_equal(model.predict(x, verbose=0), want)       # the float path
    lq.convert(model)
    assert model.binary_layers == [layer.name]
    np.testing.assert_array_equal(model.predict(x, verbose=0), want)       # two bit-planes


def test_ternary_dense_folded_with_batchnorm(active_backend):
    rng = np.random.default_rng(1)
    tern = dict(input_quantizer="ste_sign", kernel_quantizer=lq.quantizers.SteTern(threshold_value=0.05))

    def model():
        return minidl.Sequential([minidl.layers.Input((70,)), lq.layers.QuantDense(45, **tern),
                                  minidl.layers.BatchNormalization(),
                                  lq.layers.QuantDense(9, **tern), minidl.layers.Dense(4)])

    folded, unfolded = model(), model()
    bn = folded.layers[1]
    bn.set_weights([rng.standard_normal(45).astype(np.float32) for _ in range(3)]
                   + [(rng.random(45) * 30 + 1).astype(np.float32)])
    folded.layers[0].set_weights([folded.layers[0].get_weights()[0],
                                  rng.standard_normal(45).astype(np.float32) * 2])
    unfolded.set_weights(folded.get_weights())
    x = rng.standard_normal((6, 70)).astype(np.float32)
    float_path = folded.predict(x, verbose=0)
    lq.convert(unfolded, fold_batchnorm=False)
    lq.convert(folded)
    assert len(folded.folded_batchnorms) == 1 and len(folded.binary_layers) == 2
    want = unfolded.predict(x, verbose=0)
    np.testing.assert_allclose(want, float_path, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(folded.predict(x, verbose=0), want)
