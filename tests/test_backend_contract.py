"""The executable contract (minidl/backends/contract/): every backend runs the same checks and
the same host arithmetic, because the public op is the contract's and only the underscore-named
implementation is the backend's."""

import inspect
import re

import numpy as np
import pytest

from minidl.backends.contract.activations import ActivationsSection
from minidl.backends.contract.attention import AttentionSection
from minidl.backends.contract.convolution import ConvolutionSection
from minidl.backends.contract.depthwise import DepthwiseSection
from minidl.backends.contract.elementwise import ElementwiseSection
from minidl.backends.contract.gemm import GemmSection
from minidl.backends.contract.images import ImagesSection
from minidl.backends.contract.larq import LarqSection
from minidl.backends.contract.layer_ops import LayerOpsSection
from minidl.backends.contract.losses import LossesSection
from minidl.backends.contract.metrics import MetricsSection
from minidl.backends.contract.normalization import NormalizationSection
from minidl.backends.contract.optimizers import OptimizersSection, adam_step_size, nadam_coefficients
from minidl.backends.contract.pooling import PoolingSection
from minidl.backends.contract.quantized import QuantizedSection
from minidl.backends.contract.recurrent import RecurrentSection
from minidl.backends.contract.regularizers import RegularizersSection
from minidl.backends.contract.tensor_ops import TensorOpsSection

SECTIONS = (ActivationsSection, AttentionSection, ConvolutionSection, DepthwiseSection, ElementwiseSection,
            GemmSection, ImagesSection, LarqSection, LayerOpsSection, LossesSection, MetricsSection, NormalizationSection,
            OptimizersSection, PoolingSection, QuantizedSection, RecurrentSection, RegularizersSection,
            TensorOpsSection)


def _public_ops(section):
    return [name for name, _ in inspect.getmembers(section, inspect.isfunction) if not name.startswith("_")]


def _implementations(section):
    """The underscore names a section's public ops call: what every backend must implement."""
    return sorted(set(re.findall(r"self\.(_[a-z0-9_]+)\(", inspect.getsource(section))))


def test_no_backend_overrides_a_checked_op(backend):
    """A backend that defined a public op of an executable section would skip its checks."""
    for section in SECTIONS:
        for name in _public_ops(section):
            assert getattr(type(backend), name) is getattr(section, name), (
                f"{type(backend).__name__}.{name} overrides the contract's checked op; implement _{name}")
        for name in _implementations(section):
            assert callable(getattr(backend, name, None)), f"{type(backend).__name__} lacks {name}"


def test_every_backend_implements_the_sections():
    """The three backend classes implement every underscore name, whatever this machine has."""
    from minidl.backends.cpu.backend import CpuBackend
    from minidl.backends.numpy_backend import NumpyBackend
    from minidl.backends.opencl.backend import OpenCLBackend
    for cls in (NumpyBackend, CpuBackend, OpenCLBackend):
        for section in SECTIONS:
            for name in _public_ops(section):
                assert getattr(cls, name) is getattr(section, name), f"{cls.__name__}.{name}"
            for name in _implementations(section):
                assert hasattr(cls, name), f"{cls.__name__} lacks {name}"


def _tensors(backend, *shapes):
    rng = np.random.default_rng(0)
    return [backend.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]


BIAS_CORRECTED = {
    "adam_update": lambda b, w, g, s: b.adam_update(w, g, s[0], s[1], 0.1, 0.9, 0.999, 1e-7, 0, 0.0),
    "amsgrad_update": lambda b, w, g, s: b.amsgrad_update(w, g, s[0], s[1], s[2], 0.1, 0.9, 0.999, 1e-7, 0, 0.0),
    "adamax_update": lambda b, w, g, s: b.adamax_update(w, g, s[0], s[1], 0.1, 0.9, 0.999, 1e-7, 0, 0.0),
    "nadam_update": lambda b, w, g, s: b.nadam_update(w, g, s[0], s[1], 0.1, 0.9, 0.999, 1e-7, 0, 0.9, 0.0),
}


@pytest.mark.parametrize("op", sorted(BIAS_CORRECTED))
def test_step_is_one_based_on_every_backend(backend, op):
    """Step 0 would divide by 1 - beta ** 0 = 0: every backend refuses it with one message
    (opencl's adam_update used to run it)."""
    w, g, *state = _tensors(backend, (3, 4), (3, 4), (3, 4), (3, 4), (3, 4))
    before = backend.to_numpy(w)
    with pytest.raises(ValueError, match=rf"^{op}: step is 1-based, got 0$"):
        BIAS_CORRECTED[op](backend, w, g, state)
    np.testing.assert_array_equal(backend.to_numpy(w), before)   # nothing ran


def test_state_shapes_are_checked_alike(backend):
    """A state tensor of another shape (even of the same size) is refused with the same message
    on every backend."""
    w, g, m, v = _tensors(backend, (3, 4), (3, 4), (3, 4), (4, 3))
    with pytest.raises(ValueError, match=r"^adam_update: v must have shape \(3, 4\), got \(4, 3\)$"):
        backend.adam_update(w, g, m, v, 0.1, 0.9, 0.999, 1e-7, 1, 0.0)
    w, g, velocity = _tensors(backend, (5,), (6,), (5,))
    with pytest.raises(ValueError, match=r"^sgd_update: g must have shape \(5,\), got \(6,\)$"):
        backend.sgd_update(w, g, velocity, 0.1, 0.9, False, 0.0)
    with pytest.raises(ValueError, match=r"^sgd_update: momentum=0.9 needs a velocity tensor"):
        backend.sgd_update(w, w, None, 0.1, 0.9, False, 0.0)
    average, w = _tensors(backend, (2, 3), (3, 2))
    with pytest.raises(ValueError, match=r"^ema_update: w must have shape \(2, 3\), got \(3, 2\)$"):
        backend.ema_update(average, w, 0.9)


