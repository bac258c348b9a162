"""Cases of keras.ops / keras.random run both by real Keras (make_reference.py, in a venv with
Keras 3.15.1, KERAS_BACKEND=torch, writes ops_reference.npz) and by minidl
(tests/test_ops_keras_reference.py, on every backend, against that file). A case is a function
of the ops module (keras.ops or minidl.ops) and numpy inputs; its result is a tensor or a
tuple / list of tensors. Cases marked grad=True also compare d(sum of the outputs)/d(inputs)
(Keras's from torch autograd, minidl's from its tape)."""

import numpy as np

CASES = []


def case(name, fn, *inputs, tol=1e-5, grad=False, numpy_reference=None):
    """numpy_reference(*inputs) -> the expected outputs, where Keras's torch backend is wrong
    (the test compares with it instead of the file; the reason is noted at the case)."""
    CASES.append((name, fn, inputs, tol, grad, numpy_reference))


def _rng(seed):
    return np.random.default_rng(seed)


def f32(*shape, seed=0, scale=1.0, positive=False):
    x = _rng(seed).standard_normal(shape).astype(np.float32) * scale
    return np.abs(x) + 0.5 if positive else x


def i32(*shape, low=0, high=10, seed=0):
    return _rng(seed).integers(low, high, shape).astype(np.int32)


def _sparsemax(x):
    z = -np.sort(-x, axis=-1)
    k = np.arange(1, x.shape[-1] + 1)
    cum = np.cumsum(z, -1)
    support = 1 + k * z > cum
    k_max = support.sum(-1, keepdims=True)
    tau = (np.take_along_axis(cum, k_max - 1, -1) - 1) / k_max
    return np.maximum(x - tau, 0)


X = f32(3, 4, seed=1)
XN = X.copy()
XN[0, 1] = np.nan
XN[2, :] = np.nan
V = f32(7, seed=2)
P = f32(3, 4, seed=3, positive=True)
A = f32(4, 4, seed=4)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
IMG = _rng(5).random((2, 6, 8, 3)).astype(np.float32)
I = i32(3, 4, seed=6, low=1, high=50)
J = i32(3, 4, seed=7, low=1, high=50)

# ---- numpy-style elementwise
for fname in ("cbrt", "deg2rad", "rad2deg", "exp2", "fabs", "trunc", "sinc", "i0", "signbit",
              "isneginf", "isposinf", "angle", "real", "conj", "conjugate", "isreal"):
    case(f"numpy.{fname}", lambda o, x, f=fname: getattr(o.numpy, f)(x), X * 3,
         grad=fname in ("cbrt", "deg2rad", "exp2", "fabs", "sinc", "i0"))
case("special-values", lambda o, x: (o.isneginf(x), o.isposinf(x), o.signbit(x), o.trunc(x)),
     np.array([-np.inf, np.inf, -0.0, 0.0, -1.5, 2.5], np.float32))
for fname in ("fmax", "fmin", "hypot", "logaddexp2", "heaviside", "divide_no_nan", "fmod", "ldexp",
              "nextafter"):
    b = f32(3, 4, seed=8)
    b[0, 0] = 0.0
    case(f"numpy.{fname}", lambda o, x, y, f=fname: getattr(o.numpy, f)(x, y), XN if fname in ("fmax", "fmin") else X,
         np.round(b * 2).astype(np.int32) if fname == "ldexp" else b, grad=fname in ("hypot", "logaddexp2"))
for fname in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "left_shift", "right_shift",
              "bitwise_left_shift", "bitwise_right_shift"):
    case(f"numpy.{fname}", lambda o, x, y, f=fname: getattr(o.numpy, f)(x, y % 5 if "shift" in f else y), I, J)
