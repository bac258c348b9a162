/* The elementwise activations of struct vector_kernels, written once in the vf_* primitives
 * (included by vector_kernels_impl.h, which fixes the ISA).
 *
 * Each formula has the shape of minidl/backends/numpy_ops/activations.py's, so that NaN and
 * +-inf come out where numpy's do (inf * 0 = NaN in the same places); the exponentials that
 * decide a limit (silu, mish, exponential at +-inf) use vf_exp_ieee, which gives 0 and inf.
 * `kind` is a constant at every call site of activate_v / activate_grad_v, so their switches
 * fold away and each kind gets its own branch-free loop (relu's loop is what it always was).
 */
#ifndef MINIDL_VECTOR_ACTIVATIONS_H
#define MINIDL_VECTOR_ACTIVATIONS_H

#include "vector_kernels.h"

#define VA_INLINE static inline __attribute__((always_inline))

/* e^x with IEEE limits: 0 below -87.33 (vf_exp gives the smallest normal), inf above 88.72. */
VA_INLINE vf vf_exp_ieee(vf x)
{
    vf e = vf_select_lt(x, vf_set1(-87.33f), vf_zero(), vf_exp(x));
    return vf_select_gt(x, vf_set1(88.72f), vf_set1(INFINITY), e);
}

/* 1 / (1 + e^-x): 0 at -inf and 1 at +inf exactly. */
VA_INLINE vf vf_sigmoid_ieee(vf x) { return vf_div(vf_set1(1.0f), vf_add(vf_set1(1.0f), vf_exp_ieee(vf_sub(vf_zero(), x)))); }

/* log(1 + u) for u in [0, 1]: 2 atanh(z) with z = u / (2 + u) <= 1/3, whose odd series
 * truncated after z^17 is within 1e-10 relative (no exponent split needed). */
VA_INLINE vf vf_log1p_unit(vf u)
{
    vf z = vf_div(u, vf_add(vf_set1(2.0f), u));
    vf z2 = vf_mul(z, z);
    vf p = vf_set1(1.0f / 17.0f);
    p = vf_fmadd(p, z2, vf_set1(1.0f / 15.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 13.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 11.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 9.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 7.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 5.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f / 3.0f));
    p = vf_fmadd(p, z2, vf_set1(1.0f));
    return vf_mul(vf_add(z, z), p);
}

/* max(x, 0) + log1p(e^-|x|), as numpy's reference. */
VA_INLINE vf vf_softplus(vf x)
{
    return vf_add(vf_max(vf_zero(), x), vf_log1p_unit(vf_exp_ieee(vf_sub(vf_zero(), vf_abs(x)))));
}

/* erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, about float's ulp at 1). */
VA_INLINE vf vf_erf(vf x)
{
    vf ax = vf_abs(x);
    vf t = vf_div(vf_set1(1.0f), vf_fmadd(vf_set1(0.3275911f), ax, vf_set1(1.0f)));
    vf p = vf_set1(1.061405429f);
    p = vf_fmadd(p, t, vf_set1(-1.453152027f));
    p = vf_fmadd(p, t, vf_set1(1.421413741f));
    p = vf_fmadd(p, t, vf_set1(-0.284496736f));
    p = vf_fmadd(p, t, vf_set1(0.254829592f));
    vf e = vf_exp_ieee(vf_sub(vf_zero(), vf_mul(ax, ax)));
    return vf_copysign(vf_fnmadd(vf_mul(p, t), e, vf_set1(1.0f)), x);
}

/* tanh(softplus(x)) = n / (n + 2) with n = e^x (e^x + 2); 1 - 2 / (n + 2) for x >= 0, where n
 * may be inf and the quotient would not be (a select, so NaN stays NaN through both). */
VA_INLINE vf vf_tanh_softplus(vf x)
{
    vf e = vf_exp_ieee(x), two = vf_set1(2.0f);
    vf n = vf_mul(e, vf_add(e, two));
    vf d = vf_add(n, two);
    return vf_select_lt(x, vf_zero(), vf_div(n, d), vf_sub(vf_set1(1.0f), vf_div(two, d)));
}

VA_INLINE vf vf_clip(vf x, float lo, float hi) { return vf_min(vf_set1(hi), vf_max(vf_set1(lo), x)); }

/* 1 where lo < y < hi, else 0 (0 for NaN; the caller multiplies, so dout = inf gives NaN). */
VA_INLINE vf vf_inside(vf y, float lo, float hi)
{
    vf one = vf_set1(1.0f);
    return vf_select_gt(y, vf_set1(lo), vf_select_lt(y, vf_set1(hi), one, vf_zero()), vf_zero());
}

#define GELU_C 0.7978845608028654f     /* sqrt(2 / pi) */
#define GELU_K 0.044715f

