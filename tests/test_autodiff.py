"""Finite-difference gradient checks of minidl.ops on the numpy backend in float64."""

import numpy as np
import pytest

from minidl import autodiff, ops
from minidl.autodiff import Tensor
from minidl.backends.numpy_backend import NumpyBackend

B = NumpyBackend("float64")


def grad_check(f, *shapes, positive=False, seed=0):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(s) for s in shapes]
    if positive:
        xs = [np.abs(x) + 0.5 for x in xs]

    def value(arrays):
        with autodiff.on_backend(B), autodiff.recording(None):
            return float(ops.convert_to_numpy(ops.sum(f(*[Tensor(a.copy(), B) for a in arrays]))))

    tape = autodiff.Tape(B)
    ts = [Tensor(x.copy(), B, requires_grad=True) for x in xs]
    with autodiff.on_backend(B), autodiff.recording(tape):
        out = f(*ts)
    grads = tape.gradients([out], [Tensor(np.ones(out.shape), B)], ts)
    for k, (x, g) in enumerate(zip(xs, grads)):
        numeric = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            up, down = [a.copy() for a in xs], [a.copy() for a in xs]
            up[k][i] += 1e-6
            down[k][i] -= 1e-6
            numeric[i] = (value(up) - value(down)) / 2e-6
        got = np.zeros_like(x) if g is None else ops.convert_to_numpy(g)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6, err_msg=f"input {k}")