case("numpy.bitwise_not", lambda o, x: (o.bitwise_not(x), o.bitwise_invert(x)), I)
case("erfc-erfinv", lambda o, x: (o.erfc(x), o.erfinv(x * 0.3)), X, tol=1e-4, grad=True)
case("allclose", lambda o, x, y: o.cast(o.allclose(x, y + 1e-9), "float32"), X, X)
case("ptp-empty_like-shape", lambda o, x: (o.ptp(x, axis=1), o.ptp(x), o.shape(o.empty_like(x))[0] + 0.0 * o.sum(x)), X)
case("geomspace", lambda o: (o.geomspace(1.0, 1000.0, 4), o.geomspace(-2.0, -32.0, 5, endpoint=False)))

# ---- nan-reductions
for fname in ("nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd"):
    case(f"numpy.{fname}", lambda o, x, f=fname: (getattr(o, f)(x[:2]), getattr(o, f)(x, axis=1),
                                                  getattr(o, f)(x, axis=0, keepdims=True)), XN, tol=1e-5)
case("nanargmax-nanargmin", lambda o, x: (o.nanargmax(x[:2], axis=1), o.nanargmin(x[:2], axis=1),
                                          o.nanargmax(x[:2])), XN)
case("nancumsum-nancumprod", lambda o, x: (o.nancumsum(x, axis=1), o.nancumprod(x, axis=0), o.nancumsum(x)), XN)
case("nanquantile", lambda o, x: tuple(o.nanquantile(x[:2], q, axis=1, method=m) for q in (0.3, [0.0, 0.5, 1.0])
                                       for m in ("linear", "lower", "higher", "midpoint", "nearest")), XN)
case("nanmedian-nanpercentile", lambda o, x: (o.nanmedian(x[:2], axis=1), o.nanpercentile(x[:2], 40, axis=1),
                                              o.nanmedian(x[:2])), XN)
case("percentile", lambda o, x: (o.percentile(x, 25), o.percentile(x, [10, 90], axis=0)), X, grad=True)

# ---- shapes
case("flips-rot90", lambda o, x: (o.fliplr(x), o.flipud(x), o.rot90(x), o.rot90(x, k=2),
                                  o.rot90(x, k=3), o.rot90(x, k=-1, axes=(1, 0))), X, grad=True)
case("rot90-3d", lambda o, x: o.rot90(x, 1, axes=(1, 2)), IMG[0])
case("array_split", lambda o, x: o.array_split(x, 3), V)
case("array_split-axis1", lambda o, x: o.array_split(x, 3, axis=1), X)
case("hsplit-vsplit-dsplit", lambda o, x: (o.hsplit(x[0], 2), o.vsplit(x[0], [2, 5]), o.dsplit(x, 2)), IMG)
case("dstack", lambda o, x, y: (o.dstack([x, y]), o.dstack([x[0], y[0]])), X, P, grad=True)
case("diagflat", lambda o, x: (o.diagflat(x[:2, :2]), o.diagflat(x[0], k=1), o.diagflat(x[0], k=-2)), X, grad=True)
case("get_item", lambda o, x: o.get_item(x, 1), X)

# ---- products
case("inner", lambda o, x, y: (o.inner(x, y), o.inner(x[0], y[1])), X, P, grad=True)
case("kron", lambda o, x, y: (o.kron(x[:2, :3], y[:2, :2]), o.kron(x[0], y[1])), X, P, grad=True)
# Keras's torch cross of (3, 3) inputs crosses along axis 0 (torch.cross's old default dim):
# numpy's (and Keras's documented) axis -1 is the reference
case("cross", lambda o, x, y: (o.cross(x[:, :3], y[:, :3]), o.cross(x[:, :2], y[:, :2]),
                               o.cross(x[:, :3], y[:, 1:4])), X, P,
     numpy_reference=lambda x, y: (np.cross(x[:, :3], y[:, :3]), np.cross(np.pad(x[:, :2], [(0, 0), (0, 1)]),
                                   np.pad(y[:, :2], [(0, 0), (0, 1)]))[:, 2], np.cross(x[:, :3], y[:, 1:4])))
