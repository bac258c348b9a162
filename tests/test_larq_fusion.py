"""BatchNormalization + sign folded into an integer threshold at lq.convert: predictions bit for
bit equal to the unfolded binary path on every backend (gamma of both signs and 0, biases,
pad_values 0 and 1, conv and dense), thresholds remade after training, the chains that must
not fold, and the C threshold packing against its plain twin on every ISA path."""

import numpy as np
import pytest

import minidl
import minidl.larq as lq
from minidl.larq.threshold_fusion import FoldedBatchNorm

SIGNS = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip")


def chain_model():
    bn = dict(momentum=0.9, epsilon=1e-3)
    return minidl.Sequential([
        minidl.layers.Input((6, 6, 35)),
        lq.layers.QuantConv2D(33, 3, padding="same", pad_values=1.0, **SIGNS),
        minidl.layers.BatchNormalization(**bn),
        lq.layers.QuantConv2D(40, 3, padding="same", use_bias=False, **SIGNS),
        minidl.layers.BatchNormalization(**bn),
        minidl.layers.Flatten(),
        lq.layers.QuantDense(20, **SIGNS),
        minidl.layers.BatchNormalization(center=False, **bn),
        lq.layers.QuantDense(7, use_bias=False, **SIGNS),
        minidl.layers.BatchNormalization(**bn)])


def randomize_batchnorms(model, rng):
    """Random biases of the binary layers; gamma of both signs with some exactly 0, beta, and
    moving statistics that put the thresholds inside the integer range of the sums (and some outside)."""
    for layer in model.layers:
        if getattr(layer, "use_bias", False):           # biases join the thresholds
            kernel, bias = layer.get_weights()
            layer.set_weights([kernel, (rng.standard_normal(bias.shape) * 4).astype(np.float32)])
        if isinstance(layer, minidl.layers.BatchNormalization):
            c = layer.moving_mean.shape[0]
            values = {"gamma": rng.standard_normal(c) * 2, "beta": rng.standard_normal(c),
                      "moving_mean": rng.standard_normal(c) * 30, "moving_variance": rng.random(c) * 400 + 1}
            values["gamma"][::5] = 0.0
            values["moving_mean"][1] = 1e6                 # every z below the mean
            layer.set_weights([values[w.name].astype(np.float32) for w in layer.weights])


def unfolded_and_folded(seed=0):
    rng = np.random.default_rng(seed)
    folded = chain_model()
    randomize_batchnorms(folded, rng)
    unfolded = chain_model()
    unfolded.set_weights(folded.get_weights())
    lq.convert(unfolded, fold_batchnorm=False)
    lq.convert(folded)
    return unfolded, folded, rng


def test_folded_predictions_equal_the_unfolded_ones(active_backend):
    unfolded, folded, rng = unfolded_and_folded()
    names = [layer.name for layer in folded.layers]
    assert [tuple(names.index(n) for n in chain) for chain in folded.folded_batchnorms] == [(0, 1, 2), (5, 6, 7)]
    assert unfolded.folded_batchnorms == []
    x = rng.standard_normal((5, 6, 6, 35)).astype(np.float32)
    x[0, 0, 0, :4] = 0.0
    want = unfolded.predict(x, verbose=0)
    np.testing.assert_array_equal(folded.predict(x, verbose=0), want)
    float_path = chain_model()
    float_path.set_weights(folded.get_weights())
    np.testing.assert_allclose(float_path.predict(x, verbose=0), want, rtol=1e-4, atol=1e-3)
    # the folded BatchNormalizations hand packed bits on: they never normalized
    assert isinstance(folded.layers[1].forward, FoldedBatchNorm) and folded.layers[1].forward.bounds[1] is not None


def test_a_folded_batchnorm_called_on_its_own_still_normalizes():
    minidl.set_backend("numpy")
    unfolded, folded, rng = unfolded_and_folded(2)
    z = rng.integers(-50, 50, (4, 6, 6, 33)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(folded.layers[1](z)), np.asarray(unfolded.layers[1](z)))


def test_thresholds_are_remade_after_training(active_backend):
    unfolded, folded, rng = unfolded_and_folded(1)
    x = rng.standard_normal((16, 6, 6, 35)).astype(np.float32)
    y = rng.integers(0, 7, 16)
    for model in (unfolded, folded):
        model.predict(x, verbose=0)                   # thresholds made
        model.compile(minidl.optimizers.SGD(0.5), "sparse_categorical_crossentropy")
        model.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    assert folded.layers[1].forward.bounds is None       # invalidated by the training step
    np.testing.assert_array_equal(folded.predict(x, verbose=0), unfolded.predict(x, verbose=0))