@pytest.mark.parametrize("step", [1, 2, 7])
def test_bias_correction_is_the_contracts(backend, step):
    """adam, amsgrad, adamax and nadam at `step` equal the float64 formulas with the contract's
    corrections (one place computes them for every backend)."""
    rng = np.random.default_rng(step)
    w0, g, m0, v0 = (rng.standard_normal((4, 5)) for _ in range(4))
    v0 = np.abs(v0)
    b1, b2, eps, lr = 0.9, 0.999, 1e-7, 0.01
    m = b1 * m0 + (1 - b1) * g
    v = b2 * v0 + (1 - b2) * g * g
    expected = {
        "adam": w0 - adam_step_size(lr, b1, b2, step) * m / (np.sqrt(v) + eps),
        "adamax": w0 - lr / (1 - b1 ** step) * m / (np.maximum(b2 * v0, np.abs(g)) + eps),
    }
    c_m, c_g, v_scale = nadam_coefficients(b1, b2, step, 0.5)
    expected["nadam"] = w0 - lr * (c_m * m + c_g * g) / (np.sqrt(v * v_scale) + eps)
    for name, expect in expected.items():
        w, gt, mt, vt = (backend.from_numpy(a.astype(np.float32)) for a in (w0, g, m0, v0))
        if name == "adam":
            backend.adam_update(w, gt, mt, vt, lr, b1, b2, eps, step, 0.0)
        elif name == "adamax":
            backend.adamax_update(w, gt, mt, vt, lr, b1, b2, eps, step, 0.0)
        else:
            backend.nadam_update(w, gt, mt, vt, lr, b1, b2, eps, step, 0.5, 0.0)
        np.testing.assert_allclose(backend.to_numpy(w), expect, rtol=2e-5, atol=2e-6, err_msg=name)



def test_normalization_shapes_are_checked_alike(backend):
    x, out, mean, invstd, gamma, beta = _tensors(backend, (6, 4), (6, 4), (4,), (4,), (4,), (3,))
    with pytest.raises(ValueError, match=r"^batchnorm_forward_train: beta must have shape \(4,\), got \(3,\)$"):
        backend.batchnorm_forward_train(out, mean, invstd, x, gamma, beta, mean, invstd, 0.9, 1e-3)
    with pytest.raises(ValueError, match=r"^batchnorm_forward_infer: out must have shape \(6, 4\), got \(4,\)$"):
        backend.batchnorm_forward_infer(gamma, x, gamma, None, mean, invstd, 1e-3)
    rows_mean, = _tensors(backend, (6,))
    with pytest.raises(ValueError, match=r"^layernorm_forward: mean must have shape \(6,\), got \(4,\)$"):
        backend.layernorm_forward(out, mean, rows_mean, x, gamma, gamma, 1e-3)
    with pytest.raises(ValueError, match=r"^layernorm_backward: x must be 2-D \(rows, channels\), got shape \(4,\)$"):
        backend.layernorm_backward(out, gamma, gamma, out, gamma, rows_mean, rows_mean, gamma)


@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm_without_scale_and_center_on_every_backend(backend, affine):
    """gamma / beta / dgamma / dbeta None (scale=False, center=False) mean 1 and 0 and no
    gradient, on every backend (opencl used to need the tensors)."""
    rng = np.random.default_rng(1)
    x0, dout0 = rng.standard_normal((2, 10, 3))
    x, dout = backend.from_numpy(x0.astype(np.float32)), backend.from_numpy(dout0.astype(np.float32))
    out, dx = backend.empty((10, 3)), backend.empty((10, 3))
    mean, invstd, moving_mean, moving_var = (backend.zeros((3,)) for _ in range(4))
    ones = backend.from_numpy(np.ones(3, np.float32)) if affine else None
    zeros = backend.zeros((3,)) if affine else None
    backend.batchnorm_forward_train(out, mean, invstd, x, ones, zeros, moving_mean, moving_var, 0.9, 1e-3)
    xhat = (x0 - x0.mean(0)) / np.sqrt(x0.var(0) + 1e-3)
    np.testing.assert_allclose(backend.to_numpy(out), xhat, rtol=1e-4, atol=1e-5)
    dgamma = backend.empty((3,)) if affine else None
    dbeta = backend.empty((3,)) if affine else None
    backend.batchnorm_backward(dx, dgamma, dbeta, dout, x, mean, invstd, ones)
    n = x0.shape[0]
    expect = (n * dout0 - dout0.sum(0) - xhat * (dout0 * xhat).sum(0)) / (n * np.sqrt(x0.var(0) + 1e-3))
    np.testing.assert_allclose(backend.to_numpy(dx), expect, rtol=1e-4, atol=1e-5)
    backend.batchnorm_forward_infer(out, x, ones, zeros, moving_mean, moving_var, 1e-3)
    expect = (x0 - backend.to_numpy(moving_mean)) / np.sqrt(backend.to_numpy(moving_var) + 1e-3)
    np.testing.assert_allclose(backend.to_numpy(out), expect, rtol=1e-4, atol=1e-5)