case("vander", lambda o, x: (o.vander(x[:4]), o.vander(x[:3], 5, increasing=True)), V)
case("trapezoid", lambda o, y, x: (o.trapezoid(y), o.trapezoid(y, dx=0.5, axis=0), o.trapezoid(y[0], x[0])),
     X, np.cumsum(P, 1), grad=True)
case("correlate", lambda o, x, y: (o.correlate(x, y[:3]), o.correlate(x, y[:3], mode="same"),
                                   o.correlate(x, y[:3], mode="full"), o.correlate(y[:3], x, mode="full")),
     V, V[::-1].copy(), tol=1e-4, grad=True)
case("corrcoef", lambda o, x: o.corrcoef(x), X, tol=1e-4)
case("cdist", lambda o, x, y: o.cdist(x, y), X, P, tol=1e-4, grad=True)

# ---- windows
for fname in ("bartlett", "hanning", "hamming", "blackman"):
    case(f"numpy.{fname}", lambda o, f=fname: (getattr(o, f)(7), getattr(o, f)(1), getattr(o, f)(6)))
case("kaiser", lambda o: (o.kaiser(7, 5.0), o.kaiser(6, 0.5)), tol=1e-5)

# ---- binning, search, sets
case("searchsorted", lambda o, s, v: (o.searchsorted(s, v), o.searchsorted(s, v, side="right")),
     np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32), np.array([-1.0, 1.0, 2.0, 4.0, 9.0], np.float32))
case("digitize", lambda o, x, b: o.digitize(x, b), X, np.array([-1.0, 0.0, 0.5, 1.0], np.float32))
case("isin", lambda o, x, y: o.cast(o.isin(x, y), "float32"), I % 7, np.array([1, 3, 5], np.int32))
case("bincount", lambda o, x, w: (o.bincount(x), o.bincount(x, weights=w), o.bincount(x, minlength=12)),
     i32(20, seed=9), f32(20, seed=10))
case("histogram", lambda o, x: (o.histogram(x), o.histogram(x, bins=4, range=(-1.0, 1.0))), f32(50, seed=11))
case("unique", lambda o, x: o.unique(x), I % 6)
case("unique-extras", lambda o, x: o.unique(x, return_inverse=True, return_counts=True), i32(12, seed=12))
case("unravel_index", lambda o, x: o.unravel_index(x, (3, 4, 5)), i32(8, seed=13, high=60))
# Keras's torch argpartition does not partition (row 2 of X): numpy's is the reference
case("argpartition", lambda o, x: o.sort(o.take_along_axis(x, o.argpartition(x, 2, axis=1)[:, :3], axis=1), axis=1), X,
     numpy_reference=lambda x: np.sort(np.take_along_axis(x, np.argpartition(x, 2, axis=1)[:, :3], axis=1), axis=1))

# ---- nn
for fname in ("celu", "glu", "hard_shrink", "soft_shrink", "tanh_shrink", "hard_tanh", "hard_swish",
              "sparse_plus", "sparse_sigmoid", "squareplus", "sparsemax", "elu", "selu", "log_sigmoid",
              "relu6", "softsign", "swish", "hard_sigmoid", "hard_silu"):
    case(f"nn.{fname}", lambda o, x, f=fname: getattr(o.nn, f)(x), X * 2, tol=1e-5,
         grad=fname not in ("sparsemax",), numpy_reference=(lambda x: _sparsemax(x)) if fname == "sparsemax" else None)
case("nn.celu-alpha", lambda o, x: o.nn.celu(x, alpha=0.5), X, grad=True)
case("nn.threshold", lambda o, x: o.nn.threshold(x, 0.2, -3.0), X, grad=True)
# Keras's torch sparsemax sums the cumulative sums over the support for tau (its rows do not sum
# to 1): Martins and Astudillo's formula in numpy is the reference
case("nn.sparsemax-axis", lambda o, x: (o.nn.sparsemax(x, axis=0), o.nn.sparsemax(x * 0.1)), X,
     numpy_reference=lambda x: (np.moveaxis(_sparsemax(np.moveaxis(x, 0, -1)), -1, 0), _sparsemax(x * 0.1)))
