"""lq.optimizers.Bop and CaseOptimizer: Bop's step against larq's formula (m += gamma (g - m);
w = sign(-sign(w m - threshold) w), sign(0) = +1) on every backend, the C kernel against its
plain twin on every ISA path, CaseOptimizer's claims and errors, training, config and the
optimizer state saved in model files and resumed."""

import os
import warnings

import numpy as np
import pytest

import minidl
import minidl.larq as lq


def larq_bop(w, m, g, gamma, threshold):
    """larq's Bop step in float32 numpy, as larq writes it."""
    m = (m + np.float32(gamma) * (g - m)).astype(np.float32)
    t = -np.sign(w * m - np.float32(threshold)) * w
    return np.where(t >= 0, 1.0, -1.0).astype(np.float32), m


def test_bop_update_follows_larqs_formula(backend):
    rng = np.random.default_rng(3)
    n = 1000
    w = rng.standard_normal(n).astype(np.float32)
    w[:10] = 0.0
    m = (rng.standard_normal(n) * 0.5).astype(np.float32)
    tw, tm = backend.from_numpy(w), backend.from_numpy(m)
    for step in range(4):
        g = rng.standard_normal(n).astype(np.float32)
        w, m = larq_bop(w, m, g, 0.3, 0.2)
        backend.bop_update(tw, backend.from_numpy(g), tm, 0.3, 0.2)
        np.testing.assert_allclose(backend.to_numpy(tm), m, rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(backend.to_numpy(tw), w)
    assert set(np.unique(w)) == {-1.0, 1.0}


def test_bop_flips_only_where_the_average_agrees_and_exceeds_the_threshold(backend):
    w = np.array([1, 1, -1, -1, 1, 0], np.float32)
    m = np.zeros(6, np.float32)
    g = np.array([3.0, -3.0, -3.0, 3.0, 0.5, 1.0], np.float32)   # gamma 0.5: m = g / 2
    tw, tm = backend.from_numpy(w), backend.from_numpy(m)
    backend.bop_update(tw, backend.from_numpy(g), tm, 0.5, 1.0)
    # w m = 1.5 > 1 flips; -1.5 keeps; 1.5 flips; -1.5 keeps; 0.25 < 1 keeps; w = 0 becomes +1
    np.testing.assert_array_equal(backend.to_numpy(tw), [-1, 1, 1, -1, 1, 1])
    np.testing.assert_array_equal(backend.to_numpy(tm), g / 2)


def test_bop_kernel_equals_its_plain_twin(isa):
    from minidl._cpu_kernels import ffi, lib
    rng = np.random.default_rng(5)
    n = 70001                      # above the threading threshold
    w0 = rng.standard_normal(n).astype(np.float32)
    w0[::11] = 0.0
    m0 = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    g[100:110] = np.nan
    results = []
    for update in (lib.minidl_bop_update, lib.minidl_bop_update_reference):
        w, m = w0.copy(), m0.copy()
        fp = lambda a: ffi.from_buffer("float[]", a)   # noqa: E731
        update(fp(w), fp(m), fp(g), 0.25, 1e-3, n)
        results.append((w, m))
    (w, m), (w_ref, m_ref) = results
    np.testing.assert_array_equal(w, w_ref)
    np.testing.assert_array_equal(m, m_ref)
    assert np.isnan(w[100:110]).all()


def test_bop_arguments_and_config():
    bop = lq.optimizers.Bop()
    assert (bop.threshold, bop.gamma, bop.name) == (1e-8, 1e-4, "Bop")
    config = bop.get_config()
    assert config["threshold"] == 1e-8 and config["gamma"] == 1e-4 and "learning_rate" not in config
    again = lq.optimizers.Bop.from_config(config)
    assert (again.threshold, again.gamma) == (1e-8, 1e-4)
    schedule = minidl.optimizers.schedules.ExponentialDecay(1e-3, 10, 0.5)
    scheduled = lq.optimizers.Bop.from_config(lq.optimizers.Bop(gamma=schedule).get_config())
    assert isinstance(scheduled.gamma, minidl.optimizers.schedules.ExponentialDecay)
    with pytest.raises(ValueError, match="gamma"):
        lq.optimizers.Bop(gamma=-1.0)
    with pytest.raises(ValueError, match="learning_rate"):
        lq.optimizers.Bop(learning_rate=0.1)
    bop.gamma = 0.01                 # what HyperparameterScheduler(hyperparameter="gamma") sets
    assert bop.current_learning_rate() == 0.01
    assert lq.optimizers.Bop.is_binary_variable(type("V", (), {"precision": 1})())
    assert not lq.optimizers.Bop.is_binary_variable(object())


def bop_model():
    return minidl.Sequential([
        minidl.layers.Input((16,)),
        lq.layers.QuantDense(32, kernel_quantizer="ste_sign", use_bias=False),
        minidl.layers.BatchNormalization(),
        lq.layers.QuantDense(32, input_quantizer="ste_sign", kernel_quantizer=lq.quantizers.NoOp(precision=1),
                             use_bias=False),
        minidl.layers.BatchNormalization(),
        minidl.layers.Dense(2, activation="softmax")])


def case_optimizer(gamma=1e-3, threshold=1e-4):
    return lq.optimizers.CaseOptimizer(
        (lq.optimizers.Bop.is_binary_variable, lq.optimizers.Bop(threshold=threshold, gamma=gamma)),
        default_optimizer=minidl.optimizers.Adam(0.01))


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 16)).astype(np.float32)
    return x, (x[:, :8].sum(axis=1) > x[:, 8:].sum(axis=1)).astype(np.int32)


