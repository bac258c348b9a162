/* larq's quantizers (quantize.h): one branch-free `omp simd` loop per quantizer, threaded above
 * MINIDL_PARALLEL_MIN elements, and a plain scalar twin of each for the tests. The selects are
 * written so that a NaN input fails every comparison: NaN forward (x is passed through), 0 grad. */
#include <math.h>

#include "quantize.h"
#include "internal/parallel.h"

enum { STE_SIGN, APPROX_SIGN, SWISH_SIGN, STE_HEAVISIDE, STE_TERN, DOREFA_ACTIVATIONS, DOREFA_WEIGHTS };

/* ste_tern's threshold: the given one, or 0.7 * mean |x| computed as TensorFlow does it. */
static float tern_threshold(const float *stat, float param, int64_t n)
{
    return stat ? 0.7f * stat[0] / (float)n : param;
}

/* dorefa weights: 2 M with M = max |tanh(x)| = tanh(max |x|) (tanh is monotonic) */
static float dorefa_range(const float *stat)
{
    return 2.0f * tanhf(stat[0]);
}

#define PARALLEL_SIMD _Pragma("omp parallel for simd schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())")

void minidl_quantize_forward(float *out, const float *x, const float *stat, int op, float param, int64_t n)
{
    switch (op) {
    case STE_SIGN: case APPROX_SIGN: case SWISH_SIGN:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) out[i] = x[i] >= 0.0f ? 1.0f : (x[i] < 0.0f ? -1.0f : x[i]);
        break;
    case STE_HEAVISIDE:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) out[i] = x[i] > 0.0f ? 1.0f : (x[i] <= 0.0f ? 0.0f : x[i]);
        break;
    case STE_TERN: {
        float t = tern_threshold(stat, param, n);
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float v = x[i];
            /* sign(sign(v + t) + sign(v - t)): the two signs agree outside [-t, t] and cancel inside */
            float s = (v + t > 0.0f ? 1.0f : (v + t < 0.0f ? -1.0f : 0.0f))
                      + (v - t > 0.0f ? 1.0f : (v - t < 0.0f ? -1.0f : 0.0f));
            out[i] = v == v ? (s > 0.0f ? 1.0f : (s < 0.0f ? -1.0f : 0.0f)) : v;
        }
        break;
    }
    case DOREFA_ACTIVATIONS:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float v = x[i];
            float c = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
            out[i] = rintf(c * param) / param;     /* rintf: half to even, as tf.round */
        }
        break;
    case DOREFA_WEIGHTS: {
        float m = dorefa_range(stat);
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float u = (m != 0.0f ? tanhf(x[i]) / m : 0.0f) + 0.5f;   /* divide_no_nan */
            out[i] = 2.0f * (rintf(u * param) / param) - 1.0f;
        }
        break;
    }
    }
}

void minidl_quantize_backward(float *dx, const float *dout, const float *x, const float *stat, int op,
                              float param, int64_t n)
{
    switch (op) {
    case STE_SIGN: case STE_HEAVISIDE: case STE_TERN:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) dx[i] = fabsf(x[i]) <= param ? dout[i] : 0.0f;
        break;
    case APPROX_SIGN:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float a = fabsf(x[i]);
            dx[i] = a <= 1.0f ? (1.0f - a) * 2.0f * dout[i] : 0.0f;
        }
        break;
    case SWISH_SIGN:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float bx = param * x[i];
            dx[i] = x[i] == x[i] ? dout[i] * param * (2.0f - bx * tanhf(bx * 0.5f)) / (1.0f + coshf(bx)) : 0.0f;
        }
        break;
    case DOREFA_ACTIVATIONS:
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) dx[i] = x[i] >= 0.0f && x[i] <= 1.0f ? dout[i] : 0.0f;
        break;
    case DOREFA_WEIGHTS: {
        /* d(2 q - 1) = 2 * identity (rounding) / 2M (the max is a constant: stop_gradient) * tanh' */
        float m = dorefa_range(stat);
        PARALLEL_SIMD
        for (int64_t i = 0; i < n; i++) {
            float t = tanhf(x[i]);
            dx[i] = x[i] == x[i] && m != 0.0f ? 2.0f * dout[i] / m * (1.0f - t * t) : 0.0f;
        }
        break;
    }
    }
}

/* ------------------------------------------------------------------ the plain twins */
static float sign_of(float v)
{
    if (v > 0.0f) return 1.0f;
    if (v < 0.0f) return -1.0f;
    return v == 0.0f ? 0.0f : v;
}

void minidl_quantize_forward_reference(float *out, const float *x, const float *stat, int op, float param,
                                       int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i], q = v;
        if (isnan(v)) {
            out[i] = v;
            continue;
        }
        if (op == STE_SIGN || op == APPROX_SIGN || op == SWISH_SIGN) {
            q = sign_of(sign_of(v) + 0.1f);                       /* larq.math.sign */
        } else if (op == STE_HEAVISIDE) {
            q = sign_of(v > 0.0f ? v : 0.0f);                     /* sign(relu(x)) */
        } else if (op == STE_TERN) {
            float t = stat ? 0.7f * stat[0] / (float)n : param;
            q = sign_of(sign_of(v + t) + sign_of(v - t));
        } else if (op == DOREFA_ACTIVATIONS) {
            q = rintf(fminf(fmaxf(v, 0.0f), 1.0f) * param) / param;
        } else if (op == DOREFA_WEIGHTS) {
            float m = 2.0f * tanhf(stat[0]);
            float u = (m != 0.0f ? tanhf(v) / m : 0.0f) + 0.5f;
            q = 2.0f * (rintf(u * param) / param) - 1.0f;
        }
        out[i] = q;
    }
}

void minidl_quantize_backward_reference(float *dx, const float *dout, const float *x, const float *stat,
                                        int op, float param, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = x[i], d = dout[i], g = 0.0f;
        if (isnan(v)) {
            dx[i] = 0.0f;
            continue;
        }
        if (op == STE_SIGN || op == STE_HEAVISIDE || op == STE_TERN) {
            if (fabsf(v) <= param) g = d;
        } else if (op == APPROX_SIGN) {
            if (fabsf(v) <= 1.0f) g = (1.0f - fabsf(v)) * 2.0f * d;
        } else if (op == SWISH_SIGN) {
            float bx = param * v;
            g = d * param * (2.0f - bx * tanhf(bx * 0.5f)) / (1.0f + coshf(bx));
        } else if (op == DOREFA_ACTIVATIONS) {
            if (v >= 0.0f && v <= 1.0f) g = d;
        } else if (op == DOREFA_WEIGHTS) {
            float m = 2.0f * tanhf(stat[0]), t = tanhf(v);
            g = m != 0.0f ? 2.0f * d / m * (1.0f - t * t) : 0.0f;
        }
        dx[i] = g;
    }
}