case("nn.layer_normalization", lambda o, x, g, b: (o.nn.layer_normalization(x), o.nn.layer_normalization(
    x, gamma=g, beta=b), o.nn.layer_normalization(x, epsilon=0.1)), X, P[0], X[1], tol=1e-4, grad=True)
case("nn.rms_normalization", lambda o, x, g: (o.nn.rms_normalization(x), o.nn.rms_normalization(x, scale=g),
                                              o.nn.rms_normalization(x, epsilon=0.1)), X, P[0], tol=1e-4, grad=True)
case("nn.psnr", lambda o, x, y: o.nn.psnr(x, y, 2.0), IMG, IMG[::-1].copy(), tol=1e-4, grad=True)
case("nn.depth_to_space", lambda o, x: (o.nn.depth_to_space(x, 2), o.nn.space_to_depth(x[:, :, :4, :2], 2)),
     f32(2, 4, 6, 8, seed=14), grad=True)
case("nn.depth_to_space-cf", lambda o, x: (o.nn.depth_to_space(x, 2, data_format="channels_first"),
                                           o.nn.space_to_depth(x, 2, data_format="channels_first")),
     f32(2, 8, 4, 6, seed=15))
case("nn.unfold-fold", lambda o, x: (o.nn.unfold(o.convert_to_tensor(x), 2), o.nn.unfold(o.convert_to_tensor(x), (2, 3), dilation=1, padding=1, stride=2),
                                     o.nn.fold(o.nn.unfold(o.convert_to_tensor(x), 3, padding=1), (5, 6), 3, padding=1)),
     f32(2, 3, 5, 6, seed=16), grad=True)
case("nn.adaptive_pools", lambda o, x: (o.nn.adaptive_average_pool(x, (4, 3)), o.nn.adaptive_max_pool(x, 2),
                                        o.nn.adaptive_average_pool(x[:, 0], 4)),
     f32(2, 7, 5, 3, seed=17), grad=True)
case("nn.depthwise_conv", lambda o, x, k: (o.nn.depthwise_conv(x, k), o.nn.depthwise_conv(x, k, 2, "same")),
     f32(2, 6, 6, 3, seed=18), f32(3, 3, 3, 2, seed=19), tol=1e-4, grad=True)
case("nn.separable_conv", lambda o, x, k, p: o.nn.separable_conv(x, k, p, padding="same"),
     f32(2, 6, 6, 3, seed=18), f32(3, 3, 3, 2, seed=19), f32(1, 1, 6, 4, seed=20), tol=1e-4, grad=True)
case("nn.dot_product_attention", lambda o, q, k, v, m: (
    o.nn.dot_product_attention(q, k, v), o.nn.dot_product_attention(q, k, v, is_causal=True, scale=0.3),
    o.nn.dot_product_attention(q, k, v, mask=m)),
    f32(2, 4, 2, 3, seed=21), f32(2, 4, 2, 3, seed=22), f32(2, 4, 2, 3, seed=23),
    (_rng(24).random((2, 2, 4, 4)) > 0.3), tol=1e-4, grad=True)
case("nn.ctc_loss", lambda o, y, x, tl, ol: o.nn.ctc_loss(y, x, tl, ol), np.array([[1, 2, 2], [3, 1, 0]], np.int32),
     f32(2, 8, 5, seed=25), np.array([3, 2], np.int32), np.array([8, 6], np.int32), tol=1e-4, grad=True)
case("nn.ctc_decode-greedy", lambda o, x, n: o.nn.ctc_decode(x, n), f32(2, 8, 5, seed=26, scale=3.0),
     np.array([8, 5], np.int32), tol=1e-4)
case("nn.ctc_decode-beam", lambda o, x, n: o.nn.ctc_decode(x, n, strategy="beam_search", beam_width=8, top_paths=2),
     f32(2, 6, 4, seed=27, scale=2.0), np.array([6, 5], np.int32), tol=1e-4)