def test_conv_plans_and_shapes_are_checked_alike(backend):
    """One set of rules for a conv plan and the tensors of its three ops on every backend (the
    cpu backend's used to be its own)."""
    with pytest.raises(ValueError, match=r"^conv2d_plan: input shape \(2, 5, 5, 3\) must be \(N, H, W, 2\)"):
        backend.conv2d_plan((2, 5, 5, 3), (3, 3, 2, 4), (1, 1), "same")
    with pytest.raises(ValueError, match=r"^conv2d_plan: .*groups=2 \(filters divisible by groups\)"):
        backend.conv2d_plan((2, 5, 5, 4), (3, 3, 2, 5), (1, 1), "same", groups=2)
    with pytest.raises(ValueError, match=r"^conv2d_plan: kernel \(7, 7\) .* leaves no output"):
        backend.conv2d_plan((2, 5, 5, 3), (7, 7, 3, 4), (1, 1), "valid")
    with pytest.raises(ValueError, match=r"^conv2d_transpose_plan: input shape \(2, 5, 5, 3\) must be"):
        backend.conv2d_transpose_plan((2, 5, 5, 3), (3, 3, 4, 2), (2, 2), "same")
    plan = backend.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    out, x, weight, bias = _tensors(backend, (2, 5, 5, 4), (2, 5, 5, 3), (3, 3, 3, 4), (4,))
    bad_x, bad_bias = _tensors(backend, (2, 5, 5, 4), (3,))
    with pytest.raises(ValueError, match=r"^conv2d_forward: x must have shape \(2, 5, 5, 3\), got \(2, 5, 5, 4\)$"):
        backend.conv2d_forward(out, bad_x, weight, bias, plan)
    with pytest.raises(ValueError, match=r"^conv2d_forward: bias must have shape \(4,\), got \(3,\)$"):
        backend.conv2d_forward(out, x, weight, bad_bias, plan)
    with pytest.raises(ValueError, match=r"^conv2d_backward_data: dx must have shape \(2, 5, 5, 3\)"):
        backend.conv2d_backward_data(out, out, weight, plan)
    with pytest.raises(ValueError, match=r"^conv2d_backward_filter: dbias must have shape \(4,\), got \(3,\)$"):
        backend.conv2d_backward_filter(weight, bad_bias, out, x, plan)
    with pytest.raises(ValueError, match=r"^conv2d_forward: precision must be None or one of"):
        backend.conv2d_forward(out, x, weight, bias, plan, precision="int8")


def test_pointwise_has_one_rule():
    """opencl's pointwise test is window.is_pointwise, the C kernels' rule: grouped or padded 1x1
    convolutions are not pointwise."""
    from minidl.backends.opencl import conv
    from minidl.backends.window import is_pointwise, make_window
    assert conv.is_pointwise is is_pointwise
    assert is_pointwise(make_window((2, 4, 4, 6), (1, 1), (1, 1), "valid", 6))
    assert not is_pointwise(make_window((2, 4, 4, 6), (1, 1), (1, 1), "valid", 6, groups=2))
    assert not is_pointwise(make_window((2, 4, 4, 6), (1, 1), (2, 2), "valid", 6))
    assert not is_pointwise(make_window((2, 4, 4, 6), (3, 3), (1, 1), "same", 6))


def test_the_int8_ops_are_a_section_of_every_backend(backend):
    """minidl.quantization calls the backend itself (no dispatch on backend.name): the same checks
    and messages everywhere."""
    x = backend.from_numpy(np.zeros((2, 3), np.float32))
    q = backend.empty_u8((2, 3))
    with pytest.raises(ValueError, match=r"^quantize_u8: zero_point must be an int in \[0, 255\], got 300$"):
        backend.quantize_u8(q, x, 0.1, 300)
    with pytest.raises(ValueError, match=r"^dequantize_u8: out must be float32 of shape \(2, 3\), got uint8"):
        backend.dequantize_u8(q, q, 0.1, 0)
    with pytest.raises(ValueError, match=r"^add_u8: b_zero_point must be an int in \[0, 255\], got -1$"):
        backend.add_u8(q, q, q, 0, -1, 1, 1, 0, False)
    backend.quantize_u8(q, x, 0.1, 7)
    np.testing.assert_array_equal(backend.to_numpy(q), np.full((2, 3), 7, np.uint8))
    assert isinstance(backend.quantized_path(), str)


def test_regularizer_arguments_are_checked_alike(backend):
    out, w, g = _tensors(backend, (2,), (3, 4), (4, 3))
    with pytest.raises(ValueError, match=r"^l1_l2_penalty: out must have shape \(1,\), got \(2,\)$"):
        backend.l1_l2_penalty(out, w, 0.1, 0.1)
    with pytest.raises(ValueError, match=r"^l1_l2_gradient: w must have shape \(4, 3\), got \(3, 4\)$"):
        backend.l1_l2_gradient(g, w, 0.1, 0.1)
    with pytest.raises(ValueError, match=r"^orthogonal_gradient: g must have shape \(3, 4\), got \(4, 3\)$"):
        backend.orthogonal_gradient(g, w, 0.1, "rows")
    with pytest.raises(ValueError, match=r"^orthogonal_penalty: mode must be 'rows' or 'columns', got 'diag'$"):
        backend.orthogonal_penalty(backend.zeros((1,)), w, 0.1, "diag")
    with pytest.raises(ValueError, match=r"^norm_constraint: axis=\[0, 2\] must name consecutive axes"):
        backend.norm_constraint(backend.zeros((2, 3, 4)), [0, 2], 0.0, 1.0, 1.0)


