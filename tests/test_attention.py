"""MultiHeadAttention, Attention, EinsumDense and the fused attention ops on every backend,
against numbers written by real Keras 3.15.1 (tests/data/make_keras_attention.py) and the numpy
reference; the cpu kernels against their plain twin on every ISA path."""

import os

import numpy as np
import pytest

import minidl
from minidl.backends.contract.attention import attention_sizes
from minidl.backends.numpy_backend import NumpyBackend
from minidl.layers.attention import Attention, MultiHeadAttention
from minidl.layers.einsum_dense import EinsumDense
from layer_runs import LayerRun

KERAS = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_attention.npz"))
TOL = dict(rtol=2e-4, atol=2e-5)


def case(name):
    prefix = name + "/"
    return {k[len(prefix):]: KERAS[k] for k in KERAS.files if k.startswith(prefix)}


def run_layer(layer, backend, inputs, weights, cotangent, options=None, training=False, runs=None):
    """Forward and backward of `layer` on `backend`: output, input gradients, weight gradients
    (the LayerRun is appended to `runs` when given, for what its call kept). options:
    (has_key, has_mask, use_causal_mask); a mask without a key is called as the layer's
    __call__ lays it out, [query, value, value, mask], and the value's two gradients added."""
    has_key, has_mask, causal = options or (False, False, False)
    stand_in = has_mask and not has_key
    if stand_in:
        inputs = inputs[:2] + [inputs[1]] + inputs[2:]
    shapes = [x.shape[1:] for x in inputs]
    layer.build_once(shapes if layer.multiple_inputs else shapes[0])
    layer.attach(backend)
    layer.set_weights(weights)
    xs = [backend.from_numpy(x) for x in inputs]
    run = LayerRun(layer, options={"use_causal_mask": causal} if options else None)
    if runs is not None:
        runs.append(run)
    out = run.forward(xs if layer.multiple_inputs else xs[0], training)
    result = backend.to_numpy(out)
    dxs = run.backward(backend.from_numpy(cotangent))
    dxs = [backend.to_numpy(d) for d in (dxs if isinstance(dxs, list) else [dxs])]
    if stand_in:
        dxs = [dxs[0], dxs[1] + dxs[2]] + dxs[3:]
    return (result, dxs,
            [backend.to_numpy(w.grad) for w in layer.trainable_weights])


def numbered(c, kind):
    return [c[f"{kind}{i}"] for i in range(len([k for k in c if k.startswith(kind) and k[len(kind):].isdigit()]))]