case("nn.moments-normalize", lambda o, x: (o.nn.moments(x, axes=[0]), o.nn.normalize(x), o.nn.normalize(x, axis=0, order=1)),
     X, tol=1e-5, grad=True)

# ---- linalg
case("linalg.inv-det", lambda o, a: (o.linalg.inv(a), o.linalg.det(a), o.slogdet(a), o.logdet(o.matmul(a, o.transpose(a)))),
     A, tol=1e-4, grad=True)
case("linalg.solve", lambda o, a, b: (o.linalg.solve(a, b), o.linalg.solve(a, b[:, 0])), A, X[:, :3].T.copy() if False else f32(4, 3, seed=28),
     tol=1e-4, grad=True)
case("linalg.solve_triangular", lambda o, a, b: (o.linalg.solve_triangular(a, b), o.linalg.solve_triangular(a, b, lower=True)),
     SPD, f32(4, 2, seed=29), tol=1e-4)
case("linalg.cholesky", lambda o, a: (o.linalg.cholesky(a), o.linalg.cholesky(a, upper=True),
                                      o.linalg.cholesky_inverse(o.linalg.cholesky(a))), SPD, tol=1e-4, grad=True)
case("linalg.eigh", lambda o, a: o.abs(o.linalg.eigh(a)[1]) * 0.0 + o.linalg.eigh(a)[0][None, :], SPD, tol=1e-4)
case("linalg.eig-values", lambda o, a: o.sort(o.real(o.linalg.eig(a)[0])), SPD, tol=1e-4)
case("linalg.lstsq", lambda o, a, b: o.linalg.lstsq(a, b), f32(6, 3, seed=30), f32(6, 2, seed=31), tol=1e-4)
case("linalg.lu_factor", lambda o, a: o.linalg.lu_factor(a), A, tol=1e-4)
case("linalg.qr", lambda o, a: tuple(o.abs(t) for t in o.linalg.qr(a)) + tuple(o.abs(t) for t in o.linalg.qr(a, mode="complete")),
     f32(5, 3, seed=32), tol=1e-4)
case("linalg.svd", lambda o, a: (o.linalg.svd(a, compute_uv=False), o.abs(o.linalg.svd(a, full_matrices=False)[0])),
     f32(5, 3, seed=33), tol=1e-4)
case("linalg.rank-pinv", lambda o, a: (o.linalg.matrix_rank(a), o.linalg.pinv(a)), f32(5, 3, seed=34), tol=1e-4)
case("linalg.norm", lambda o, a: (o.linalg.norm(a), o.linalg.norm(a, ord=1), o.linalg.norm(a, ord="fro"),
                                  o.linalg.norm(a, ord=2), o.linalg.norm(a, ord="nuc"), o.linalg.norm(a, ord=-np.inf),
                                  o.linalg.norm(a, axis=1), o.linalg.norm(a, ord=3, axis=0),
                                  o.linalg.norm(a[0], ord=0), o.linalg.norm(a, axis=(0, 1), keepdims=True)),
     A, tol=1e-4)

# ---- fft
case("fft", lambda o, re, im: (o.fft((re, im)), o.fft2((re, im)), o.ifft2((re, im))), X, P, tol=1e-4)
case("rfft-irfft", lambda o, x: (o.rfft(x), o.rfft(x, fft_length=6), o.irfft(o.rfft(x)), o.irfft(o.rfft(x), 7)),
     f32(3, 8, seed=35), tol=1e-4)

# ---- math / core
case("segments", lambda o, x, s: (o.segment_sum(x, s), o.segment_max(x, s, num_segments=4),
                                  o.segment_min(x, s), o.segment_prod(x, s)),
     X.T.copy(), np.array([0, 0, 2, 2], np.int32), grad=True)
case("segment_sum-1d", lambda o, x, s: o.segment_sum(x, s, num_segments=3), V, np.array([2, 0, 0, 1, 1, 2, 0], np.int32),
     grad=True)