def test_folding_through_max_pooling_and_flatten(active_backend):
    """conv -> MaxPooling2D -> BN -> conv and conv (64 channels: whole words) -> BN -> Flatten
    -> dense fold; a pooled maximum of integer sums is an integer sum."""
    def model():
        return minidl.Sequential([
            minidl.layers.Input((8, 8, 20)),
            lq.layers.QuantConv2D(32, 3, padding="same", **SIGNS), minidl.layers.MaxPooling2D(2),
            minidl.layers.BatchNormalization(),
            lq.layers.QuantConv2D(64, 3, padding="same", pad_values=1.0, use_bias=False, **SIGNS),
            minidl.layers.BatchNormalization(), minidl.layers.Flatten(),
            lq.layers.QuantDense(5, **SIGNS)])
    rng = np.random.default_rng(3)
    folded, unfolded = model(), model()
    randomize_batchnorms(folded, rng)
    unfolded.set_weights(folded.get_weights())
    lq.convert(unfolded, fold_batchnorm=False)
    lq.convert(folded)
    names = [layer.name for layer in folded.layers]
    assert [tuple(names.index(n) for n in chain) for chain in folded.folded_batchnorms] == [(0, 2, 3), (3, 4, 6)]
    x = rng.standard_normal((4, 8, 8, 20)).astype(np.float32)
    np.testing.assert_array_equal(folded.predict(x, verbose=0), unfolded.predict(x, verbose=0))
    lq.convert(folded, fold_batchnorm=False)          # converting again undoes the folding
    assert folded.folded_batchnorms == [] and not isinstance(folded.layers[2].forward, FoldedBatchNorm)
    np.testing.assert_array_equal(folded.predict(x, verbose=0), unfolded.predict(x, verbose=0))


def test_chains_that_do_not_fold():
    minidl.set_backend("numpy")
    inputs = minidl.layers.Input((6, 6, 8))
    a = lq.layers.QuantConv2D(8, 3, padding="same", **SIGNS)(inputs)
    b = minidl.layers.BatchNormalization()(a)
    c = lq.layers.QuantConv2D(8, 3, padding="same", **SIGNS)(b)       # b read twice: kept float
    d = minidl.layers.Add()([b, c])
    e = lq.layers.QuantConv2D(8, 3, padding="same", activation="relu", **SIGNS)(d)   # an activation
    f = minidl.layers.BatchNormalization()(e)
    g = lq.layers.QuantConv2D(8, 3, padding="same", **SIGNS)(f)
    h = minidl.layers.BatchNormalization()(g)                        # a model output
    model = minidl.Model(inputs, [h, lq.layers.QuantConv2D(4, 1, **SIGNS)(h)])
    lq.convert(model)
    # only f folds, and on float bounds: e's relu makes its sums floats of another kind
    assert [(e.node.layer.name, chain[1]) for chain in model.folded_batchnorms] == [(e.node.layer.name, f.node.layer.name)]
    assert model.get_layer(f.node.layer.name).forward.source is None


def test_threshold_packing_equals_its_plain_twin(isa):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(4)
    pixels, c = 3000, 70                               # above the threading threshold
    z = rng.integers(-50, 51, (pixels, c)).astype(np.float32)
    lo = rng.integers(-50, 51, c).astype(np.float32)
    hi = lo + rng.integers(-3, 60, c).astype(np.float32)
    lo[::4], hi[1::6] = -np.inf, np.inf
    bounds = np.stack([lo, hi])
    results = []
    for pack in (lib.minidl_binary_pack_thresholds, lib.minidl_binary_pack_thresholds_reference):
        bits = np.full((pixels, 3), 7, np.int32)
        pack(ffi.from_buffer("int32_t[]", bits), ffi.from_buffer("float[]", z), ffi.from_buffer("float[]", bounds),
             pixels, c)
        results.append(bits)
    np.testing.assert_array_equal(results[0], results[1])
    negative = ~((lo <= z) & (z <= hi))
    assert (results[0][:, 0] & 1).astype(bool).tolist() == negative[:, 0].tolist()


def test_op_arguments_are_checked(backend):
    z = backend.from_numpy(np.zeros((4, 40), np.float32))
    with pytest.raises(ValueError, match="bounds"):
        backend.binary_pack_thresholds(backend.empty((4, 2), "int32"), z, backend.zeros((2, 39)))
    with pytest.raises(ValueError, match="bits"):
        backend.binary_pack_thresholds(backend.empty((4, 1), "int32"), z, backend.zeros((2, 40)))


def float_chain_model():
    """zoo.binarynet()'s head: a float first convolution (float input, binary kernel), then a
    BatchNormalization whose sign is the next binary layer's input, through a max pool too."""
    bn = dict(momentum=0.9, epsilon=1e-3)
    return minidl.Sequential([
        minidl.layers.Input((9, 9, 3)),
        lq.layers.QuantConv2D(40, 3, kernel_quantizer="ste_sign", kernel_constraint="weight_clip"),
        minidl.layers.BatchNormalization(**bn),
        lq.layers.QuantConv2D(33, 3, padding="same", **SIGNS),
        minidl.layers.MaxPooling2D(2),
        minidl.layers.BatchNormalization(**bn),
        lq.layers.QuantConv2D(8, 1, **SIGNS)])