def test_pooling_arguments_are_checked_alike(backend):
    """One check per pooling op for every backend (numpy, cpu and opencl had three vocabularies,
    and opencl raised TypeError for an argmax that numpy and cpu refused with ValueError)."""
    plan = backend.pool2d_plan((2, 6, 6, 3), (2, 2), (2, 2), "valid")
    out, x = _tensors(backend, (2, 3, 3, 3), (2, 6, 6, 3))
    with pytest.raises(ValueError, match=r"^max_pool2d_forward: argmax must be int32, got float32$"):
        backend.max_pool2d_forward(out, backend.empty((2, 3, 3, 3)), x, plan)
    with pytest.raises(ValueError, match=r"^avg_pool2d_backward: dout must have shape \(2, 3, 3, 3\), got \(2, 6, 6, 3\)$"):
        backend.avg_pool2d_backward(x, x, plan)
    with pytest.raises(ValueError, match=r"^global_avg_pool_forward: x must be a 4-D \(N, H, W, C\) tensor"):
        backend.global_avg_pool_forward(backend.empty((2, 3)), backend.empty((2, 3)))
    with pytest.raises(ValueError, match=r"^global_avg_pool_backward: dx must have at least 1 pixel"):
        backend.global_avg_pool_backward(backend.empty((2, 0, 4, 3)), backend.empty((2, 3)))
    with pytest.raises(ValueError, match=r"^pad2d_forward: pads must be 4 non-negative ints"):
        backend.pad2d_forward(x, x, (1, -1, 0, 0))
    with pytest.raises(ValueError, match=r"^pad2d_backward: dout must have shape \(2, 8, 7, 3\), got \(2, 6, 6, 3\)$"):
        backend.pad2d_backward(x, x, (1, 1, 0, 1))


def test_loss_arguments_are_checked_alike(backend):
    """One set of shape rules for the fused losses on every backend (opencl used to accept
    targets of the same size in another shape, numpy and cpu each had their own messages)."""
    logits, probs, loss = _tensors(backend, (4, 3), (4, 3), (4,))
    labels = backend.from_numpy(np.array([0, 2, 1, 1], np.int32))
    with pytest.raises(ValueError, match=r"^softmax_cross_entropy_forward: logits must be 2-D \(N, K\), got shape \(12,\)$"):
        backend.softmax_cross_entropy_forward(probs, loss, backend.reshape(logits, (12,)), labels)
    with pytest.raises(ValueError, match=r"^softmax_cross_entropy_forward: targets \(sparse\) must have shape \(4,\), got \(2, 2\)$"):
        backend.softmax_cross_entropy_forward(probs, loss, logits, backend.reshape(labels, (2, 2)))
    with pytest.raises(ValueError, match=r"^softmax_cross_entropy_backward: targets \(dense\) must have shape \(4, 3\), got \(3, 4\)$"):
        backend.softmax_cross_entropy_backward(probs, probs, backend.reshape(logits, (3, 4)), 0.25)
    with pytest.raises(ValueError, match=r"^sigmoid_cross_entropy_forward: loss must have shape \(4,\), got \(4, 3\)$"):
        backend.sigmoid_cross_entropy_forward(probs, probs, logits, logits)
    with pytest.raises(ValueError, match=r"^cross_entropy_backward: dprobs must have shape \(4, 3\), got \(4,\)$"):
        backend.cross_entropy_backward(loss, probs, logits, True, 1.0)
    with pytest.raises(ValueError, match=r"^mean_squared_error_forward: targets must have shape \(4, 3\), got \(3, 4\)$"):
        backend.mean_squared_error_forward(loss, probs, backend.reshape(logits, (3, 4)))
    with pytest.raises(ValueError, match=r"^row_loss_forward: unknown loss kind 'l3'; known: mean_absolute_error"):
        backend.row_loss_forward(loss, probs, logits, "l3")
    with pytest.raises(ValueError, match=r"^row_loss_backward: dpred must have shape \(4, 3\), got \(4,\)$"):
        backend.row_loss_backward(loss, probs, logits, "huber", 1.0, 1.0)


def test_metric_arguments_are_checked_alike(backend):
    pred, = _tensors(backend, (4, 3))
    out, two = backend.zeros((1,)), backend.zeros((2,))
    labels = backend.from_numpy(np.array([0, 2, 1, 1], np.int32))
    with pytest.raises(ValueError, match=r"^sum: out must have shape \(1,\), got \(2,\)$"):
        backend.sum(two, pred)
    with pytest.raises(ValueError, match=r"^all_finite: out must have shape \(1,\), got \(2,\)$"):
        backend.all_finite(two, pred)
    with pytest.raises(ValueError, match=r"^categorical_accuracy: weights must have shape \(4,\), got \(2,\)$"):
        backend.categorical_accuracy(out, pred, labels, weights=two)
    with pytest.raises(ValueError, match=r"^binary_accuracy: targets must have shape \(4, 3\), got \(4,\)$"):
        backend.binary_accuracy(out, pred, labels)
    with pytest.raises(ValueError, match=r"^top_k_accuracy: k must be a positive int, got 0$"):
        backend.top_k_accuracy(out, pred, labels, 0)
    with pytest.raises(ValueError, match=r"^top_k_accuracy: pred must be 2-D \(N, K\), got shape \(12,\)$"):
        backend.top_k_accuracy(out, backend.reshape(pred, (12,)), labels, 2)
    backend.top_k_accuracy(out, pred, labels, 3)
    np.testing.assert_array_equal(backend.to_numpy(out), [4.0])


