/* The activations added after the first four, in plain C on libm: the generic table's
 * reference twin of vector_activations.h, written like minidl/backends/numpy_ops/activations.py
 * (same formulas, so NaN and +-inf land where numpy's do). */
#ifndef MINIDL_ACTIVATION_SCALAR_H
#define MINIDL_ACTIVATION_SCALAR_H

#include <math.h>

#include "vector_kernels.h"

static inline float act_sigmoid_s(float x)
{
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

/* fmaxf drops a NaN operand, so NaN is passed on explicitly */
static inline float act_softplus_s(float x) { return x != x ? x : fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }

static inline float act_clip_s(float x, float lo, float hi) { return x != x ? x : fminf(fmaxf(x, lo), hi); }

/* 2u of gelu_approximate = x sigmoid(2u) (see vector_activations.h) */
static inline float act_gelu_two_u(float x) { return 2.0f * 0.7978845608028654f * (x + 0.044715f * x * x * x); }

/* f(x) for the kinds from MINIDL_ACT_GELU on (and linear for any other). */
static inline float activate_scalar(float x, int kind, float alpha)
{
    switch (kind) {
    case MINIDL_ACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case MINIDL_ACT_GELU_TANH: return x * act_sigmoid_s(act_gelu_two_u(x));
    case MINIDL_ACT_SILU: return x * act_sigmoid_s(x);
    case MINIDL_ACT_ELU: return x > 0.0f ? x : alpha * expm1f(x);
    case MINIDL_ACT_SELU: return MINIDL_SELU_SCALE * (x > 0.0f ? x : MINIDL_SELU_ALPHA * expm1f(x));
    case MINIDL_ACT_SOFTPLUS: return act_softplus_s(x);
    case MINIDL_ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
    case MINIDL_ACT_HARD_SIGMOID: return act_clip_s(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case MINIDL_ACT_HARD_SILU: return x * act_clip_s(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case MINIDL_ACT_MISH: return x * tanhf(act_softplus_s(x));
    case MINIDL_ACT_EXPONENTIAL: return expf(x);
    case MINIDL_ACT_RELU6: return act_clip_s(x, 0.0f, 6.0f);
    default: return x;
    }
}

/* f'(x) for the same kinds, from the input x (NEEDS_INPUT kinds) or the output y. */
static inline float activate_grad_scalar(float x, float y, int kind, float alpha)
{
    switch (kind) {
    case MINIDL_ACT_GELU:
        return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) + x * expf(-0.5f * x * x) * 0.3989422804014327f;
    case MINIDL_ACT_GELU_TANH: {
        float two_u = act_gelu_two_u(x), s = act_sigmoid_s(two_u), sn = act_sigmoid_s(-two_u);
        return s + 2.0f * x * s * sn * 0.7978845608028654f * (1.0f + 3.0f * 0.044715f * x * x);
    }
    case MINIDL_ACT_SILU: {
        float s = act_sigmoid_s(x);
        return s * (1.0f + x * (1.0f - s));
    }
    case MINIDL_ACT_ELU: return x > 0.0f ? 1.0f : y + alpha;
    case MINIDL_ACT_SELU: return y > 0.0f ? MINIDL_SELU_SCALE : y + MINIDL_SELU_SCALE * MINIDL_SELU_ALPHA;
    case MINIDL_ACT_SOFTPLUS: return act_sigmoid_s(x);
    case MINIDL_ACT_SOFTSIGN: return (1.0f - fabsf(y)) * (1.0f - fabsf(y));
    case MINIDL_ACT_HARD_SIGMOID: return y > 0.0f && y < 1.0f ? 1.0f / 6.0f : 0.0f;
    case MINIDL_ACT_HARD_SILU: return x < -3.0f ? 0.0f : x > 3.0f ? 1.0f : (2.0f * x + 3.0f) / 6.0f;
    case MINIDL_ACT_MISH: {
        float t = tanhf(act_softplus_s(x));
        return t + x * (1.0f - t * t) * act_sigmoid_s(x);
    }
    case MINIDL_ACT_EXPONENTIAL: return y;
    case MINIDL_ACT_RELU6: return y > 0.0f && y < 6.0f ? 1.0f : 0.0f;
    default: return 1.0f;
    }
}

#endif
