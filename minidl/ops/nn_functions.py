"""keras.ops.nn functions beyond minidl.ops.nn's core: more activations, normalizations,
depth_to_space / space_to_depth, unfold / fold, adaptive pooling, depthwise and separable conv,
dot-product attention, psnr and CTC. All composed from differentiable minidl.ops, so they run on
every backend with gradients (ctc_decode is eager: its output length depends on the values)."""

import math

import numpy as np

from .composite import absolute, expm1, hard_silu, logsumexp, moveaxis
from .core import (as_tensor, cast, convert_to_tensor, empty_like_shape, full, greater, greater_equal,
                   less, less_equal, log, maximum, minimum, record, sigmoid, sqrt, tanh, where)
from .creation import arange
from .einsum import einsum
from .nn import conv, log_softmax, softmax
from .ordering import cumsum, sort
from .reductions import max as reduce_max, mean, sum as reduce_sum
from .shapes import concatenate, reshape, split, stack, take, transpose, zeros_on

EPSILON = 1e-7   # keras.backend.epsilon(), the default epsilon of the normalizations


# ------------------------------------------------------------ activations
def celu(x, alpha=1.0):
    t = as_tensor(x)
    return maximum(t, 0.0) + float(alpha) * expm1(minimum(t, 0.0) / float(alpha))


def glu(x, axis=-1):
    """The gated linear unit: the first half of x along axis times sigmoid of the second."""
    t = as_tensor(x)
    if t.shape[axis] % 2:
        raise ValueError(f"ops.glu: axis {axis} of x {t.shape} must have an even size")
    a, b = split(t, 2, axis)
    return a * sigmoid(b)


hard_swish = hard_silu


def hard_tanh(x):
    return minimum(maximum(as_tensor(x), -1.0), 1.0)


def hard_shrink(x, threshold=0.5):
    t = as_tensor(x)
    return where(greater(absolute(t), float(threshold)), t, 0.0)


def soft_shrink(x, threshold=0.5):
    t = as_tensor(x)
    th = float(threshold)
    return where(greater(t, th), t - th, where(less(t, -th), t + th, 0.0))


def tanh_shrink(x):
    t = as_tensor(x)
    return t - tanh(t)