def test_larq_arguments_are_checked_alike(backend):
    """The quantizers' and the binary ops' arguments are checked once, with one message on every
    backend (opencl's used to start with "opencl ")."""
    x, out, stat = _tensors(backend, (3, 40), (3, 40), (2,))
    with pytest.raises(ValueError, match=r"^quantize_forward: name must be one of"):
        backend.quantize_forward(out, x, "sign")
    with pytest.raises(TypeError, match=r"^quantize_backward \(ste_sign\): param must be a number, got '1'$"):
        backend.quantize_backward(out, out, x, "ste_sign", "1")
    with pytest.raises(ValueError, match=r"^quantize_forward: stat must have shape \(1,\), got \(2,\)$"):
        backend.quantize_forward(out, x, "dorefa_weights", 3.0, stat)
    with pytest.raises(ValueError, match=r"^quantize_backward: dx must have shape \(3, 40\), got \(2,\)$"):
        backend.quantize_backward(stat, out, x, "approx_sign")
    with pytest.raises(ValueError, match=r"^binary_pack_input: bits must have shape \(3, 2\), got \(3, 1\)$"):
        backend.binary_pack_input(backend.empty((3, 1), "int32"), x)
    weight, = _tensors(backend, (3, 3, 40, 4))
    with pytest.raises(ValueError, match=r"^binary_pack_kernel: bits must have shape \(18, 4\), got \(9, 4\)$"):
        backend.binary_pack_kernel(backend.empty((9, 4), "int32"), weight)
    plan = backend.conv2d_plan((1, 5, 5, 40), (3, 3, 40, 4), (1, 1), "same")
    bits, kernel_bits = backend.empty((1, 5, 5, 2), "int32"), backend.empty((18, 4), "int32")
    conv_out, = _tensors(backend, (1, 5, 5, 4))
    with pytest.raises(ValueError, match=r"^binary_conv2d_forward: pad_value must be 0 or 1, got 2$"):
        backend.binary_conv2d_forward(conv_out, bits, kernel_bits, None, plan, 2)
    with pytest.raises(ValueError, match=r"^binary_conv2d_forward: kernel_bits must have shape \(18, 4\), got \(9, 4\)$"):
        backend.binary_conv2d_forward(conv_out, bits, backend.empty((9, 4), "int32"), None, plan, 1)
    with pytest.raises(ValueError, match=r"^binary_conv2d_forward: bias must have shape \(4,\), got \(2,\)$"):
        backend.binary_conv2d_forward(conv_out, bits, kernel_bits, stat, plan, 1)


def test_image_arguments_are_checked_alike(backend):
    """The image ops' arguments are checked once, with one message on every backend (opencl's
    used to start with "opencl ")."""
    x, out, transforms = _tensors(backend, (2, 5, 6, 3), (2, 5, 6, 3), (2, 8))
    with pytest.raises(ValueError, match=r"^image_transform_forward: transforms must be \(2, 8\) or \(1, 8\), got \(8, 2\)$"):
        backend.image_transform_forward(out, x, backend.reshape(transforms, (8, 2)), "bilinear", "reflect", 0.0)
    with pytest.raises(ValueError, match=r"^image_transform_backward: fill_mode must be one of"):
        backend.image_transform_backward(x, out, transforms, "nearest", "mirror")
    with pytest.raises(ValueError, match=r"^image_random_transforms: kind must be one of"):
        backend.image_random_transforms(transforms, "spin", (0, 1, 0, 0), 5, 6, 1)
    with pytest.raises(ValueError, match=r"^random_contrast_forward: value_range must be \(low, high\) with low < high"):
        backend.random_contrast_forward(out, x, 0.1, 0.1, (1.0, 0.0), 3)
    with pytest.raises(ValueError, match=r"^random_brightness_forward: out must have shape \(2, 5, 6, 3\), got \(2, 8\)$"):
        backend.random_brightness_forward(transforms, x, 0.1, 0.1, (0.0, 1.0), 3)
    two_channels, = _tensors(backend, (2, 5, 6, 2))
    with pytest.raises(ValueError, match=r"^random_color_forward: kind 'hue' needs 3 channels"):
        backend.random_color_forward(two_channels, two_channels, "hue", (0.1, 0.2), (0.0, 1.0), 3)
    with pytest.raises(ValueError, match=r"^auto_contrast_forward: expects images \(N, H, W, C\), got shape \(2, 8\)$"):
        backend.auto_contrast_forward(transforms, transforms, (0.0, 1.0))
    big, = _tensors(backend, (2, 10, 12, 3))
    with pytest.raises(ValueError, match=r"^upsample2d_backward: images \(2, 5, 6, 3\) upsampled by \(2, 3\) are"):
        backend.upsample2d_backward(x, big, (2, 3), "nearest")
    with pytest.raises(ValueError, match=r"^upsample2d_forward: interpolation must be one of"):
        backend.upsample2d_forward(big, x, (2, 2), "cubic")
    with pytest.raises(ValueError, match=r"^channel_scale_shift: shift must have shape \(3,\), got \(2, 8\)$"):
        backend.channel_scale_shift(out, x, backend.zeros((3,)), transforms)
    backend.upsample2d_forward(big, x, (2, 2), "nearest")
    np.testing.assert_array_equal(backend.to_numpy(big)[:, ::2, ::2], backend.to_numpy(x))


def test_attention_arguments_are_checked_alike(backend):
    q, k, v, out, probs = _tensors(backend, (2, 3, 2, 4), (2, 5, 2, 4), (2, 5, 2, 6), (2, 3, 2, 6), (2, 2, 3, 5))
    with pytest.raises(ValueError, match=r"^attention_forward: k must be \(B, Tk, H, D\) and v \(B, Tk, H, Dv\)"):
        backend.attention_forward(out, probs, q, v, v, None, None, 0.5, False)
    with pytest.raises(ValueError, match=r"^attention_forward: mask must have shape \(2, 3, 5\), got \(2, 5, 3\)$"):
        backend.attention_forward(out, probs, q, k, v, backend.zeros((2, 5, 3)), None, 0.5, False)
    with pytest.raises(ValueError, match=r"^attention_forward: probs must have shape \(2, 2, 3, 5\), got \(2, 3, 2, 6\)$"):
        backend.attention_forward(out, out, q, k, v, None, None, 0.5, False)
    dq, dk, dv = _tensors(backend, (2, 3, 2, 4), (2, 5, 2, 4), (2, 5, 2, 6))
    with pytest.raises(ValueError, match=r"^attention_backward: dk must have shape \(2, 5, 2, 4\), got \(2, 3, 2, 4\)$"):
        backend.attention_backward(dq, dq, dv, out, q, k, v, probs, None, None, 0.5, True)
    with pytest.raises(ValueError, match=r"^attention_backward: dropout must have shape \(2, 2, 3, 5\), got \(2, 3, 5\)$"):
        backend.attention_backward(dq, dk, dv, out, q, k, v, probs, None, backend.zeros((2, 3, 5)), 0.5, True)