case("scatter", lambda o, i, v: (o.scatter(i, v, (4, 3)), o.scatter(i[:, :1], o.stack([v, v, v], 1), (4, 3))),
     np.array([[0, 1], [2, 2], [0, 1]], np.int32), np.array([1.0, 2.0, 3.0], np.float32), grad=True)
case("scatter_update", lambda o, x, i, u: (o.scatter_update(x, i, u), o.scatter_update(x, i[:, :1], o.stack([u, u, u, u], 1))),
     X, np.array([[0, 1], [2, 3]], np.int32), np.array([7.0, 8.0], np.float32))
case("slice_update", lambda o, x, u: o.slice_update(x, (1, 1), u), X, P[:2, :2], grad=True)
case("extract_sequences", lambda o, x: (o.extract_sequences(x, 3, 2), o.extract_sequences(x[0], 4, 1)), f32(2, 9, seed=36),
     grad=True)
case("saturate_cast", lambda o, x: (o.saturate_cast(x * 100, "uint8"), o.saturate_cast(x * 1000, "int8")), X)
case("rearrange", lambda o, x: (o.rearrange(x, "b (h p) w c -> b h (w p c)", p=2), o.rearrange(x, "b h w c -> c b w h")),
     f32(2, 4, 3, 2, seed=37), grad=True)
case("control-flow", lambda o, x: (
    o.cond(o.sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0),
    o.switch(1, [lambda v: v + 1.0, lambda v: v * 3.0], x),
    o.fori_loop(0, 3, lambda i, v: v * 1.5 + float(i), x),
    o.while_loop(lambda v: o.sum(v) < 100.0, lambda v: (v * 2.0 + 1.0,), (o.abs(x),))[0],
    o.scan(lambda c, v: (c + v, c * v), o.zeros((4,)), x)[1],
    o.associative_scan(lambda a, b: a + b, x, axis=1),
    o.associative_scan(lambda a, b: a * b, x, reverse=True),
    o.map(lambda v: o.sum(v * v), x),
    o.vectorized_map(lambda v: o.flip(v, 0), o.convert_to_tensor(x))), X, grad=True)
case("vectorize", lambda o, x, y: (o.vectorize(lambda a, b: a * b + 1.0)(x, y),
                                   o.vectorize(lambda a, b: o.sum(a * b), signature="(n),(n)->()")(x, y)), X, P)

# ---- image
case("image.resize", lambda o, x: (o.image.resize(x, (3, 4)), o.image.resize(x, (12, 10)),
                                   o.image.resize(x, (5, 5), interpolation="nearest"),
                                   o.image.resize(x, (4, 4), crop_to_aspect_ratio=True),
                                   o.image.resize(x, (4, 4), pad_to_aspect_ratio=True),
                                   o.image.resize(x, (4, 3), antialias=True), o.image.resize(x, (3, 12), antialias=True),
                                   o.image.resize(x, (4, 11), interpolation="bicubic"),
                                   o.image.resize(x, (3, 12), interpolation="bicubic", antialias=True),
                                   o.image.resize(x, (5, 5), interpolation="bicubic", crop_to_aspect_ratio=True)),
     IMG, tol=1e-4, grad=True)
case("image.affine_transform", lambda o, x: (
    o.image.affine_transform(x, np.array([[1.1, 0.2, -1.0, -0.1, 0.9, 0.5, 0, 0]] * 2, np.float32)),
    o.image.affine_transform(x, np.array([[1, 0, 1.3, 0, 1, -0.4, 0, 0], [0.8, 0, 0.13, 0, 1.2, 0.05, 0, 0]], np.float32),
                             interpolation="nearest", fill_mode="reflect"),
    o.image.affine_transform(x, np.array([[1, 0.3, 0, 0, 1, 0, 0, 0]] * 2, np.float32), fill_mode="wrap"),
    o.image.affine_transform(x, np.array([[1, 0, 2, 0, 1, 1, 0, 0]] * 2, np.float32), fill_mode="nearest", fill_value=0.5)),
    IMG, tol=1e-4, grad=True)
