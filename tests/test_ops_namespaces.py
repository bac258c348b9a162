"""keras.ops's namespaces in minidl (ops.numpy, ops.nn, ops.linalg, ops.math, ops.core,
ops.image), custom_gradient, gradients of the cases Keras's torch backend gets wrong, and the
errors of the new ops. Values against real Keras: test_ops_keras_reference.py."""

import numpy as np
import pytest

from minidl import autodiff, ops
from minidl.autodiff import Tensor
from minidl.backends.numpy_backend import NumpyBackend
from minidl.ops import namespaces

B = NumpyBackend("float64")


def test_namespaces_hold_keras_names_and_the_same_functions():
    for module, names in ((ops.nn, namespaces.NN), (ops.linalg, namespaces.LINALG),
                          (ops.core, namespaces.CORE), (ops.math, namespaces.MATH)):
        for name in names:
            assert getattr(module, name) is getattr(ops, name), (module.__name__, name)
        assert set(names) <= set(dir(module))
    assert ops.numpy.nanmean is ops.nanmean and ops.numpy.abs is ops.abs
    assert callable(ops.image.resize) and ops.hard_swish is ops.hard_silu
    with pytest.raises(AttributeError):
        ops.nn.not_a_keras_name  # noqa: B018


def numeric_gradient(f, xs, k, eps=1e-6):
    def value(arrays):
        with autodiff.on_backend(B), autodiff.recording(None):
            return float(np.sum([ops.convert_to_numpy(ops.sum(o)) for o in f(*[Tensor(a, B) for a in arrays])]))
    out = np.zeros_like(xs[k])
    for i in np.ndindex(xs[k].shape):
        up, down = [a.copy() for a in xs], [a.copy() for a in xs]
        up[k][i] += eps
        down[k][i] -= eps
        out[i] = (value(up) - value(down)) / (2 * eps)
    return out


def tape_gradients(f, xs):
    tape = autodiff.Tape(B)
    ts = [Tensor(x.copy(), B, requires_grad=True) for x in xs]
    with autodiff.on_backend(B), autodiff.recording(tape):
        outs = f(*ts)
    grads = tape.gradients(outs, [Tensor(np.ones(o.shape), B) for o in outs], ts)
    return [None if g is None else ops.convert_to_numpy(g) for g in grads]


@pytest.mark.parametrize("name,f,shapes", [
    ("cross", lambda a, b: [ops.cross(a, b), ops.cross(a[:, :2], b[:, :2])], [(3, 3), (3, 3)]),
    ("sparsemax", lambda a: [ops.sparsemax(a) * a], [(3, 5)]),
    ("solve", lambda a, b: [ops.linalg.solve(a + 3.0 * ops.eye(3, backend=B), b)], [(3, 3), (3, 2)]),
    ("det-inv", lambda a: [ops.linalg.det(a), ops.linalg.inv(a + 3.0 * ops.eye(3, backend=B))], [(3, 3)]),
    ("cholesky", lambda a: [ops.linalg.cholesky(ops.matmul(a, ops.transpose(a)) + 3.0 * ops.eye(3, backend=B))], [(3, 3)]),
    ("erfinv", lambda a: [ops.erfinv(ops.tanh(a) * 0.9)], [(5,)]),
    ("nanquantile", lambda a: [ops.nanquantile(a, [0.2, 0.7], axis=1)], [(3, 6)]),
])
def test_gradients_match_finite_differences(name, f, shapes):
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s) for s in shapes]
    # the host-side linalg results are float32: a wider step keeps their rounding out of the
    # finite differences
    eps, tol = (1e-3, 2e-3) if name in ("solve", "det-inv", "cholesky") else (1e-6, 1e-4)
    for k, g in enumerate(tape_gradients(f, xs)):
        np.testing.assert_allclose(g, numeric_gradient(f, xs, k, eps), rtol=tol, atol=tol, err_msg=f"{name} input {k}")


def test_custom_gradient_replaces_the_gradient():
    @ops.custom_gradient
    def clipped_identity(x):
        def grad(upstream):
            return ops.clip(upstream, -0.5, 0.5)
        return x * 1.0, grad

    x = np.asarray([1.0, 2.0, 3.0])
    (g,) = tape_gradients(lambda t: [clipped_identity(t) * ops.convert_to_tensor([0.1, 1.0, -2.0], backend=B)], [x])
    np.testing.assert_allclose(g, [0.1, 0.5, -0.5])


def test_host_side_results_stay_on_the_input_backend(backend):
    with autodiff.on_backend(backend):
        t = ops.convert_to_tensor(np.asarray([[3, 0], [0, 5]], np.int32))
        for out in (ops.unique(t), ops.nonzero(t)[0], ops.bitwise_and(t, 1), ops.linalg.inv(ops.cast(t, "float32"))):
            assert out.backend is backend