def test_recurrent_arguments_are_checked_alike(backend):
    """The sequence ops check every state, the step ops every row block, and both the
    activations, once (the loops then call the step implementations unchecked)."""
    n, u, steps = 3, 2, 4
    gates, hseq, cseq, h0, c0, kernel = _tensors(backend, (steps, n, 4 * u), (steps, n, u), (steps, n, u), (n, u),
                                                 (n, u), (u, 4 * u))
    with pytest.raises(ValueError, match=r"^lstm_forward: activation must be one of .*got 'gelu'$"):
        backend.lstm_forward(hseq, cseq, gates, h0, c0, kernel, "gelu", "sigmoid")
    with pytest.raises(ValueError, match=r"^lstm_forward: c0 must have shape \(3, 2\), got \(2, 8\)$"):
        backend.lstm_forward(hseq, cseq, gates, h0, kernel, kernel, "tanh", "sigmoid")
    with pytest.raises(ValueError, match=r"^lstm_backward: dc_last must have shape \(3, 2\), got \(2, 8\)$"):
        backend.lstm_backward(gates, kernel, h0, c0, hseq, kernel, gates, cseq, hseq, h0, c0, kernel, "tanh",
                              "sigmoid")
    with pytest.raises(ValueError, match=r"^gru_forward: the gate sequence must be \(T, N, 3 \* units\), got \(4, 3, 8\)$"):
        backend.gru_forward(hseq, gates, gates, h0, kernel, kernel, "tanh", "sigmoid")
    with pytest.raises(ValueError, match=r"^simple_rnn_backward: drecurrent_kernel must have shape \(2, 2\), got \(2, 8\)$"):
        backend.simple_rnn_backward(hseq, kernel, h0, hseq, hseq, h0, kernel, "tanh")
    with pytest.raises(ValueError, match=r"^lstm_gates_forward: gates must be \(N, 4 \* units\), got \(3, 2\)$"):
        backend.lstm_gates_forward(h0, c0, h0, c0, "tanh", "sigmoid")
    step_gates, = _tensors(backend, (n, 3 * u))
    with pytest.raises(ValueError, match=r"^gru_gates_backward: drec must have shape \(3, 6\), got \(3, 2\)$"):
        backend.gru_gates_backward(step_gates, h0, h0, h0, step_gates, step_gates, h0, "tanh", "sigmoid")
    with pytest.raises(ValueError, match=r"^gru_gates_forward: recurrent_activation must be one of"):
        backend.gru_gates_forward(h0, step_gates, step_gates, h0, "tanh", "softmax")


def test_elementwise_arguments_are_checked_alike(backend):
    """Exact shapes on every backend (opencl used to accept any tensors of the same size, numpy
    and cpu refused them), one message; nothing runs when a check fails."""
    a, wrong, bias, out = _tensors(backend, (2, 3), (3, 2), (4,), (2, 3))
    before = backend.to_numpy(out)
    with pytest.raises(ValueError, match=r"^add: out must have shape \(2, 3\), got \(3, 2\)$"):
        backend.add(wrong, a, a)
    with pytest.raises(ValueError, match=r"^multiply: b must have shape \(2, 3\), got \(3, 2\)$"):
        backend.multiply(out, a, wrong)
    with pytest.raises(ValueError, match=r"^axpby: y must have shape \(2, 3\), got \(3, 2\)$"):
        backend.axpby(out, 1.0, a, 2.0, wrong)
    with pytest.raises(ValueError, match=r"^bias_add: bias must have shape \(3,\), got \(4,\)$"):
        backend.bias_add(out, a, bias)
    with pytest.raises(ValueError, match=r"^bias_grad: dbias must have shape \(3,\), got \(4,\)$"):
        backend.bias_grad(bias, a)
    np.testing.assert_array_equal(backend.to_numpy(out), before)
    with pytest.raises(ValueError, match=r"^concat_forward: xs\[1\] of shape \(3, 2\) does not match out"):
        backend.concat_forward(backend.empty((2, 5)), [a, wrong])
    with pytest.raises(ValueError, match=r"^concat_backward: last axes of dxs add up to 6, dout has 5$"):
        backend.concat_backward([a, out], backend.empty((2, 5)))
    mask = backend.empty((2, 3))
    with pytest.raises(ValueError, match=r"^dropout_forward: rate must be in \[0, 1\), got 1.0$"):
        backend.dropout_forward(out, mask, a, 1.0, 7)
    with pytest.raises(TypeError, match=r"^dropout_forward: seed must be an int, got float$"):
        backend.dropout_forward(out, mask, a, 0.5, 7.0)
    with pytest.raises(ValueError, match=r"^dropout_forward: mask must have shape \(2, 3\), got \(3, 2\)$"):
        backend.dropout_forward(out, wrong, a, 0.5, 7)


