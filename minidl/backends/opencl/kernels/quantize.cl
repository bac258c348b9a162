// larq's quantizers, elementwise, one work-item per element: the forward quantization and its
// straight-through gradient. The codes and parameters are csrc/quantize.h's (the order of
// QUANTIZERS in minidl/backends/base.py). stat is read only when has_stat is 1: the (1,) tensor
// holding sum |x| (ste_tern, Ternary Weight Networks) or max |x| (dorefa_weights).
// No tunables: each kernel is one load and one store per element.

#define STE_SIGN 0
#define APPROX_SIGN 1
#define SWISH_SIGN 2
#define STE_HEAVISIDE 3
#define STE_TERN 4
#define DOREFA_ACTIVATIONS 5
#define DOREFA_WEIGHTS 6

float sign3(float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f); }

// out = q(x); out may alias x. NaN stays NaN (every comparison below fails for it).
__kernel void quantize_forward(__global float *out, __global const float *x, __global const float *stat,
                               const int has_stat, const int op, const float param, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const float v = x[i];
    float q = v;
    if (v != v) {
        out[i] = v;
        return;
    }
    if (op <= SWISH_SIGN) {
        q = v >= 0.0f ? 1.0f : -1.0f;                        // larq.math.sign: 0 -> +1
    } else if (op == STE_HEAVISIDE) {
        q = v > 0.0f ? 1.0f : 0.0f;
    } else if (op == STE_TERN) {
        const float t = has_stat ? 0.7f * stat[0] / (float)total : param;
        q = sign3(sign3(v + t) + sign3(v - t));
    } else if (op == DOREFA_ACTIVATIONS) {
        q = rint(clamp(v, 0.0f, 1.0f) * param) / param;     // rint: half to even, as tf.round
    } else if (op == DOREFA_WEIGHTS) {
        const float m = 2.0f * tanh(stat[0]);               // 2 max |tanh(x)|
        const float u = (m != 0.0f ? tanh(v) / m : 0.0f) + 0.5f;
        q = 2.0f * (rint(u * param) / param) - 1.0f;
    }
    out[i] = q;
}

// dx = dout * q'(x) (larq's custom gradients); dx may alias dout. NaN x gets 0.
__kernel void quantize_backward(__global float *dx, __global const float *dout, __global const float *x,
                                __global const float *stat, const int has_stat, const int op,
                                const float param, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const float v = x[i], d = dout[i];
    float g = 0.0f;
    if (op == STE_SIGN || op == STE_HEAVISIDE || op == STE_TERN) {
        g = fabs(v) <= param ? d : 0.0f;
    } else if (op == APPROX_SIGN) {
        g = fabs(v) <= 1.0f ? (1.0f - fabs(v)) * 2.0f * d : 0.0f;
    } else if (op == SWISH_SIGN) {
        const float bx = param * v;
        g = v == v ? d * param * (2.0f - bx * tanh(bx * 0.5f)) / (1.0f + cosh(bx)) : 0.0f;
    } else if (op == DOREFA_ACTIVATIONS) {
        g = v >= 0.0f && v <= 1.0f ? d : 0.0f;
    } else if (op == DOREFA_WEIGHTS) {
        const float m = 2.0f * tanh(stat[0]), t = tanh(v);
        g = v == v && m != 0.0f ? 2.0f * d / m * (1.0f - t * t) : 0.0f;
    }
    dx[i] = g;
}