def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)^2 / 4 between."""
    t = as_tensor(x)
    return where(less_equal(t, -1.0), 0.0, where(greater_equal(t, 1.0), t, (t + 1.0) * (t + 1.0) * 0.25))


def sparse_sigmoid(x):
    t = as_tensor(x)
    return where(less_equal(t, -1.0), 0.0, where(greater_equal(t, 1.0), 1.0, (t + 1.0) * 0.5))


def squareplus(x, b=4):
    t = as_tensor(x)
    return (t + sqrt(t * t + float(b))) * 0.5


def threshold(x, threshold, default_value):  # noqa: A002 - keras's argument name
    t = as_tensor(x)
    return where(greater(t, float(threshold)), t, float(default_value))


def sparsemax(x, axis=-1):
    """The Euclidean projection of x onto the probability simplex along axis (Martins and
    Astudillo, 2016): max(x - tau, 0) with tau chosen so that the result sums to 1."""
    t = cast(as_tensor(x), "float32")
    t = moveaxis(t, axis, -1)
    n = t.shape[-1]
    z = sort(t, axis=-1)
    z = take(z, list(range(n - 1, -1, -1)), axis=-1)        # descending
    k = arange(1, n + 1, dtype="float32", backend=t.backend)
    running = cumsum(z, axis=-1)
    support = greater(1.0 + k * z, running)                 # 1.0 for the first k_max entries
    k_max = reduce_sum(support, -1, keepdims=True)
    tau = (reduce_sum(z * support, -1, keepdims=True) - 1.0) / k_max
    return moveaxis(maximum(t - tau, 0.0), -1, axis)


# ------------------------------------------------------------ normalizations
def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """(x - mean) / sqrt(var + epsilon) over axis, times gamma plus beta. Over the last axis
    (gamma and beta None or of its size) it is the fused kernel pair LayerNormalization runs."""
    t = cast(as_tensor(x), "float32")
    eps = EPSILON if epsilon is None else float(epsilon)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    if t.shape and [a % len(t.shape) for a in axes] == [len(t.shape) - 1] and all(
            v is None or as_tensor(v, t.backend).shape == t.shape[-1:] for v in (gamma, beta)):
        return _fused_layer_normalization(t, gamma, beta, eps)
    m = mean(t, tuple(axes), keepdims=True)
    v = mean((t - m) * (t - m), tuple(axes), keepdims=True)
    out = (t - m) / sqrt(v + eps)
    if gamma is not None:
        out = out * as_tensor(gamma, t.backend)
    return out + as_tensor(beta, t.backend) if beta is not None else out


def _fused_layer_normalization(t, gamma, beta, eps):
    """layer_normalization over the last axis on the backend's layernorm_forward / backward."""
    b = t.backend
    c = t.shape[-1]
    rows = reshape(t, (-1, c))
    g = cast(as_tensor(gamma, b), "float32") if gamma is not None else full((c,), 1.0, backend=b)
    offset = cast(as_tensor(beta, b), "float32") if beta is not None else full((c,), 0.0, backend=b)
    out = empty_like_shape(b, rows.shape)
    mean, invstd = b.empty((rows.shape[0],)), b.empty((rows.shape[0],))
    b.layernorm_forward(out.value, mean, invstd, rows.value, g.value, offset.value, eps)

    def rule(grad):
        dx, dgamma, dbeta = (empty_like_shape(b, shape) for shape in (rows.shape, (c,), (c,)))
        b.layernorm_backward(dx.value, dgamma.value, dbeta.value, grad.value, rows.value, mean, invstd, g.value)
        return dx, dgamma, dbeta
    return reshape(record(out, (rows, g, offset), rule), t.shape)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """x / sqrt(mean(x^2) + epsilon) over axis, times scale."""
    t = cast(as_tensor(x), "float32")
    eps = EPSILON if epsilon is None else float(epsilon)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if t.shape and [a % len(t.shape) for a in axes] == [len(t.shape) - 1] and (
            scale is None or as_tensor(scale, t.backend).shape == t.shape[-1:]):
        # the rows [x, -x] have mean 0 and variance mean(x^2): layer normalization of them,
        # cut back to x's half, is x / sqrt(mean(x^2) + eps) on the fused kernel pair
        c = t.shape[-1]
        g = None if scale is None else concatenate([as_tensor(scale, t.backend)] * 2, 0)
        both = _fused_layer_normalization(concatenate([t, -t], -1), g, None, eps)
        return both[..., :c]
    out = t / sqrt(mean(t * t, axes, keepdims=True) + eps)
    return out * as_tensor(scale, t.backend) if scale is not None else out


def psnr(x1, x2, max_val):
    """The peak signal-to-noise ratio of x2 against x1: 20 log10(max_val) - 10 log10(mse)."""
    a, b = as_tensor(x1), as_tensor(x2, as_tensor(x1).backend)
    if a.shape != b.shape:
        raise ValueError(f"ops.psnr: x1 and x2 must have the same shape, got {a.shape} and {b.shape}")
    mse = mean((a - b) * (a - b))
    return 20.0 * math.log10(float(max_val)) - 10.0 / math.log(10.0) * log(mse)


# ------------------------------------------------------------ rearrangements
def _check_format(data_format, op):
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError(f"ops.{op}: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}")
    return data_format or "channels_last"