def test_activation_arguments_are_checked_alike(backend):
    x, y, wrong = _tensors(backend, (4, 5), (4, 5), (5, 4))
    with pytest.raises(ValueError, match=r"^activation_forward: unknown activation 'swish'; known: "):
        backend.activation_forward(y, x, "swish")
    with pytest.raises(ValueError, match=r"^activation_forward: out must have shape \(4, 5\), got \(5, 4\)$"):
        backend.activation_forward(wrong, x, "softmax")
    with pytest.raises(ValueError, match=r"^activation_backward: dout must have shape \(4, 5\), got \(5, 4\)$"):
        backend.activation_backward(x, wrong, y, "relu")
    with pytest.raises(ValueError, match=r"^activation_backward: activation 'gelu' needs the forward input x"):
        backend.activation_backward(x, x, y, "gelu")
    with pytest.raises(ValueError, match=r"^activation_backward: x must have shape \(4, 5\), got \(5, 4\)$"):
        backend.activation_backward(x, x, y, "silu", x=wrong)
    # x is ignored (even of another shape) by the activations whose derivative reads y only
    backend.activation_forward(y, x, "tanh")
    dx = backend.empty((4, 5))
    backend.activation_backward(dx, x, y, "tanh", x=wrong)
    yn = np.tanh(backend.to_numpy(x))
    np.testing.assert_allclose(backend.to_numpy(dx), backend.to_numpy(x) * (1 - yn * yn), rtol=1e-5, atol=1e-6)


def test_gemm_arguments_are_checked_alike(backend):
    a, b, out, flat = _tensors(backend, (3, 4), (4, 5), (3, 5), (12,))
    with pytest.raises(ValueError, match=r"^gemm: out, a and b must be 2-D, got shapes \(3, 5\), \(12,\), \(4, 5\)$"):
        backend.gemm(out, flat, b)
    with pytest.raises(ValueError, match=r"^gemm: op\(a\) \(4, 3\) @ op\(b\) \(4, 5\) does not fit out \(3, 5\)"):
        backend.gemm(out, a, b, trans_a=True)
    with pytest.raises(ValueError, match=r"^gemm: op\(a\) \(3, 4\) @ op\(b\) \(4, 5\) does not fit out \(5, 3\)"):
        backend.gemm(backend.empty((5, 3)), a, b)
    with pytest.raises(ValueError, match=r"^gemm: precision must be None or one of bfloat16, float16, got 'int8'$"):
        backend.gemm(out, a, b, precision="int8")
    out_t = backend.empty((5, 3))
    backend.gemm(out_t, b, a, alpha=2.0, trans_a=True, trans_b=True)   # b.T @ a.T = (a @ b).T
    np.testing.assert_allclose(backend.to_numpy(out_t), 2 * (backend.to_numpy(a) @ backend.to_numpy(b)).T,
                               rtol=1e-5, atol=1e-5)


def test_packed_gemm_arguments_are_checked_alike(backend):
    a, b, out, flat = _tensors(backend, (3, 4), (4, 5), (3, 5), (12,))
    with pytest.raises(ValueError, match=r"^pack_gemm_b: b must be 2-D, got shape \(12,\)$"):
        backend.pack_gemm_b(flat)
    packed = backend.pack_gemm_b(b)
    with pytest.raises(ValueError, match=r"^gemm_packed: a \(4, 5\) @ the packed operand \(4, 5\) "
                                         r"does not fit out \(3, 5\)$"):
        backend.gemm_packed(out, b, packed)
    with pytest.raises(TypeError, match=r"^gemm_packed: packed must be what pack_gemm_b returned, got "):
        backend.gemm_packed(out, a, b)
    with pytest.raises(ValueError, match=r"^pack_gemm_b: into must be a packed operand of op\(b\) \(5, 4\) "
                                         r"with trans_b=True, got \(4, 5, False\)$"):
        backend.pack_gemm_b(b, trans_b=True, into=packed)
    backend.gemm_packed(out, a, packed)
    np.testing.assert_allclose(backend.to_numpy(out), backend.to_numpy(a) @ backend.to_numpy(b),
                               rtol=1e-5, atol=1e-5)


def test_tensor_op_arguments_are_checked_alike(backend):
    """The tensor ops behind minidl.ops: one set of checks and messages (opencl prefixed its own,
    numpy skipped the rank of binary's out)."""
    x, wrong, row = _tensors(backend, (2, 3), (3, 2), (3,))
    with pytest.raises(ValueError, match=r"^unary: unknown operation 'cube'; known: negative, abs"):
        backend.unary(x, x, "cube")
    with pytest.raises(ValueError, match=r"^unary exp: out must have shape \(2, 3\), got \(3, 2\)$"):
        backend.unary(wrong, x, "exp")
    with pytest.raises(ValueError, match=r"^binary add: b of shape \(3, 2\) does not broadcast to out's shape"):
        backend.binary(x, row, wrong, "add")
    with pytest.raises(ValueError, match=r"^binary: tensors of rank at most 8, got shape \(1, 1, 1, 1, 1, 1, 1, 1, 1\)$"):
        backend.binary(backend.empty((1,) * 9), 1.0, 2.0, "add")
    with pytest.raises(ValueError, match=r"^reduce: out of shape \(3, 1\) must have x's rank 2 with 1 on the reduced axes"):
        backend.reduce(backend.empty((3, 1)), x, "sum")
    with pytest.raises(ValueError, match=r"^strided_copy: offset 4 and strides \(1,\) over \(3,\) address elements 4..6"):
        backend.strided_copy(row, x, 4, (1,))
    with pytest.raises(ValueError, match=r"^strided_copy: out is int32, x is float32$"):
        backend.strided_copy(backend.empty((3,), "int32"), x, 0, (1,))
    indices = backend.from_numpy(np.array([0, 1], np.int32))
    with pytest.raises(ValueError, match=r"^take: out must have shape \(2, 2\), got \(2, 3\)$"):
        backend.take(x, x, indices, 1)
    with pytest.raises(ValueError, match=r"^take_backward: indices must be an int32 vector, got float32"):
        backend.take_backward(x, x, row, 1)
    with pytest.raises(ValueError, match=r"^arg_reduce: x must be \(rows, k\) and out int32 \(rows,\), got x \(2, 3\) and out \(2,\) float32$"):
        backend.arg_reduce(backend.empty((2,)), x, "argmax")
    with pytest.raises(ValueError, match=r"^scan_rows: unknown operation 'cummax'"):
        backend.scan_rows(x, x, "cummax")
    with pytest.raises(ValueError, match=r"^argsort_rows: out must be int32 of shape \(2, 3\), got float32"):
        backend.argsort_rows(x, x)
    with pytest.raises(ValueError, match=r"^cast: out \(3,\) and x \(2, 3\) differ in size$"):
        backend.cast(row, x)
    with pytest.raises(ValueError, match=r"^round_to_precision: unknown operation 'int8'"):
        backend.round_to_precision(x, x, "int8")
    with pytest.raises(ValueError, match=r"^round_to_precision: out must have shape \(2, 3\), got \(3, 2\)$"):
        backend.round_to_precision(wrong, x, "bfloat16")