/* 2u = 2 sqrt(2/pi) (x + 0.044715 x^3): gelu_approximate is x sigmoid(2u) = 0.5 x (1 + tanh u),
 * which keeps 1 + tanh u and 1 - tanh^2 u = 4 s (1 - s) free of cancellation. */
VA_INLINE vf vf_gelu_two_u(vf x)
{
    vf x3 = vf_mul(vf_mul(x, x), x);
    return vf_mul(vf_set1(2.0f * GELU_C), vf_fmadd(vf_set1(GELU_K), x3, x));
}

VA_INLINE vf activate_v(vf x, int kind, vf alpha)
{
    vf half = vf_set1(0.5f), one = vf_set1(1.0f);
    switch (kind) {
    case MINIDL_ACT_RELU: return vf_max(vf_zero(), x); /* max returns its 2nd operand for NaN */
    case MINIDL_ACT_LEAKY_RELU: return vf_select_gt(x, vf_zero(), x, vf_mul(alpha, x));
    case MINIDL_ACT_SIGMOID: return vf_sigmoid(x);
    case MINIDL_ACT_TANH: return vf_tanh(x);
    case MINIDL_ACT_GELU:
        return vf_mul(vf_mul(half, x), vf_add(one, vf_erf(vf_mul(x, vf_set1(0.70710678118654752f)))));
    case MINIDL_ACT_GELU_TANH: return vf_mul(x, vf_sigmoid_ieee(vf_gelu_two_u(x)));
    case MINIDL_ACT_SILU: return vf_mul(x, vf_sigmoid_ieee(x));
    case MINIDL_ACT_ELU:
        return vf_select_gt(x, vf_zero(), x, vf_mul(alpha, vf_sub(vf_exp_ieee(vf_min(vf_zero(), x)), one)));
    case MINIDL_ACT_SELU: {
        vf neg = vf_mul(vf_set1(MINIDL_SELU_ALPHA), vf_sub(vf_exp_ieee(vf_min(vf_zero(), x)), one));
        return vf_mul(vf_set1(MINIDL_SELU_SCALE), vf_select_gt(x, vf_zero(), x, neg));
    }
    case MINIDL_ACT_SOFTPLUS: return vf_softplus(x);
    case MINIDL_ACT_SOFTSIGN: return vf_div(x, vf_add(one, vf_abs(x)));
    case MINIDL_ACT_HARD_SIGMOID: return vf_clip(vf_fmadd(x, vf_set1(1.0f / 6.0f), half), 0.0f, 1.0f);
    case MINIDL_ACT_HARD_SILU: return vf_mul(x, vf_clip(vf_fmadd(x, vf_set1(1.0f / 6.0f), half), 0.0f, 1.0f));
    case MINIDL_ACT_MISH: return vf_mul(x, vf_tanh_softplus(x));
    case MINIDL_ACT_EXPONENTIAL: return vf_exp_ieee(x);
    case MINIDL_ACT_RELU6: return vf_clip(x, 0.0f, 6.0f);
    default: return x;
    }
}

/* dx = dout * f'(x) from the output y and (NEEDS_INPUT kinds) the input x. */
VA_INLINE vf activate_grad_v(vf dout, vf y, vf x, int kind, vf alpha)
{
    vf one = vf_set1(1.0f), half = vf_set1(0.5f);
    switch (kind) {
    case MINIDL_ACT_RELU: return vf_select_gt(y, vf_zero(), dout, vf_zero());
    case MINIDL_ACT_LEAKY_RELU: return vf_select_gt(y, vf_zero(), dout, vf_mul(alpha, dout));
    case MINIDL_ACT_SIGMOID: return vf_mul(vf_mul(dout, y), vf_sub(one, y));
    case MINIDL_ACT_TANH: return vf_mul(dout, vf_fnmadd(y, y, one));
    case MINIDL_ACT_GELU: {
        vf cdf = vf_mul(half, vf_add(one, vf_erf(vf_mul(x, vf_set1(0.70710678118654752f)))));
        vf pdf = vf_mul(vf_exp_ieee(vf_mul(vf_set1(-0.5f), vf_mul(x, x))), vf_set1(0.3989422804014327f));
        return vf_mul(dout, vf_fmadd(x, pdf, cdf));
    }
    case MINIDL_ACT_GELU_TANH: {
        vf two_u = vf_gelu_two_u(x);
        vf s = vf_sigmoid_ieee(two_u), sn = vf_sigmoid_ieee(vf_sub(vf_zero(), two_u));
        vf inner = vf_mul(vf_set1(2.0f * GELU_C), vf_fmadd(vf_set1(3.0f * GELU_K), vf_mul(x, x), one));
        return vf_mul(dout, vf_fmadd(vf_mul(vf_mul(x, s), sn), inner, s));
    }
    case MINIDL_ACT_SILU: {
        vf s = vf_sigmoid_ieee(x);
        return vf_mul(dout, vf_mul(s, vf_fmadd(x, vf_sub(one, s), one)));
    }
    case MINIDL_ACT_ELU: return vf_mul(dout, vf_select_gt(x, vf_zero(), one, vf_add(y, alpha)));
    case MINIDL_ACT_SELU:
        return vf_mul(dout, vf_select_gt(y, vf_zero(), vf_set1(MINIDL_SELU_SCALE),
                                         vf_add(y, vf_set1(MINIDL_SELU_SCALE * MINIDL_SELU_ALPHA))));
    case MINIDL_ACT_SOFTPLUS: return vf_mul(dout, vf_sigmoid_ieee(x));
    case MINIDL_ACT_SOFTSIGN: {
        vf m = vf_sub(one, vf_abs(y));
        return vf_mul(dout, vf_mul(m, m));
    }
    case MINIDL_ACT_HARD_SIGMOID: return vf_mul(dout, vf_mul(vf_inside(y, 0.0f, 1.0f), vf_set1(1.0f / 6.0f)));
    case MINIDL_ACT_HARD_SILU: {
        vf mid = vf_mul(vf_fmadd(vf_set1(2.0f), x, vf_set1(3.0f)), vf_set1(1.0f / 6.0f));
        vf g = vf_select_lt(x, vf_set1(-3.0f), vf_zero(), vf_select_gt(x, vf_set1(3.0f), one, mid));
        return vf_mul(dout, g);
    }
    case MINIDL_ACT_MISH: {
        vf t = vf_tanh_softplus(x);
        return vf_mul(dout, vf_fmadd(vf_mul(x, vf_fnmadd(t, t, one)), vf_sigmoid_ieee(x), t));
    }
    case MINIDL_ACT_EXPONENTIAL: return vf_mul(dout, y);
    case MINIDL_ACT_RELU6: return vf_mul(dout, vf_inside(y, 0.0f, 6.0f));
    default: return dout;
    }
}