def test_batchnorms_after_float_layers_fold_on_float_bounds(active_backend):
    rng = np.random.default_rng(5)
    folded, unfolded = float_chain_model(), float_chain_model()
    randomize_batchnorms(folded, rng)
    bn = folded.layers[1]
    weights = dict(zip([v.name for v in bn.weights], bn.get_weights()))
    weights["moving_mean"] *= np.float32(0.01)     # thresholds among the float conv's outputs (about +-5)
    bn.set_weights([weights[v.name] for v in bn.weights])
    unfolded.set_weights(folded.get_weights())
    lq.convert(unfolded, fold_batchnorm=False)
    lq.convert(folded)
    names = [layer.name for layer in folded.layers]
    assert [tuple(names.index(n) for n in chain) for chain in folded.folded_batchnorms] == [(2, 4, 5), (0, 1, 2)]
    x = rng.standard_normal((6, 9, 9, 3)).astype(np.float32)
    np.testing.assert_array_equal(folded.predict(x, verbose=0), unfolded.predict(x, verbose=0))
    assert folded.layers[1].forward.source is None and folded.layers[1].forward.bounds[1] is not None


def test_float_bounds_are_where_the_batchnorm_changes_sign(active_backend):
    """Each bound is the first (last) float whose normalized value is not < 0: the float just
    outside gives < 0, for gamma of both signs and 0, means at +-1e30 and tiny variances."""
    from minidl.larq.threshold_fusion import float_threshold_bounds
    b = minidl.get_backend()
    rng = np.random.default_rng(6)
    c = 37
    layer = minidl.layers.BatchNormalization(epsilon=1e-3)
    layer.build_once((c,))
    layer.attach(b)
    gamma = rng.standard_normal(c).astype(np.float32)
    gamma[::7] = 0.0
    mean = (rng.standard_normal(c) * 3).astype(np.float32)
    mean[3], mean[4] = 1e30, -1e30
    var = (rng.random(c) * 5).astype(np.float32)
    var[5] = 0.0
    layer.set_weights([gamma, rng.standard_normal(c).astype(np.float32), mean, var])
    lo, hi = b.to_numpy(float_threshold_bounds(layer))

    def sign_positive(values):
        out = b.empty((len(values), c))
        g, beta = layer._affine
        b.batchnorm_forward_infer(out, b.from_numpy(np.ascontiguousarray(values, np.float32)), g, beta,
                                  layer.moving_mean.value, layer.moving_variance.value, layer.epsilon)
        return ~(b.to_numpy(out) < 0)

    probes = [np.nextafter(lo, np.float32(-np.inf)), lo, hi, np.nextafter(hi, np.float32(np.inf)),
              np.full(c, -3e38, np.float32), np.full(c, 3e38, np.float32)]
    probes += list(rng.standard_normal((50, c)).astype(np.float32) * 10)
    values = np.stack([np.where(np.isfinite(p), p, 0.0) for p in probes]).astype(np.float32)
    inside = (lo <= values) & (values <= hi)
    with np.errstate(over="ignore"):                 # the +-3e38 probes overflow to +-inf
        np.testing.assert_array_equal(inside, sign_positive(values))


def pooled_model():
    return minidl.Sequential([
        minidl.layers.Input((11, 10, 20)),
        lq.layers.QuantConv2D(33, 3, padding="same", **SIGNS),
        minidl.layers.MaxPooling2D(2),                                   # drops the last row
        minidl.layers.BatchNormalization(),
        lq.layers.QuantConv2D(40, 3, padding="same", pad_values=1.0, use_bias=False, **SIGNS),
        minidl.layers.MaxPooling2D(3, strides=2, padding="same"),         # windows in the padding
        minidl.layers.Flatten(),
        lq.layers.QuantDense(7, **SIGNS)])


def test_max_pooling_fused_into_the_binary_convolution(active_backend):
    """A MaxPooling2D after a converted binary convolution is computed by it: predictions bit
    for bit those of the unfused model; an eager call of the convolution is not pooled."""
    from minidl.larq import pool_fusion
    rng = np.random.default_rng(8)
    model = pooled_model()
    randomize_batchnorms(model, rng)
    lq.convert(model)
    names = [layer.name for layer in model.layers]
    assert [tuple(names.index(n) for n in pair) for pair in model.fused_poolings] == [(0, 1), (3, 4)]
    x = rng.standard_normal((5, 11, 10, 20)).astype(np.float32)
    fused = model.predict(x, verbose=0)
    assert model.layers[0]._binary_state.pooled is not None     # the pooled sums were handed on
    pool_fusion.unfuse(model.layers)
    np.testing.assert_array_equal(fused, model.predict(x, verbose=0))
    lq.convert(model)
    assert np.asarray(model.layers[0](x[:2])).shape == (2, 11, 10, 33)
    for layer in model.layers:                                     # and the float path
        if getattr(layer, "_binary_state", None) is not None:
            layer._binary_state = None
    np.testing.assert_array_equal(fused, model.predict(x, verbose=0))