def test_take_index_values_are_checked_on_the_host(backend):
    """Index values are checked where the indices are host memory (numpy, cpu); a device
    backend does not read its indices back."""
    x, = _tensors(backend, (2, 3))
    indices = backend.from_numpy(np.array([0, 3], np.int32))
    if backend.name == "opencl":
        pytest.skip("opencl keeps its indices on the device: their values are not read back")
    with pytest.raises(IndexError, match=r"^take: indices must be in \[-3, 3\), got 0..3$"):
        backend.take(backend.empty((2, 2)), x, indices, 1)


def test_depthwise_arguments_are_checked_alike(backend):
    """One check of the depthwise tensors against the plan for every backend (opencl prefixed
    its messages with 'opencl ')."""
    plan = backend.depthwise_conv2d_plan((2, 5, 5, 3), (3, 3, 3, 2), (1, 1), "same")
    out, x, weight, bias = _tensors(backend, (2, 5, 5, 6), (2, 5, 5, 3), (3, 3, 3, 2), (6,))
    bad_weight, bad_bias = _tensors(backend, (3, 3, 2, 3), (3,))
    with pytest.raises(ValueError, match=r"^depthwise_conv2d_forward: weight must have shape \(3, 3, 3, 2\), got \(3, 3, 2, 3\)$"):
        backend.depthwise_conv2d_forward(out, x, bad_weight, bias, plan)
    with pytest.raises(ValueError, match=r"^depthwise_conv2d_forward: bias must have shape \(6,\), got \(3,\)$"):
        backend.depthwise_conv2d_forward(out, x, weight, bad_bias, plan)
    with pytest.raises(ValueError, match=r"^depthwise_conv2d_backward_data: dx must have shape \(2, 5, 5, 3\), got \(2, 5, 5, 6\)$"):
        backend.depthwise_conv2d_backward_data(out, out, weight, plan)
    with pytest.raises(ValueError, match=r"^depthwise_conv2d_backward_filter: dbias must have shape \(6,\), got \(3,\)$"):
        backend.depthwise_conv2d_backward_filter(weight, bad_bias, out, x, plan)
    with pytest.raises(ValueError, match=r"^depthwise_conv2d_plan: input shape \(2, 5, 5, 3\) must be \(N, H, W, C\)"):
        backend.depthwise_conv2d_plan((2, 5, 5, 3), (3, 3, 4, 1), (1, 1), "same")


def test_the_symbolic_backend_traces_every_section():
    """Custom layers' output shapes are traced on the symbolic backend (backends/symbolic.py):
    it runs the contract's checks on the shapes and has nothing to compute in each section."""
    from minidl.backends.symbolic import SymbolicBackend
    sb = SymbolicBackend()
    for section in SECTIONS:
        for name in _implementations(section):
            assert callable(getattr(SymbolicBackend, name, None)), f"SymbolicBackend lacks {name}"
    a, wrong = sb.empty((2, 3)), sb.empty((3, 2))
    sb.add(a, a, a)
    sb.gemm(sb.empty((2, 2)), a, wrong)
    with pytest.raises(ValueError, match=r"^add: out must have shape \(2, 3\), got \(3, 2\)$"):
        sb.add(wrong, a, a)
    plan = sb.conv2d_plan((2, 5, 5, 3), (3, 3, 3, 4), (1, 1), "same")
    assert plan.out_shape == (2, 5, 5, 4)


def test_layer_ops_arguments_are_checked_alike(backend):
    """PReLU's, the noise's, the channel mask's and transpose's arguments are checked once, with
    one message on every backend (opencl's used to start with "opencl ")."""
    x, out, alpha = (backend.zeros(s) for s in ((4, 3), (4, 3), (2,)))
    with pytest.raises(ValueError, match=r"^prelu_forward: x must be \(rows, K\) and alpha \(K,\), got x \(4, 3\) and alpha \(2,\)$"):
        backend.prelu_forward(out, x, alpha)
    with pytest.raises(TypeError, match=r"^gaussian_noise: seed must be an int, got float$"):
        backend.gaussian_noise(out, x, 1.0, 2.5)
    with pytest.raises(ValueError, match=r"^channel_mask_multiply: x must be \(N, K, C\)"):
        backend.channel_mask_multiply(out, x, alpha)
    with pytest.raises(ValueError, match=r"^transpose: axes \(0, 0\) must permute the 2 axes"):
        backend.transpose(backend.zeros((3, 4)), x, (0, 0))
    with pytest.raises(ValueError, match=r"^transpose: out must have shape \(3, 4\), got \(4, 3\)$"):
        backend.transpose(backend.zeros((4, 3)), x, (1, 0))