def test_multi_head_attention_matches_keras_with_masks(backend):
    c = case("mha_masked")
    layer = MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
    inputs = [c["input0"], c["input1"], c["mask"]]
    runs = []
    out, dxs, dws = run_layer(layer, backend, inputs, numbered(c, "weight"), c["cotangent"],
                              options=(False, True, True), runs=runs)
    assert [w.name for w in layer.weights] == list(c["weight_names"])
    np.testing.assert_allclose(out, c["out"], **TOL)
    # Keras's MHA gives a query that may attend nothing uniform weights on its fused path (the
    # output above) but zero scores when asked for them; minidl's scores are the weights it used
    probs = backend.to_numpy(runs[0].call.probs)
    empty = ~(c["mask"] * np.tril(np.ones(c["mask"].shape[1:]))).any(axis=-1)   # (B, Tq)
    assert empty[1, 2] and np.allclose(probs[1, :, 2], 1 / probs.shape[-1])
    keep = ~empty[:, None, :, None]
    np.testing.assert_allclose(np.where(keep, probs, 0), c["scores"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"]]):
        np.testing.assert_allclose(got, want, **TOL)
    assert not dxs[2].any()   # the mask has no gradient
    for got, want in zip(dws, numbered(c, "dweight")):
        np.testing.assert_allclose(got, want, **TOL)


def test_multi_head_attention_key_output_shape_no_bias(backend):
    c = case("mha_key")
    layer = MultiHeadAttention(num_heads=3, key_dim=2, output_shape=7, use_bias=False)
    out, dxs, dws = run_layer(layer, backend, [c["input0"], c["input1"], c["input2"]],
                              numbered(c, "weight"), c["cotangent"], options=(True, False, False))
    assert [w.shape for w in layer.weights] == [(8, 3, 2), (5, 3, 2), (8, 3, 2), (3, 2, 7)]
    np.testing.assert_allclose(out, c["out"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"], c["dinput2"]]):
        np.testing.assert_allclose(got, want, **TOL)
    for got, want in zip(dws, numbered(c, "dweight")):
        np.testing.assert_allclose(got, want, **TOL)


def test_attention_layer_matches_keras(backend):
    c = case("attention_causal")
    layer = Attention(use_scale=True)
    out, dxs, dws = run_layer(layer, backend, [c["input0"], c["input1"]], [c["weight0"]],
                              c["cotangent"], options=(False, False, True))
    np.testing.assert_allclose(out, c["out"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"]]):
        np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(dws[0], c["dweight0"], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name, equation, output_shape, bias_axes", [
    ("einsum_abc_cde", "abc,cde->abde", (None, 2, 5), "de"),
    ("einsum_abcd_cde", "abcd,cde->abe", (None, 6), "e"),
    ("einsum_ab_bc", "ab,bc->ac", (3,), "c"),
    ("einsum_abc_cd", "abc,cd->abd", (None, 5), None)])
def test_einsum_dense_matches_keras(backend, name, equation, output_shape, bias_axes):
    c = case(name)
    layer = EinsumDense(equation, output_shape, bias_axes=bias_axes, activation="relu")
    out, dxs, dws = run_layer(layer, backend, [c["input0"]], numbered(c, "weight"), c["cotangent"])
    assert [w.shape for w in layer.weights] == [w.shape for w in numbered(c, "weight")]
    np.testing.assert_allclose(out, c["out"], **TOL)
    np.testing.assert_allclose(dxs[0], c["dinput0"], **TOL)
    for got, want in zip(dws, numbered(c, "dweight")):
        np.testing.assert_allclose(got, want, **TOL)


def test_einsum_dense_refuses_other_equations():
    with pytest.raises(ValueError, match="einsum_dense.*'abc,dce->abde'|'abc,dce->abde'"):
        EinsumDense("abc,dce->abde", (None, 2, 5))


# ------------------------------------------------------------------ the fused ops

def _attention_case(seed, batch=2, tq=5, tk=7, heads=3, dim=4, dim_v=3):
    rng = np.random.default_rng(seed)
    arrays = dict(q=rng.standard_normal((batch, tq, heads, dim)),
                  k=rng.standard_normal((batch, tk, heads, dim)),
                  v=rng.standard_normal((batch, tk, heads, dim_v)),
                  dout=rng.standard_normal((batch, tq, heads, dim_v)))
    mask = (rng.random((batch, tq, tk)) > 0.3).astype(np.float32)
    mask[0, 1] = 0   # a query that may attend nothing
    drop = (rng.random((batch, heads, tq, tk)) > 0.25) / 0.75
    return {k: v.astype(np.float32) for k, v in arrays.items()}, mask, drop.astype(np.float32)


def _run_ops(backend, arrays, mask, drop, causal, reference=False):
    """out, probs, dq, dk, dv of the attention ops; reference=True runs the cpu backend's plain
    twin (attention_reference.c) instead of its fast kernels: its implementations of the
    contract's ops, called with the contract's sizes."""
    t = backend.from_numpy
    q, k, v = t(arrays["q"]), t(arrays["k"]), t(arrays["v"])
    m = None if mask is None else t(mask)
    d = None if drop is None else t(drop)
    batch, tq, heads, _ = arrays["q"].shape
    tk, dim_v = arrays["k"].shape[1], arrays["v"].shape[3]
    out, probs = backend.zeros((batch, tq, heads, dim_v)), backend.zeros((batch, heads, tq, tk))
    dq, dk, dv = backend.zeros(q.shape), backend.zeros(k.shape), backend.zeros(v.shape)
    if reference:
        sizes = attention_sizes("attention_forward", q, k, v, m, d)
        backend._attention_forward(out, probs, q, k, v, m, d, 0.6, causal, sizes, reference=True)
        backend._attention_backward(dq, dk, dv, t(arrays["dout"]), q, k, v, probs, m, d, 0.6, causal, sizes,
                                    reference=True)
    else:
        backend.attention_forward(out, probs, q, k, v, m, d, 0.6, causal)
        backend.attention_backward(dq, dk, dv, t(arrays["dout"]), q, k, v, probs, m, d, 0.6, causal)
    return [backend.to_numpy(x) for x in (out, probs, dq, dk, dv)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dropped", [False, True])
def test_attention_ops_match_numpy(backend, causal, masked, dropped):
    arrays, mask, drop = _attention_case(1)
    mask, drop = (mask if masked else None), (drop if dropped else None)
    want = _run_ops(NumpyBackend(), arrays, mask, drop, causal)
    for got, ref in zip(_run_ops(backend, arrays, mask, drop, causal), want):
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("tq, tk", [(37, 41), (150, 150), (130, 100)])   # 64-row causal blocks, ragged
def test_cpu_attention_matches_its_reference_twin(isa, tq, tk):
    from minidl.backends.cpu.backend import CpuBackend
    cpu = CpuBackend()
    arrays, mask, drop = _attention_case(2, batch=2, tq=tq, tk=tk, heads=2, dim=20, dim_v=17)
    for causal, m, d in ((True, mask, drop), (False, None, None), (True, None, None), (True, None, drop)):
        fast = _run_ops(cpu, arrays, m, d, causal)
        plain = _run_ops(cpu, arrays, m, d, causal, reference=True)
        for got, ref in zip(fast, plain):
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_attention_ops_gradients_float64_numpy():
    arrays, mask, _ = _attention_case(3, batch=1, tq=3, tk=4, heads=2, dim=2, dim_v=2)
    arrays = {k: v.astype(np.float64) for k, v in arrays.items()}
    # every query may attend key 0: a row that attends nothing follows Keras's -1e9 convention,
    # whose gradient is not the derivative of the uniform row
    mask[..., 0] = 1
    nb = NumpyBackend()

    def loss(q, k, v):
        out, probs = np.zeros(arrays["dout"].shape), np.zeros((1, 2, 3, 4))
        nb.attention_forward(out, probs, q, k, v, mask, None, 0.6, True)
        return (out * arrays["dout"]).sum(), probs

    _, probs = loss(arrays["q"], arrays["k"], arrays["v"])
    grads = [np.zeros_like(arrays[n]) for n in "qkv"]
    nb.attention_backward(*grads, arrays["dout"], arrays["q"], arrays["k"], arrays["v"], probs, mask,
                          None, 0.6, True)
    for index, name in enumerate("qkv"):
        x = arrays[name]
        numeric = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            x[i] += 1e-6
            up = loss(arrays["q"], arrays["k"], arrays["v"])[0]
            x[i] -= 2e-6
            down = loss(arrays["q"], arrays["k"], arrays["v"])[0]
            x[i] += 1e-6
            numeric[i] = (up - down) / 2e-6
        np.testing.assert_allclose(grads[index], numeric, rtol=1e-6, atol=1e-8)


def test_attention_ops_name_the_bad_shape(backend):
    arrays, _, _ = _attention_case(4)
    t = backend.from_numpy
    with pytest.raises(ValueError, match="mask"):
        backend.attention_forward(backend.zeros((2, 5, 3, 3)), backend.zeros((2, 3, 5, 7)), t(arrays["q"]),
                                  t(arrays["k"]), t(arrays["v"]), backend.zeros((2, 5, 6)), None, 1.0, False)


# ------------------------------------------------------------- normalization of the kit

@pytest.mark.parametrize("name", ["rms_norm", "unit_norm", "group_norm"])
def test_normalization_layers_match_keras(backend, name):
    from minidl.layers.normalization_extra import GroupNormalization, RMSNormalization, UnitNormalization
    c = case(name)
    layer = {"rms_norm": RMSNormalization(), "unit_norm": UnitNormalization(),
             "group_norm": GroupNormalization(groups=4)}[name]
    out, dxs, dws = run_layer(layer, backend, [c["input0"]], numbered(c, "weight"), c["cotangent"])
    np.testing.assert_allclose(out, c["out"], **TOL)
    want = c["dinput0"]
    if name == "unit_norm":
        # Keras's gradient at the zero row is NaN (0 * inf through its rsqrt); minidl's is
        # the capped scale's, 1e12 * dout
        assert np.isnan(want[0, 0]).all()
        np.testing.assert_allclose(dxs[0][0, 0], 1e12 * c["cotangent"][0, 0], rtol=1e-5)
        dxs[0][0, 0], want = 0, np.where(np.isnan(want), 0, want)
    np.testing.assert_allclose(dxs[0], want, rtol=2e-4, atol=2e-4)
    for got, ref in zip(dws, numbered(c, "dweight")):
        np.testing.assert_allclose(got, ref, **TOL)


def test_identity_passes_values_and_gradients(backend):
    from minidl.layers.normalization_extra import Identity
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, dxs, _ = run_layer(Identity(), backend, [x], [], x * 2)
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(dxs[0], x * 2)


# ------------------------------------------------------------- ops.dot_product_attention

def test_dot_product_attention_op_matches_keras(backend):
    from minidl import autodiff, ops
    from minidl.autodiff import Tensor
    c = case("dpa_gqa")
    tape = autodiff.Tape(backend)
    ts = [Tensor(backend.from_numpy(c[f"input{i}"]), backend, requires_grad=True) for i in range(3)]
    with autodiff.on_backend(backend), autodiff.recording(tape):
        out = ops.nn.dot_product_attention(*ts, mask=c["mask"] > 0, is_causal=True, scale=0.4)
    np.testing.assert_allclose(ops.convert_to_numpy(out), c["out"], **TOL)
    grads = tape.gradients([out], [Tensor(backend.from_numpy(c["cotangent"]), backend)], ts)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(ops.convert_to_numpy(g), c[f"dinput{i}"], **TOL)


def test_dot_product_attention_with_a_mask_per_head_runs_the_composed_form():
    """The fused op takes one mask for all heads; a mask per head takes the composed path, and
    with the same mask on every head both agree."""
    from minidl import ops
    rng = np.random.default_rng(4)
    q = rng.normal(size=(1, 3, 2, 4)).astype(np.float32)
    k = rng.normal(size=(1, 3, 2, 4)).astype(np.float32)
    one = rng.random((1, 1, 3, 3)) > 0.3
    one[..., 0] = True
    fused = ops.dot_product_attention(q, k, k, mask=one).numpy()
    per_head = ops.dot_product_attention(q, k, k, mask=np.repeat(one, 2, axis=1)).numpy()
    np.testing.assert_allclose(per_head, fused, rtol=1e-5, atol=1e-6)


def test_group_query_attention_matches_keras(backend):
    from minidl.layers.attention import GroupQueryAttention
    c = case("gqa")
    layer = GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2)
    out, dxs, dws = run_layer(layer, backend, [c["input0"], c["input1"]], numbered(c, "weight"),
                              c["cotangent"], options=(False, False, True))
    assert [w.shape for w in layer.weights] == [w.shape for w in numbered(c, "weight")]
    np.testing.assert_allclose(out, c["out"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"]]):
        np.testing.assert_allclose(got, want, **TOL)
    for got, want in zip(dws, numbered(c, "dweight")):
        np.testing.assert_allclose(got, want, **TOL)


def test_additive_attention_matches_keras(backend):
    from minidl.layers.attention import AdditiveAttention
    c = case("additive")
    layer = AdditiveAttention()
    # layer([q, v, k], use_causal_mask=True)
    out, dxs, dws = run_layer(layer, backend, [c["input0"], c["input1"], c["input2"]],
                              numbered(c, "weight"), c["cotangent"], options=(True, False, True),
                              training=True)
    np.testing.assert_allclose(out, c["out"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"], c["dinput2"]]):
        np.testing.assert_allclose(got, want, **TOL)
    np.testing.assert_allclose(dws[0], c["dweight0"], **TOL)


@pytest.mark.parametrize("name, axes, normalize", [("dot_2d", 1, True), ("dot_3d", (2, 1), False)])
def test_dot_matches_keras(backend, name, axes, normalize):
    from minidl.layers.dot import Dot
    c = case(name)
    out, dxs, _ = run_layer(Dot(axes, normalize=normalize), backend, [c["input0"], c["input1"]], [],
                            c["cotangent"], training=True)
    np.testing.assert_allclose(out, c["out"], **TOL)
    for got, want in zip(dxs, [c["dinput0"], c["dinput1"]]):
        np.testing.assert_allclose(got, want, **TOL)


def test_layers_dot_functional_form():
    a, b = minidl.layers.Input((3, 4)), minidl.layers.Input((6, 4))
    assert minidl.layers.dot([a, b], axes=2).shape == (None, 3, 6)
    with pytest.raises(ValueError, match="one length"):
        minidl.layers.dot([a, b], axes=1)


# ------------------------------------------------------------------ models

def _kit_model():
    from minidl import layers
    inp = layers.Input((6, 8))
    a = layers.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp, use_causal_mask=True)
    a = layers.AdditiveAttention()([a, inp], use_causal_mask=True)
    g = layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2)(a, inp)
    h = layers.RMSNormalization()(layers.Add()([inp, g]))
    h = layers.GroupNormalization(groups=2)(h)
    h = layers.EinsumDense("abc,cd->abd", (None, 5), bias_axes="d")(h)
    h = layers.UnitNormalization()(h)
    out = layers.Identity()(layers.Dot(axes=2)([h, h]))
    return minidl.models.Model(inp, out)


@pytest.mark.parametrize("suffix", [".keras", ".minidl"])
def test_model_file_keeps_the_kit_and_its_call_options(tmp_path, suffix):
    model = _kit_model()
    x = np.random.default_rng(5).standard_normal((4, 6, 8)).astype(np.float32)
    want = model.predict(x, verbose=0)
    path = str(tmp_path / f"kit{suffix}")
    model.save(path)
    loaded = minidl.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), want)   # causal masks included
    assert loaded.layers[1].get_config() == model.layers[1].get_config()


@pytest.mark.parametrize("backend_name", ["numpy", "cpu", "opencl"])
def test_transformer_block_trains(backend_name):
    """MultiHeadAttention + LayerNormalization + Dense: a causal block learns the sign of each
    step's running sum of one feature, on every backend."""
    from minidl import layers
    if backend_name not in minidl.available_backends():
        pytest.skip(f"{backend_name} is not usable here")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 8, 6)).astype(np.float32)
    y = (np.cumsum(x[..., 0], axis=1) > 0).astype(np.float32)[..., None]
    minidl.set_backend(backend_name)
    try:
        minidl.set_seed(3)
        inp = layers.Input((8, 6))
        h = layers.Dense(16)(inp)
        a = layers.MultiHeadAttention(num_heads=2, key_dim=8, dropout=0.1)(h, h, use_causal_mask=True)
        h = layers.LayerNormalization()(layers.Add()([h, a]))
        h = layers.Dense(16, activation="relu")(h)
        model = minidl.models.Model(inp, layers.Dense(1, activation="sigmoid")(h))
        model.compile(optimizer=minidl.optimizers.Adam(0.01), loss="binary_crossentropy",
                      metrics=["accuracy"])
        history = model.fit(x, y, epochs=20, batch_size=32, verbose=0)
    finally:
        minidl.set_backend("numpy")
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.85


def test_eager_calls_return_attention_scores():
    c = case("mha_masked")
    fresh = MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
    out, scores = fresh(c["input0"], c["input1"], attention_mask=c["mask"], use_causal_mask=True,
                        return_attention_scores=True)
    fresh.set_weights(numbered(c, "weight"))
    out, scores = fresh(c["input0"], c["input1"], attention_mask=c["mask"], use_causal_mask=True,
                        return_attention_scores=True)
    np.testing.assert_allclose(out, c["out"], **TOL)
    assert scores.shape == (2, 2, 4, 5)
    att = Attention()
    out, scores = att([c["input0"][..., :3], c["input1"]], return_attention_scores=True)
    assert out.shape == (2, 4, 3) and scores.shape == (2, 4, 5)
    np.testing.assert_allclose(scores.sum(-1), 1, rtol=1e-5)


def test_scores_are_a_second_output_inside_a_model():
    q = minidl.layers.Input((4, 6))
    out, scores = MultiHeadAttention(num_heads=2, key_dim=3)(q, q, return_attention_scores=True)
    assert out.shape == (None, 4, 6) and scores.shape == (None, 2, 4, 4)


@pytest.mark.parametrize("layer", [
    lambda: MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4, dropout=0.1, output_shape=5),
    lambda: minidl.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2),
    lambda: Attention(use_scale=True, dropout=0.2), lambda: minidl.layers.AdditiveAttention(),
    lambda: EinsumDense("abc,cde->abde", (None, 2, 5), bias_axes="de", activation="relu"),
    lambda: minidl.layers.RMSNormalization(epsilon=1e-5), lambda: minidl.layers.UnitNormalization(),
    lambda: minidl.layers.GroupNormalization(groups=4), lambda: minidl.layers.Identity(),
    lambda: minidl.layers.Dot(axes=(2, 1), normalize=True)])
def test_configs_round_trip(layer):
    original = layer()
    config = original.get_config()
    assert type(original).from_config(config).get_config() == config


def test_bad_arguments_name_the_layer():
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadAttention(num_heads=0, key_dim=3)
    with pytest.raises(ValueError, match="num_key_value_heads"):
        minidl.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=3)
    with pytest.raises(ValueError, match="groups"):
        minidl.layers.GroupNormalization(groups=3)(minidl.layers.Input((5, 8)))
    with pytest.raises(ValueError, match="concat"):
        Attention(score_mode="concat")