@pytest.mark.parametrize("call,message", [
    (lambda: ops.rot90(np.ones(3, np.float32)), "axes must be two axes"),
    (lambda: ops.glu(np.ones((2, 3), np.float32)), "even size"),
    (lambda: ops.depth_to_space(np.ones((1, 2, 2, 3), np.float32), 2), "not divisible"),
    (lambda: ops.bitwise_and(np.ones(2, np.float32) * 0.5, 1), "integer tensors"),
    (lambda: ops.linalg.inv(np.ones((2, 3), np.float32)), r"square matrix .* got shape \(2, 3\)"),
    (lambda: ops.linalg.cholesky(-np.eye(2, dtype=np.float32)), "not positive definite"),
    (lambda: ops.histogram(np.ones((2, 2), np.float32)), "must be 1-D"),
    (lambda: ops.bincount(np.ones(3, np.float32)), "must be an int tensor"),
    (lambda: ops.searchsorted(np.ones(3, np.float32), 1.0, side="middle"), "side must be"),
    (lambda: ops.rearrange(np.ones((2, 6), np.float32), "a (b c) -> a b c"), "cannot infer"),
    (lambda: ops.image.resize(np.ones((4, 4), np.float32), (2, 2)), r"images must be .* got shape \(4, 4\)"),
    (lambda: ops.image.map_coordinates(np.ones((3, 3), np.float32), [np.zeros(2)] * 2, 3), "order must be 0 or 1"),
    (lambda: ops.scatter_update(np.ones(3, np.float32), [[0]], [1.0], reduction="avg"), "reduction must be"),
    (lambda: ops.nanquantile(np.ones(3, np.float32), 2.0), r"q must be .* in \[0, 1\]"),
    (lambda: ops.fft(np.ones(3, np.float32)), r"\(real, imag\) pair"),
])
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_where_with_only_a_condition_is_nonzero(backend):
    x = np.asarray([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]], np.float32)
    with autodiff.on_backend(backend):
        t = ops.convert_to_tensor(x)
        for got in (ops.where(t), ops.nonzero(t)):
            assert [g.numpy().tolist() for g in got] == [i.tolist() for i in np.nonzero(x)]
        with pytest.raises(ValueError, match="both x1 and x2"):
            ops.where(t, 1.0)


def test_elastic_transform_is_seeded_and_the_identity_without_displacement(backend):
    images = np.random.default_rng(0).random((2, 8, 9, 3)).astype(np.float32)
    with autodiff.on_backend(backend):
        same = ops.image.elastic_transform(images, alpha=0.0, seed=1).numpy()
        a = ops.image.elastic_transform(images, alpha=3.0, sigma=2.0, seed=4).numpy()
        b = ops.image.elastic_transform(images, alpha=3.0, sigma=2.0, seed=4).numpy()
    np.testing.assert_allclose(same, images, atol=1e-6)
    np.testing.assert_array_equal(a, b)
    assert a.shape == images.shape and not np.allclose(a, images)


def test_control_flow_edges():
    with autodiff.on_backend(B):
        assert ops.switch(7, [lambda v: v + 1, lambda v: v * 3], 2) == 6      # clamped to the last
        assert ops.switch(-2, [lambda v: v + 1, lambda v: v * 3], 2) == 3
        carry, ys = ops.scan(lambda c, _: (c + 1.0, c * 2.0), 0.0, length=4)
        assert carry == 4.0 and ops.convert_to_numpy(ys).tolist() == [0.0, 2.0, 4.0, 6.0]
        assert ops.while_loop(lambda i: i < 10, lambda i: i + 3, 0, maximum_iterations=2) == 6
        pairs = ops.vectorize(lambda a, b: a * b)(np.arange(3.0), np.ones((2, 1)))
        np.testing.assert_array_equal(ops.convert_to_numpy(pairs), np.arange(3.0)[None].repeat(2, 0))
    with pytest.raises(ValueError, match="give xs or length"):
        ops.scan(lambda c, x: (c, x), 0.0)


def test_custom_gradient_with_two_inputs():
    @ops.custom_gradient
    def scaled_product(a, b):
        def grad(upstream):
            return upstream * 2.0, None
        return a * b, grad

    a, b = np.asarray([1.0, 2.0]), np.asarray([3.0, 4.0])
    ga, gb = tape_gradients(lambda x, y: [scaled_product(x, y)], [a, b])
    np.testing.assert_allclose(ga, [2.0, 2.0])
    assert gb is None     # grad_fn gave None for b