case("image.crop-pad", lambda o, x: (o.image.crop_images(x, 1, 2, 1, 1), o.image.crop_images(x, 1, 1, target_height=3, target_width=4),
                                     o.image.pad_images(x, 1, 2, 0, 1), o.image.pad_images(x[0], 1, 1, target_height=9, target_width=11)),
     IMG, grad=True)
case("image.colors", lambda o, x: (o.image.rgb_to_grayscale(x), o.image.rgb_to_hsv(x), o.image.hsv_to_rgb(x),
                                   o.image.hsv_to_rgb(o.image.rgb_to_hsv(x))), IMG, tol=1e-5, grad=True)
case("image.extract_patches", lambda o, x: (o.image.extract_patches(x, 2), o.image.extract_patches(x, (3, 2), strides=(1, 2)),
                                            o.image.extract_patches(x, 3, strides=2, padding="same"),
                                            o.image.extract_patches(x, 2, strides=1, dilation_rate=2)), IMG, grad=True)
case("image.extract_patches_3d", lambda o, x: (o.image.extract_patches_3d(x, 2), o.image.extract_patches_3d(x, (2, 3, 2), strides=1, padding="same")),
     f32(1, 4, 5, 6, 2, seed=38))
# Keras's torch gaussian_blur reads data_format=None as channels_first: the cases name it
case("image.gaussian_blur", lambda o, x: (o.image.gaussian_blur(x, data_format="channels_last"),
                                          o.image.gaussian_blur(x, (5, 5), (2.0, 0.7), data_format="channels_last")), IMG,
     tol=1e-5, grad=True)
case("image.sobel_edges", lambda o, x: o.image.sobel_edges(x), IMG, tol=1e-4, grad=True)
case("image.ssim", lambda o, x, y: (o.image.ssim(x, y, filter_size=3), o.image.ssim(x, x * 0.9 + 0.05, filter_size=5)),
     IMG, IMG[::-1].copy(), tol=1e-4, grad=True)
case("image.map_coordinates", lambda o, x, c: tuple(o.image.map_coordinates(x, c, order, mode, fill_value=0.5)
                                                    for order in (0, 1)
                                                    for mode in ("constant", "nearest", "wrap", "mirror", "reflect")),
     f32(5, 6, seed=39), (_rng(40).random((2, 3, 7)) * np.array([9.0, 11.0])[:, None, None] - 2.5).astype(np.float32),
     tol=1e-4)
case("image.perspective_transform", lambda o, x: o.image.perspective_transform(
    x, np.array([[0, 0], [7, 0], [0, 5], [7, 5]], np.float32), np.array([[1, 0], [6, 1], [0, 5], [7, 4]], np.float32)),
    IMG, tol=1e-3)
case("image.scale_and_translate", lambda o, x: o.image.scale_and_translate(
    x, (2, 9, 12, 3), np.array([1.5, 1.5], np.float32), np.array([0.0, 0.0], np.float32), (1, 2), "linear", antialias=False),
    IMG, tol=1e-4)

# ---- Keras's argument names and defaults of the older ops
case("keyword-arguments", lambda o, x, y: (
    o.add(x1=x, x2=y), o.maximum(x1=x, x2=y), o.stop_gradient(variable=o.convert_to_tensor(x)), o.stack(x=[x, y], axis=1),
    o.max(x, axis=1, initial=0.5), o.min(x, initial=-0.2), o.nn.normalize(x, epsilon=10.0),
    o.normalize(x, order=1), o.linspace(0.0, 1.0, 5, retstep=True)[0],
    o.pad(x, [(1, 0), (0, 2)]), o.nan_to_num(o.log(x)), o.meshgrid(x[0], y[1])[1],
    o.nn.one_hot(np.array([0, 2], np.int32), 3), o.nn.multi_hot(np.array([[0, 2]], np.int32), num_classes=4),
    o.nn.moments(x, axes=[1], synchronized=False)[1]), X, P)