CASES = {
    "add-broadcast-row": (lambda a, b: a + b, [(3, 4), (4,)]),
    "add-broadcast-column": (lambda a, b: a + b, [(3, 1), (1, 4)]),
    "sub-leading": (lambda a, b: a - b, [(2, 3, 4), (3, 1)]),
    "mul": (lambda a, b: a * b, [(3, 4), (3, 4)]),
    "div": (lambda a, b: a / (b * b + 1.0), [(3, 4), (4,)]),
    "scalar-ops": (lambda a: 2.0 * a - 1.0 / (a * a + 2.0) + a ** 3.0, [(5,)]),
    "maximum": (lambda a, b: ops.maximum(a, b), [(3, 4), (3, 4)]),
    "matmul": (lambda a, b: ops.matmul(a, b), [(3, 4), (4, 5)]),
    "matmul-3d-2d": (lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "matmul-batched": (lambda a, b: a @ b, [(2, 3, 4), (2, 4, 2)]),
    "sum-axis": (lambda a: ops.sum(a, axis=1) * ops.sum(a, axis=1), [(3, 4)]),
    "mean-keepdims": (lambda a: a * ops.mean(a, axis=0, keepdims=True), [(3, 4)]),
    "max-axis": (lambda a: ops.max(a, axis=-1), [(3, 4)]),
    "var": (lambda a: ops.var(a, axis=0), [(4, 3)]),
    "std": (lambda a: ops.std(a, axis=1), [(3, 5)]),
    "prod": (lambda a: ops.prod(a, axis=1), [(3, 4)]),
    "exp-log-sqrt": (lambda a: ops.exp(a) + ops.log(a) + ops.sqrt(a) + ops.log1p(a), [(3, 4)]),
    "tanh-sigmoid": (lambda a: ops.tanh(a) * ops.sigmoid(a), [(3, 4)]),
    "softmax": (lambda a: ops.softmax(a) * ops.arange(4, dtype="float32"), [(3, 4)]),
    "log_softmax": (lambda a: ops.log_softmax(a, axis=0) * ops.arange(4, dtype="float32"), [(3, 4)]),
    "gelu": (lambda a: ops.gelu(a), [(6,)]),
    "gelu-exact-erf": (lambda a: ops.gelu(a, approximate=False) + ops.erf(a), [(6,)]),
    "trig": (lambda a: ops.sin(a) * ops.cos(a) + ops.tan(a * 0.3) + ops.arctan(a), [(6,)]),
    "inverse-trig": (lambda a: ops.arcsin(ops.tanh(a) * 0.9) + ops.arccos(ops.tanh(a) * 0.8)
                     + ops.arctanh(ops.tanh(a) * 0.7), [(6,)]),
    "hyperbolic": (lambda a: ops.sinh(a) * ops.cosh(a) + ops.arcsinh(a)
                   + ops.arccosh(a * a + 1.5), [(6,)]),
    "slice": (lambda a: a[:, 1:3] * a[:, 0:2], [(3, 4)]),
    "slice-step-negative": (lambda a: a[::-1, ::2], [(3, 4)]),
    "ellipsis-int": (lambda a: a[..., 0] * a[1], [(4, 4)]),
    "newaxis": (lambda a: a[:, None, :] * a[None], [(3, 3)]),
    "take": (lambda a: ops.take(a, [2, 0, 2], axis=1), [(3, 4)]),
    "int-array-index": (lambda a: a[:, [0, 0, 3]], [(2, 4)]),
    "transpose": (lambda a: ops.transpose(a, (2, 0, 1)) * 1.5, [(2, 3, 4)]),
    "reshape-squeeze": (lambda a: ops.squeeze(ops.expand_dims(ops.reshape(a, (4, 3)), 0)), [(3, 4)]),
    "concatenate": (lambda a, b: ops.concatenate([a, b * b], axis=1), [(2, 3), (2, 2)]),
    "stack-split": (lambda a: ops.stack(ops.split(a, 2, axis=1), axis=0) ** 2.0, [(3, 4)]),
    "tile-repeat": (lambda a: ops.tile(a, (2, 1)) * ops.repeat(a, 2, axis=0), [(2, 3)]),
    "broadcast_to": (lambda a: ops.broadcast_to(a, (3, 2, 4)) ** 2.0, [(2, 1)]),
    "where-clip": (lambda a, b: ops.where(a > 0.0, a * b, b) + ops.clip(a, -0.5, 0.5), [(3, 4), (3, 4)]),
    "abs-square": (lambda a: ops.abs(a) + ops.square(a), [(5,)]),
    "tensordot": (lambda a, b: ops.tensordot(a, b, axes=([1, 2], [0, 1])), [(2, 3, 4), (3, 4, 2)]),
    "take_along_axis": (lambda a: ops.take_along_axis(a, [[0, 3], [1, 1], [2, 0]], 1) ** 2.0,
                        [(3, 4)]),
    "roll-diagonal-trace": (lambda a: ops.roll(a, 1, 0) * ops.diagonal(a) + ops.trace(a * a),
                            [(3, 3)]),
    "slice_update": (lambda a, u: ops.slice_update(a, (1, 0), u * u) * a, [(3, 4), (2, 2)]),
    "logaddexp": (lambda a, b: ops.logaddexp(a, b), [(5,), (5,)]),
    "cumsum-diff": (lambda a: ops.cumsum(a, axis=1) * ops.pad(ops.diff(a), [(0, 0), (1, 0)]),
                    [(3, 4)]),
    "arctan2": (lambda a, b: ops.arctan2(a, b), [(6,), (6,)]),
    "normalize-norm": (lambda a: ops.normalize(a) * ops.norm(a, axis=0), [(3, 4)]),
    "conv-same-strided": (lambda x, w: ops.conv(x, w, strides=2, padding="same") ** 2.0,
                          [(2, 5, 5, 3), (3, 3, 3, 2)]),
    "conv-dilated-grouped": (lambda x, w: ops.conv(x, w, padding="same", dilation_rate=2) ** 2.0,
                             [(2, 5, 5, 4), (3, 3, 2, 4)]),
    "conv_transpose-same-strided": (lambda x, w: ops.conv_transpose(x, w, strides=2, padding="same") ** 2.0,
                                    [(2, 3, 4, 3), (3, 3, 2, 3)]),
    "conv_transpose-valid-output_padding": (
        lambda x, w: ops.conv_transpose(x, w, strides=(2, 3), output_padding=(1, 2)) ** 2.0,
        [(1, 3, 3, 2), (2, 3, 3, 2)]),
    "max_pool": (lambda x: ops.max_pool(x, 2, padding="same") * 3.0, [(1, 5, 5, 2)]),
    "average_pool": (lambda x: ops.average_pool(x, (2, 3), strides=1) ** 2.0, [(2, 4, 5, 1)]),
    "one_hot-take": (lambda a: ops.sum(ops.one_hot(ops.convert_to_tensor([2, 0]), 3) * a[:2], 1),
                     [(3, 3)]),
    "elu-selu-softsign": (lambda a: ops.elu(a) + ops.selu(a) * ops.softsign(a), [(3, 4)]),
    "log_sigmoid-swish": (lambda a: ops.log_sigmoid(a) * ops.swish(a), [(3, 4)]),
    "logsumexp": (lambda a: ops.logsumexp(a, axis=1), [(3, 4)]),
    "pad-flip": (lambda a: ops.pad(ops.flip(a, 0), [(1, 0), (2, 1)], constant_values=0.5) ** 2.0,
                 [(2, 3)]),
    "moveaxis-outer": (lambda a, b: ops.moveaxis(a, 0, 2) * 2.0 + ops.sum(ops.outer(a[0, 0], b)),
                       [(2, 3, 4), (3,)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f, shapes = CASES[name]
    positive = name in ("exp-log-sqrt", "prod", "std")
    grad_check(f, *shapes, positive=positive)


def test_maximum_ties_give_the_gradient_once():
    a = Tensor(np.array([1.0, 2.0]), B, requires_grad=True)
    b = Tensor(np.array([1.0, 3.0]), B, requires_grad=True)
    tape = autodiff.Tape(B)
    with autodiff.on_backend(B), autodiff.recording(tape):
        out = ops.maximum(a, b)
    ga, gb = tape.gradients([out], [Tensor(np.ones(2), B)], [a, b])
    assert list(ops.convert_to_numpy(ga) + ops.convert_to_numpy(gb)) == [1.0, 1.0]


def test_stop_gradient_blocks_its_branch():
    a = Tensor(np.array([1.0, -2.0]), B, requires_grad=True)
    tape = autodiff.Tape(B)
    with autodiff.on_backend(B), autodiff.recording(tape):
        out = a * ops.stop_gradient(a)
    (ga,) = tape.gradients([out], [Tensor(np.ones(2), B)], [a])
    assert list(ops.convert_to_numpy(ga)) == [1.0, -2.0]


def test_bad_shapes_get_clear_errors():
    with autodiff.on_backend(B):
        a, b = ops.ones((3, 4)), ops.ones((5,))
        with pytest.raises(ValueError, match=r"ops.add: shapes \(3, 4\) and \(5,\) do not broadcast"):
            ops.add(a, b)
        with pytest.raises(ValueError, match=r"ops.matmul: shapes \(3, 4\) and \(5, 2\) do not align"):
            ops.matmul(a, ops.ones((5, 2)))
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 of size 4"):
            a[:, 7]
        with pytest.raises(ValueError, match="cannot reshape"):
            ops.reshape(a, (5, -1))
        with pytest.raises(IndexError, match=r"take: indices must be in \[-4, 4\)"):
            ops.take(a, [0, 4], axis=1)


def test_loss_functions_match_their_formulas():
    from minidl import losses
    rng = np.random.default_rng(9)
    logits = rng.normal(size=(6, 4))
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    labels = rng.integers(0, 4, 6)
    onehot = np.eye(4)[labels]
    t = rng.uniform(size=(6, 4)) > 0.5
    q = 1 / (1 + np.exp(-logits))
    with autodiff.on_backend(B):
        def run(f, *args, **kw):
            return ops.convert_to_numpy(f(*[Tensor(np.asarray(a, np.float64), B) for a in args], **kw))
        cce = -(onehot * np.log(p)).sum(1)
        np.testing.assert_allclose(run(losses.categorical_crossentropy, onehot, p), cce, rtol=1e-6)
        np.testing.assert_allclose(run(losses.categorical_crossentropy, onehot, logits,
                                       from_logits=True), cce, rtol=1e-6)
        np.testing.assert_allclose(run(losses.sparse_categorical_crossentropy, labels, p), cce,
                                   rtol=1e-6)
        bce = -(t * np.log(q) + (1 - t) * np.log(1 - q)).mean(1)
        np.testing.assert_allclose(run(losses.binary_crossentropy, t, q), bce, rtol=1e-6)
        np.testing.assert_allclose(run(losses.binary_crossentropy, t, logits, from_logits=True),
                                   bce, rtol=1e-6)
        np.testing.assert_allclose(run(losses.mean_squared_error, t, q), ((q - t) ** 2).mean(1))