def test_case_optimizer_trains_binary_kernels_with_bop(active_backend):
    x, y = data()
    model = bop_model()
    optimizer = case_optimizer()
    model.compile(optimizer, "sparse_categorical_crossentropy", metrics=["accuracy"])
    bop, adam = optimizer.optimizers
    binary = {f"{layer.name}/kernel" for layer in model.layers if isinstance(layer, lq.layers.QuantDense)}
    assert {p for p, index in optimizer.var_opt_mapping.items() if index == 0} == binary
    assert len(optimizer.var_opt_mapping) == len(model.trainable_weights)
    assert len(bop.state_shapes()) == 2 and len(adam.state_shapes()) > 2
    initial = [np.sign(layer.get_weights()[0]) for layer in model.layers if isinstance(layer, lq.layers.QuantDense)]
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.85
    kernels = [layer.get_weights()[0] for layer in model.layers if isinstance(layer, lq.layers.QuantDense)]
    for kernel, start in zip(kernels, initial):     # Bop leaves the kernels at +-1, some flipped
        assert set(np.unique(kernel)) <= {-1.0, 1.0}
        assert 0 < (kernel != start).sum() < kernel.size // 2
    assert bop.iterations == adam.iterations == optimizer.iterations == 8 * 4


def test_bop_state_is_saved_and_training_resumes_identically(tmp_path):
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    x, y = data()
    model = bop_model()
    model.compile(case_optimizer(), "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=32, verbose=0, shuffle=False)
    path = os.path.join(tmp_path, "bop.minidl")   # minidl's own format holds every optimizer's state
    model.save(path)
    loaded = minidl.models.load_model(path)
    assert isinstance(loaded.optimizer, lq.optimizers.CaseOptimizer)
    assert loaded.optimizer.var_opt_mapping == model.optimizer.var_opt_mapping
    state, again = model.optimizer.get_state(model.backend), loaded.optimizer.get_state(loaded.backend)
    assert state.keys() == again.keys() and any(k.startswith("0/m/") for k in state)
    for key in state:
        np.testing.assert_array_equal(again[key], state[key], err_msg=key)
    model.fit(x, y, epochs=1, batch_size=32, verbose=0, shuffle=False)
    loaded.fit(x, y, epochs=1, batch_size=32, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_case_optimizer_errors_and_unclaimed_weights():
    minidl.set_backend("numpy")
    with pytest.raises(TypeError, match="callable predicate"):
        lq.optimizers.CaseOptimizer((1, lq.optimizers.Bop()))
    with pytest.raises(TypeError, match="default_optimizer"):
        lq.optimizers.CaseOptimizer((lambda v: True, lq.optimizers.Bop()), default_optimizer="adam")
    model = bop_model()
    everything = lq.optimizers.CaseOptimizer((lambda v: True, lq.optimizers.Bop()),
                                             (lambda v: v.precision == 1, minidl.optimizers.SGD()))
    with pytest.raises(ValueError, match="claimed by multiple optimizers"):
        model.compile(everything, "sparse_categorical_crossentropy")
    nothing = lq.optimizers.CaseOptimizer((lambda v: False, lq.optimizers.Bop()),
                                          default_optimizer=minidl.optimizers.SGD())
    with pytest.raises(ValueError, match="did not claim any variables"):
        bop_model().compile(nothing, "sparse_categorical_crossentropy")
    model = bop_model()
    only_binary = lq.optimizers.CaseOptimizer((lq.optimizers.Bop.is_binary_variable, lq.optimizers.Bop()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.compile(only_binary, "sparse_categorical_crossentropy")
    assert any("No `default_optimizer`" in str(w.message) for w in caught)
    dense_before = model.layers[-1].get_weights()[0].copy()
    x, y = data()
    model.fit(x, y, epochs=1, batch_size=64, verbose=0)
    np.testing.assert_array_equal(model.layers[-1].get_weights()[0], dense_before)   # not trained
    config = only_binary.get_config()
    again = lq.optimizers.CaseOptimizer.from_config(config)
    assert again.var_opt_mapping == only_binary.var_opt_mapping and again.default is None


def test_hyperparameter_scheduler_sets_bops_gamma():
    minidl.set_backend("numpy")
    x, y = data()
    model = bop_model()
    optimizer = case_optimizer()
    bop = optimizer.optimizers[0]
    model.compile(optimizer, "sparse_categorical_crossentropy")
    schedule = lq.callbacks.HyperparameterScheduler(lambda epoch: 1e-3 * 0.5 ** epoch, "gamma", optimizer=bop)
    history = model.fit(x, y, epochs=3, batch_size=64, verbose=0, callbacks=[schedule])
    assert bop.gamma == pytest.approx(2.5e-4) and history.history["gamma"] == pytest.approx([1e-3, 5e-4, 2.5e-4])
