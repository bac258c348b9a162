// Softmax, losses and their gradients. Row kernels run one work-item per row of a (rows, k)
// tensor; elementwise kernels one work-item per element (n = rows * k).
// targets are int32 class indices (rows,) ("sparse") or float (rows, k) ("dense").
// NaN and infinities give what numpy gives: row maxima and clips use common.cl's max_nan and
// clip_nan (fmax and clamp would drop a NaN).

// Keras clips probabilities to [CLIP_EPS, 1 - CLIP_EPS] before taking logs.
#define CLIP_EPS 1e-7f

// out (rows, k) = softmax of x along each row; returns nothing, used by several kernels
void softmax_row(__global float *out, __global const float *x, const int k)
{
    float mx = x[0];
    for (int j = 1; j < k; ++j) mx = max_nan(mx, x[j]);
    float s = 0.0f;
    for (int j = 0; j < k; ++j) {
        const float e = exp(x[j] - mx);
        out[j] = e;
        s += e;
    }
    const float inv = 1.0f / s;
    for (int j = 0; j < k; ++j) out[j] *= inv;
}

// log(sum(exp(x))) of one row, computed stably
float logsumexp_row(__global const float *x, const int k)
{
    float mx = x[0];
    for (int j = 1; j < k; ++j) mx = max_nan(mx, x[j]);
    float s = 0.0f;
    for (int j = 0; j < k; ++j) s += exp(x[j] - mx);
    return mx + log(s);
}

// out may alias x: softmax_row reads each x[j] before it writes out[j]
__kernel void softmax_forward(__global float *out, __global const float *x, const int rows,
                              const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    softmax_row(out + r * k, x + r * k, k);
}

// dx = y * (dout - sum(dout * y)) per row; dx may alias dout
__kernel void softmax_backward(__global float *dx, __global const float *dout,
                               __global const float *y, const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const int o = r * k;
    float dot = 0.0f;
    for (int j = 0; j < k; ++j) dot += dout[o + j] * y[o + j];
    for (int j = 0; j < k; ++j) dx[o + j] = y[o + j] * (dout[o + j] - dot);
}

// ------------------------------------------------------------------------ softmax cross-entropy
// loss (rows,) = logsumexp(logits) - logits[target]; probs (rows, k) = softmax(logits)
__kernel void softmax_cross_entropy_forward_sparse(__global float *probs, __global float *loss,
                                        __global const float *logits, __global const int *targets,
                                        const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const int o = r * k;
    const int t = targets[r];
    const float lse = logsumexp_row(logits + o, k);
    loss[r] = (t >= 0 && t < k) ? lse - logits[o + t] : NAN;
    softmax_row(probs + o, logits + o, k);
}

// loss (rows,) = sum_j t_j * (logsumexp(logits) - logits_j)
__kernel void softmax_cross_entropy_forward_dense(__global float *probs, __global float *loss,
                                       __global const float *logits, __global const float *targets,
                                       const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const int o = r * k;
    const float lse = logsumexp_row(logits + o, k);
    float l = 0.0f;
    for (int j = 0; j < k; ++j) l += targets[o + j] * (lse - logits[o + j]);
    loss[r] = l;
    softmax_row(probs + o, logits + o, k);
}

// dlogits (n,) = (probs - onehot(target)) * scale  (the dense case is an axpby)
__kernel void softmax_cross_entropy_backward_sparse(__global float *dlogits, __global const float *probs,
                                         __global const int *targets, const float scale,
                                         const int k, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float onehot = targets[i / k] == i % k ? 1.0f : 0.0f;
    dlogits[i] = (probs[i] - onehot) * scale;
}

// p clipped to [CLIP_EPS, 1 - CLIP_EPS]
float clip_prob(const float p)
{
    return clip_nan(p, CLIP_EPS, 1.0f - CLIP_EPS);
}

// The row losses that walk one row of (rows, k) pred and float targets. `kind` is a constant at
// every call, so the compiler keeps only its branch.
enum row_loss_kind { XENT_DENSE, XENT_BINARY, SQUARED_ERROR, SIGMOID_XENT };