def depth_to_space(x, block_size, data_format="channels_last"):
    """(N, H, W, C * b * b) -> (N, H * b, W * b, C), depth in (row, column, channel) order."""
    t = as_tensor(x)
    fmt = _check_format(data_format, "depth_to_space")
    b = int(block_size)
    if fmt == "channels_first":   # depth in (channel, row, column) order, as Keras's
        n, c, h, w = t.shape
        if c % (b * b):
            raise ValueError(f"ops.depth_to_space: channels {c} of x {t.shape} are not divisible by "
                             f"block_size ** 2 = {b * b}")
        out = transpose(reshape(t, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
        return reshape(out, (n, c // (b * b), h * b, w * b))
    n, h, w, c = t.shape
    if c % (b * b):
        raise ValueError(f"ops.depth_to_space: channels {c} of x {t.shape} are not divisible by "
                         f"block_size ** 2 = {b * b}")
    out = reshape(t, (n, h, w, b, b, c // (b * b)))
    out = transpose(out, (0, 1, 3, 2, 4, 5))
    return reshape(out, (n, h * b, w * b, c // (b * b)))


def space_to_depth(x, block_size, data_format="channels_last"):
    """(N, H * b, W * b, C) -> (N, H, W, C * b * b), the inverse of depth_to_space."""
    t = as_tensor(x)
    fmt = _check_format(data_format, "space_to_depth")
    b = int(block_size)
    if fmt == "channels_first":
        n, c, h, w = t.shape
        if h % b or w % b:
            raise ValueError(f"ops.space_to_depth: height and width of x {t.shape} must be divisible "
                             f"by block_size {b}")
        out = transpose(reshape(t, (n, c, h // b, b, w // b, b)), (0, 1, 3, 5, 2, 4))
        return reshape(out, (n, c * b * b, h // b, w // b))
    n, h, w, c = t.shape
    if h % b or w % b:
        raise ValueError(f"ops.space_to_depth: height and width of x {t.shape} must be divisible "
                         f"by block_size {b}")
    out = reshape(t, (n, h // b, b, w // b, b, c))
    out = transpose(out, (0, 1, 3, 2, 4, 5))
    return reshape(out, (n, h // b, w // b, b * b * c))


def _pair(v, name, op):
    pair = (v, v) if isinstance(v, int) else tuple(v)
    if len(pair) != 2 or not all(isinstance(p, (int, np.integer)) for p in pair):
        raise ValueError(f"ops.{op}: {name} must be an int or a pair of ints, got {v!r}")
    return tuple(int(p) for p in pair)


def _unfold_index(c, h, w, kernel_size, dilation, padding, stride, op):
    """Flat positions, in the zero-padded (C, H + 2ph, W + 2pw) image, of every column of
    unfold's output (C * kh * kw, L), and the padded size and output grid."""
    kh, kw = _pair(kernel_size, "kernel_size", op)
    dh, dw = _pair(dilation, "dilation", op)
    ph, pw = _pair(padding, "padding", op)
    sh, sw = _pair(stride, "stride", op)
    hp, wp = h + 2 * ph, w + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(f"ops.{op}: kernel_size {kernel_size} with dilation {dilation} does not fit "
                         f"the padded image {hp}x{wp}")
    ci, ki, kj = np.meshgrid(np.arange(c), np.arange(kh), np.arange(kw), indexing="ij")
    rows = (ci * hp * wp + ki * dh * wp + kj * dw).reshape(-1, 1)
    oi, oj = np.meshgrid(np.arange(oh), np.arange(ow), indexing="ij")
    cols = (oi * sh * wp + oj * sw).reshape(1, -1)
    return (rows + cols).astype(np.int32), (hp, wp), (ph, pw)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of x (N, C, H, W) as columns (N, C * kh * kw, L) (torch's unfold)."""
    from .composite import pad
    t = as_tensor(x)
    if len(t.shape) != 4:
        raise ValueError(f"ops.unfold: x must be (N, C, H, W), got shape {t.shape}")
    n, c, h, w = t.shape
    index, (hp, wp), (ph, pw) = _unfold_index(c, h, w, kernel_size, dilation, padding, stride, "unfold")
    padded = pad(t, [(0, 0), (0, 0), (ph, ph), (pw, pw)]) if ph or pw else t
    return take(reshape(padded, (n, c * hp * wp)), index, axis=1)


def _scatter_add_axis1(values, index, size):
    """out (N, size) with out[:, index[j]] += values[:, j], one take_backward (the adjoint of
    take), recorded with take as its gradient."""
    v = cast(as_tensor(values), "float32")
    flat_index = np.asarray(index, np.int32).reshape(-1)
    flat = reshape(v, (v.shape[0], -1))
    out = zeros_on(v.backend, (v.shape[0], size))
    idx = convert_to_tensor(flat_index, backend=v.backend)
    v.backend.take_backward(out.value, flat.value, idx.value, 1)
    return record(out, (flat,), lambda g: (take(g, flat_index, axis=1),))


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The columns x (N, C * kh * kw, L) summed back into images (N, C, H, W) (torch's fold,
    the adjoint of unfold)."""
    t = as_tensor(x)
    h, w = _pair(output_size, "output_size", "fold")
    kh, kw = _pair(kernel_size, "kernel_size", "fold")
    if len(t.shape) != 3 or t.shape[1] % (kh * kw):
        raise ValueError(f"ops.fold: x must be (N, C * kh * kw, L) with kernel_size {kernel_size}, "
                         f"got shape {t.shape}")
    n, c = t.shape[0], t.shape[1] // (kh * kw)
    index, (hp, wp), (ph, pw) = _unfold_index(c, h, w, kernel_size, dilation, padding, stride, "fold")
    if index.shape[1] != t.shape[2]:
        raise ValueError(f"ops.fold: x has {t.shape[2]} blocks, output_size {output_size} makes "
                         f"{index.shape[1]}")
    out = reshape(_scatter_add_axis1(t, index, c * hp * wp), (n, c, hp, wp))
    return out[:, :, ph:ph + h, pw:pw + w] if ph or pw else out


def _adaptive_bounds(n, out):
    return [(i * n // out, -(-(i + 1) * n // out)) for i in range(out)]


def _adaptive_pool(inputs, output_size, data_format, reduce, op):
    t = cast(as_tensor(inputs), "float32")
    fmt = _check_format(data_format, op)
    spatial = len(t.shape) - 2
    if spatial < 1:
        raise ValueError(f"ops.{op}: inputs must be (N, *spatial, C), got shape {t.shape}")
    sizes = (output_size,) * spatial if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != spatial:
        raise ValueError(f"ops.{op}: output_size {output_size} must have {spatial} entries for "
                         f"inputs of shape {t.shape}")
    first = 2 if fmt == "channels_first" else 1
    for k, size in enumerate(sizes):
        axis = first + k
        lead = (slice(None),) * axis
        parts = [reduce(t[lead + (slice(a, b),)], axis) for a, b in _adaptive_bounds(t.shape[axis], size)]
        t = stack(parts, axis)
    return t


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to output_size bins per spatial axis (bin i covers [floor(i n / out),
    ceil((i + 1) n / out)), as torch)."""
    return _adaptive_pool(inputs, output_size, data_format, lambda t, a: mean(t, a), "adaptive_average_pool")


def adaptive_max_pool(inputs, output_size, data_format=None):
    return _adaptive_pool(inputs, output_size, data_format, lambda t, a: reduce_max(t, a), "adaptive_max_pool")


# ------------------------------------------------------------ convolutions
def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise 2-D convolution: inputs (N, H, W, C), kernel (KH, KW, C, M) -> (N, OH, OW, C * M),
    the grouped convolution with one group per channel."""
    x, w = as_tensor(inputs), as_tensor(kernel)
    if len(x.shape) != 4 or len(w.shape) != 4 or w.shape[2] != x.shape[3]:
        raise ValueError(f"ops.depthwise_conv: inputs (N, H, W, C) and kernel (KH, KW, C, M) needed, "
                         f"got {x.shape} and {w.shape}")
    kh, kw, c, m = w.shape
    return conv(x, reshape(w, (kh, kw, 1, c * m)), strides, padding, data_format, dilation_rate)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    """depthwise_conv, then a 1x1 conv with pointwise_kernel (1, 1, C * M, F)."""
    return conv(depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate),
                pointwise_kernel, 1, "valid", data_format)


# ------------------------------------------------------------ attention
def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, attn_logits_soft_cap=None):
    """softmax(q k^T * scale + bias, masked) v for q (B, T, N, H), k and v (B, S, N, H)."""
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    if len(q.shape) != 4 or len(k.shape) != 4 or len(v.shape) != 4:
        raise ValueError(f"ops.dot_product_attention: query, key and value must be (B, T, N, H), got "
                         f"{q.shape}, {k.shape}, {v.shape}")
    if flash_attention:
        raise ValueError("ops.dot_product_attention: flash_attention is not available here")
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    logits = einsum("btnh,bsnh->bnts", q, k) * s
    if attn_logits_soft_cap is not None:
        cap = float(attn_logits_soft_cap)
        logits = tanh(logits / cap) * cap
    if bias is not None:
        logits = logits + as_tensor(bias, q.backend)
    keep = None
    if mask is not None:
        keep = cast(as_tensor(mask, q.backend), "float32")
    if is_causal:
        t, sk = q.shape[1], k.shape[1]
        causal = convert_to_tensor(np.tril(np.ones((t, sk), np.float32)), backend=q.backend)
        keep = causal if keep is None else keep * causal
    if keep is not None:
        logits = where(keep, logits, float(np.finfo(np.float32).min))
    return einsum("bnts,bsnh->btnh", softmax(logits, -1), v)


# ------------------------------------------------------------ CTC
def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """The CTC negative log-likelihood per batch entry: target (B, L) int labels, output
    (B, T, C) logits, lengths (B,); mask_index is the blank class. The forward (alpha)
    recursion in log space over time, composed of differentiable ops."""
    logits = cast(as_tensor(output), "float32")
    b = logits.backend
    bsz, steps, classes = logits.shape
    labels = np.asarray(as_tensor(target, b).numpy(), np.int64)
    tl = np.asarray(as_tensor(target_length, b).numpy(), np.int64).reshape(-1)
    ol = np.asarray(as_tensor(output_length, b).numpy(), np.int64).reshape(-1)
    length = labels.shape[1]
    ext = np.full((bsz, 2 * length + 1), mask_index, np.int64)
    ext[:, 1::2] = labels
    states = ext.shape[1]
    # may skip from s - 2: a label different from the one two states back
    skip = np.zeros((bsz, states), np.float32)
    skip[:, 2:] = (ext[:, 2:] != mask_index) & (ext[:, 2:] != ext[:, :-2])
    neg = -1e30
    logp = log_softmax(logits, -1)                                         # (B, T, C)
    # per step, the log-probability of each extended state's label: a gather of (B, T, C)
    rows = (np.arange(bsz)[:, None, None] * steps + np.arange(steps)[None, :, None]) * classes
    flat_index = (rows + ext[:, None, :]).astype(np.int32)                # (B, T, S)
    emit = take(reshape(logp, (-1,)), flat_index)                          # (B, T, S)
    skip_t = convert_to_tensor(np.where(skip > 0, 0.0, neg).astype(np.float32), backend=b)
    init = np.full((bsz, states), neg, np.float32)
    init[:, 0] = 0.0
    init[:, 1] = 0.0
    alpha = convert_to_tensor(init, backend=b) + emit[:, 0, :]
    pad1 = convert_to_tensor(np.full((bsz, 1), neg, np.float32), backend=b)
    pad2 = convert_to_tensor(np.full((bsz, 2), neg, np.float32), backend=b)
    for t in range(1, steps):
        shift1 = concatenate([pad1, alpha[:, :-1]], 1)
        shift2 = concatenate([pad2, alpha[:, :-2]], 1) + skip_t
        new = logsumexp(stack([alpha, shift1, shift2], 0), axis=0) + emit[:, t, :]
        live = convert_to_tensor((t < ol).astype(np.float32).reshape(bsz, 1), backend=b)
        alpha = where(live, new, alpha)
    last = np.stack([2 * tl, np.maximum(2 * tl - 1, 0)], 1).astype(np.int32)      # (B, 2)
    ends = take(reshape(alpha, (-1,)), (np.arange(bsz)[:, None] * states + last).astype(np.int32))
    ends = where(convert_to_tensor(np.stack([np.ones(bsz), tl > 0], 1).astype(np.float32), backend=b),
                 ends, neg)
    return -logsumexp(ends, axis=1)


def ctc_decode(inputs, sequence_lengths, strategy="greedy", beam_width=100, top_paths=1,
               merge_repeated=True, mask_index=0):
    """(decoded (top_paths, B, T) int32 padded with -1, scores (B, top_paths)) of inputs (B, T, C);
    eager (the decoded lengths depend on the values). Greedy: the score is minus the sum of each
    step's largest input (Keras's); beam search: the log-probability of each path under
    log_softmax(inputs)."""
    t = cast(as_tensor(inputs), "float32")
    b = t.backend
    raw = np.asarray(t.numpy(), np.float64)
    logp = np.asarray(log_softmax(t, -1).numpy(), np.float64)
    lengths = np.asarray(as_tensor(sequence_lengths, b).numpy(), np.int64).reshape(-1)
    bsz, steps, classes = logp.shape
    if strategy == "greedy":
        if top_paths != 1:
            raise ValueError("ops.ctc_decode: greedy decoding gives one path (top_paths=1)")
        paths, scores = [], []
        for i in range(bsz):
            best = raw[i, :lengths[i]].argmax(-1)
            scores.append([-raw[i, :lengths[i]].max(-1).sum()])
            out, prev = [], None
            for label in best:
                if label != mask_index and not (merge_repeated and label == prev):
                    out.append(label)
                prev = label
            paths.append([out])
    elif strategy == "beam_search":
        paths, scores = [], []
        for i in range(bsz):
            found = _beam_search(logp[i, :lengths[i]], beam_width, top_paths, mask_index, merge_repeated)
            paths.append([p for p, _ in found])
            scores.append([s for _, s in found])
    else:
        raise ValueError(f"ops.ctc_decode: strategy must be 'greedy' or 'beam_search', got {strategy!r}")
    decoded = np.full((top_paths, bsz, steps), -1, np.int32)
    for i in range(bsz):
        for p, seq in enumerate(paths[i][:top_paths]):
            decoded[p, i, :len(seq)] = seq
    return (convert_to_tensor(decoded, backend=b),
            convert_to_tensor(np.asarray(scores, np.float32), backend=b))


def _beam_search(logp, beam_width, top_paths, blank, merge_repeated):
    """CTC prefix beam search over one sequence's log-probabilities (T, C): [(labels, logp)]."""
    beams = {(): (0.0, -np.inf)}            # prefix -> (log p ending in blank, ending in label)
    for row in logp:
        nxt = {}

        def add(prefix, pb, pnb):
            ob, onb = nxt.get(prefix, (-np.inf, -np.inf))
            nxt[prefix] = (np.logaddexp(ob, pb), np.logaddexp(onb, pnb))
        for prefix, (pb, pnb) in beams.items():
            total = np.logaddexp(pb, pnb)
            add(prefix, total + row[blank], -np.inf)
            for c in range(len(row)):
                if c == blank:
                    continue
                p = row[c]
                if prefix and prefix[-1] == c and merge_repeated:
                    add(prefix, -np.inf, pnb + p)          # repeat collapses
                    add(prefix + (c,), -np.inf, pb + p)    # a blank separated it
                else:
                    add(prefix + (c,), -np.inf, total + p)
        beams = dict(sorted(nxt.items(), key=lambda kv: -np.logaddexp(*kv[1]))[:beam_width])
    ranked = sorted(beams.items(), key=lambda kv: -np.logaddexp(*kv[1]))[:top_paths]
    return [(list(p), float(np.logaddexp(*s))) for p, s in ranked]