@pytest.mark.parametrize("make, shapes, options", [
    (lambda: MultiHeadAttention(num_heads=2, key_dim=2, value_dim=3), [(1, 3, 4), (1, 4, 2), (1, 4, 2),
                                                                      (1, 3, 4)],
     (True, True, True)),
    (lambda: minidl.layers.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1),
     [(1, 3, 4), (1, 3, 4)], (False, False, True)),
    (lambda: EinsumDense("abc,cde->abde", (None, 2, 3), bias_axes="de"), [(2, 3, 4)], None),
    (lambda: minidl.layers.RMSNormalization(), [(2, 3, 4)], None),
    (lambda: minidl.layers.UnitNormalization(), [(2, 3, 4)], None),
    (lambda: minidl.layers.GroupNormalization(groups=2), [(2, 3, 4)], None)])
def test_layer_gradients_float64_numpy(make, shapes, options):
    """Input and weight gradients of each layer against central differences in float64."""
    b = NumpyBackend("float64")
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal(s) for s in shapes]
    if options and options[1]:
        inputs[-1] = (rng.random(shapes[-1]) > 0.3).astype(np.float64)
        inputs[-1][..., 0] = 1   # every query attends a key
    layer = make()
    layer.build_once([s[1:] for s in shapes] if layer.multiple_inputs else shapes[0][1:])
    layer.attach(b)
    layer.set_weights([rng.standard_normal(w.shape) * 0.5 for w in layer.weights])
    cot = None
    run = LayerRun(layer, options={"use_causal_mask": options[2]} if options else None)

    def loss():
        xs = [b.from_numpy(x) for x in inputs]
        out = run.forward(xs if layer.multiple_inputs else xs[0], False)
        return float((b.to_numpy(out) * cot).sum()), out

    xs = [b.from_numpy(x) for x in inputs]
    cot = rng.standard_normal(b.shape(run.forward(xs if layer.multiple_inputs else xs[0], False)))
    loss()
    dxs = run.backward(b.from_numpy(cot))
    dxs = [b.to_numpy(d) for d in (dxs if isinstance(dxs, list) else [dxs])]
    dws = [b.to_numpy(w.grad).copy() for w in layer.trainable_weights]
    checked = inputs[:-1] if options and options[1] else inputs   # the mask has no gradient
    values = [w.value for w in layer.trainable_weights]
    for analytic, x in list(zip(dxs, checked)) + list(zip(dws, values)):
        numeric = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            x[i] += 1e-6
            up = loss()[0]
            x[i] -= 2e-6
            down = loss()[0]
            x[i] += 1e-6
            numeric[i] = (up - down) / 2e-6
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)