VA_INLINE void activation_forward_loop(float *out, const float *x, int kind, vf alpha, int64_t n)
{
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) vf_store(out + i, activate_v(vf_load(x + i), kind, alpha));
    if (i < n) {
        int t = (int)(n - i);
        vf_store_part(out + i, activate_v(vf_load_part(x + i, t, 0.0f), kind, alpha), t);
    }
}

/* x is read only when the kind needs it (a constant condition here). */
VA_INLINE void activation_backward_loop(float *dx, const float *dout, const float *y, const float *x,
                                        int kind, vf alpha, int64_t n)
{
    int needs_x = MINIDL_ACT_NEEDS_INPUT(kind);
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vf vx = needs_x ? vf_load(x + i) : vf_zero();
        vf_store(dx + i, activate_grad_v(vf_load(dout + i), vf_load(y + i), vx, kind, alpha));
    }
    if (i < n) {
        int t = (int)(n - i);
        vf vx = needs_x ? vf_load_part(x + i, t, 0.0f) : vf_zero();
        vf g = activate_grad_v(vf_load_part(dout + i, t, 0.0f), vf_load_part(y + i, t, 0.0f), vx, kind, alpha);
        vf_store_part(dx + i, g, t);
    }
}

#define VA_FORWARD_CASE(K) case K: activation_forward_loop(out, x, K, va, n); break;
#define VA_BACKWARD_CASE(K) case K: activation_backward_loop(dx, dout, y, x, K, va, n); break;
#define VA_EVERY_KIND(CASE) \
    CASE(MINIDL_ACT_RELU) CASE(MINIDL_ACT_LEAKY_RELU) CASE(MINIDL_ACT_SIGMOID) CASE(MINIDL_ACT_TANH) \
    CASE(MINIDL_ACT_GELU) CASE(MINIDL_ACT_GELU_TANH) CASE(MINIDL_ACT_SILU) CASE(MINIDL_ACT_ELU) \
    CASE(MINIDL_ACT_SELU) CASE(MINIDL_ACT_SOFTPLUS) CASE(MINIDL_ACT_SOFTSIGN) CASE(MINIDL_ACT_HARD_SIGMOID) \
    CASE(MINIDL_ACT_HARD_SILU) CASE(MINIDL_ACT_MISH) CASE(MINIDL_ACT_EXPONENTIAL) CASE(MINIDL_ACT_RELU6)

static void activation_forward(float *out, const float *x, int kind, float alpha, int64_t n)
{
    vf va = vf_set1(alpha);
    switch (kind) {
    VA_EVERY_KIND(VA_FORWARD_CASE)
    default: activation_forward_loop(out, x, MINIDL_ACT_LINEAR, va, n); break;
    }
}

static void activation_backward(float *dx, const float *dout, const float *y, const float *x, int kind,
                                float alpha, int64_t n)
{
    vf va = vf_set1(alpha);
    switch (kind) {
    VA_EVERY_KIND(VA_BACKWARD_CASE)
    default: activation_backward_loop(dx, dout, y, x, MINIDL_ACT_LINEAR, va, n); break;
    }
}

#endif