// loss of row r: the sum over the row for XENT_DENSE, the mean for the others; SIGMOID_XENT
// takes logits as pred and also writes probs = sigmoid(logits) (probs is unused otherwise)
float row_loss(const int kind, __global float *probs, __global const float *pred,
               __global const float *targets, const int r, const int k)
{
    float l = 0.0f;
    for (int j = r * k; j < (r + 1) * k; ++j) {
        const float t = targets[j];
        if (kind == XENT_DENSE) {
            l -= t * log(clip_prob(pred[j]));
        } else if (kind == XENT_BINARY) {
            const float p = clip_prob(pred[j]);
            l -= t * log(p) + (1.0f - t) * log(1.0f - p);
        } else if (kind == SQUARED_ERROR) {
            const float d = pred[j] - t;
            l += d * d;
        } else {
            const float x = pred[j];
            const float e = exp(-fabs(x));
            l += max_nan(x, 0.0f) - x * t + log1p(e);
            probs[j] = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
        }
    }
    return kind == XENT_DENSE ? l : l / (float)k;
}

// ------------------------------------------------------------------------ sigmoid cross-entropy
// probs = sigmoid(logits); loss (rows,) = mean_j of max(x, 0) - x t + log(1 + exp(-|x|))
__kernel void sigmoid_cross_entropy_forward(__global float *probs, __global float *loss,
                                 __global const float *logits, __global const float *targets,
                                 const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r < rows) loss[r] = row_loss(SIGMOID_XENT, probs, logits, targets, r, k);
}

// ----------------------------------------------------------------- cross-entropy of probabilities
// the clip passes no gradient where it changes p (as TensorFlow's clip_by_value), nor where p
// is NaN: the numpy and cpu backends' mask is clip(p) == p, false for a NaN
int clip_active(const float p)
{
    return !(clip_prob(p) == p);
}

// d(loss)/dp times scale for float targets t: dense -t / p, binary -(t / p - (1 - t) / (1 - p))
float prob_grad(const int binary, const float p, const float t, const float scale)
{
    if (clip_active(p)) return 0.0f;
    return binary ? -scale * (t / p - (1.0f - t) / (1.0f - p)) : -scale * t / p;
}

__kernel void cross_entropy_forward_sparse(__global float *loss, __global const float *probs,
                                           __global const int *targets, const int rows, const int k)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const int t = targets[r];
    loss[r] = (t >= 0 && t < k) ? -log(clip_prob(probs[r * k + t])) : NAN;
}

__kernel void cross_entropy_forward_dense(__global float *loss, __global const float *probs,
                                          __global const float *targets, const int rows,
                                          const int k)
{
    const int r = get_global_id(0);
    if (r < rows) loss[r] = row_loss(XENT_DENSE, 0, probs, targets, r, k);
}

// loss (rows,) = mean_j of -(t log p + (1 - t) log(1 - p))
__kernel void cross_entropy_forward_binary(__global float *loss, __global const float *probs,
                                           __global const float *targets, const int rows,
                                           const int k)
{
    const int r = get_global_id(0);
    if (r < rows) loss[r] = row_loss(XENT_BINARY, 0, probs, targets, r, k);
}

__kernel void cross_entropy_backward_sparse(__global float *dprobs, __global const float *probs,
                                            __global const int *targets, const float scale,
                                            const int k, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float p = probs[i];
    dprobs[i] = (targets[i / k] == i % k && !clip_active(p)) ? -scale / p : 0.0f;
}

__kernel void cross_entropy_backward_dense(__global float *dprobs, __global const float *probs,
                                           __global const float *targets, const float scale,
                                           const int n)
{
    const int i = get_global_id(0);
    if (i < n) dprobs[i] = prob_grad(0, probs[i], targets[i], scale);
}

// scale already includes the 1 / k of the mean over the last axis
__kernel void cross_entropy_backward_binary(__global float *dprobs, __global const float *probs,
                                            __global const float *targets, const float scale,
                                            const int n)
{
    const int i = get_global_id(0);
    if (i < n) dprobs[i] = prob_grad(1, probs[i], targets[i], scale);
}

// ------------------------------------------------------------------------------ squared error
// loss (rows,) = mean_j of (pred - targets)^2  (the gradient is an axpby)
__kernel void mean_squared_error_forward(__global float *loss, __global const float *pred,
                                         __global const float *targets, const int rows,
                                         const int k)
{
    const int r = get_global_id(0);
    if (r < rows) loss[r] = row_loss(SQUARED_ERROR, 0, pred, targets, r, k);
}
