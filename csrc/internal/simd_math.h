/* exp, sigmoid and tanh on float vectors, written in the vf_* primitives of simd_avx512.h / simd_avx2.h.
 *
 * Accuracy is a few ulp over the ranges activations and softmax use; the plain C kernels call
 * libm and are the reference the tests compare these with.
 *
 * NaN propagates as in libm (and numpy): x86's max / min return their second operand when
 * either is NaN, so every clamp below passes the value being clamped second (vf_clamp).
 */
#ifndef MINIDL_SIMD_MATH_H
#define MINIDL_SIMD_MATH_H

/* lo <= x <= hi lane by lane, NaN passing through. */
static inline vf vf_clamp(vf x, vf lo, vf hi) { return vf_min(hi, vf_max(lo, x)); }

/* e^x. Inputs are clamped to [-87.3, 88]: below, the result is the smallest normal float
 * instead of a denormal or 0; above, 1.65e38 instead of inf (vf_exp_ieee gives 0 and inf).
 * The clamp takes x as the second operand of min / max, which return it when it is NaN:
 * e^NaN is NaN, as in numpy. */
static inline vf vf_exp(vf x)
{
    x = vf_clamp(x, vf_set1(-87.33f), vf_set1(88.0f));
    /* x = n ln2 + r with |r| <= ln2 / 2; ln2 split in two so that n * ln2_hi is exact. */
    vf n = vf_round(vf_mul(x, vf_set1(1.44269504088896341f)));
    vf r = vf_fnmadd(n, vf_set1(0.693359375f), x);
    r = vf_fnmadd(n, vf_set1(-2.12194440e-4f), r);
    /* Taylor polynomial of e^r to degree 7: truncation error below 1e-8 for |r| <= 0.347. */
    vf p = vf_set1(1.0f / 5040.0f);
    p = vf_fmadd(p, r, vf_set1(1.0f / 720.0f));
    p = vf_fmadd(p, r, vf_set1(1.0f / 120.0f));
    p = vf_fmadd(p, r, vf_set1(1.0f / 24.0f));
    p = vf_fmadd(p, r, vf_set1(1.0f / 6.0f));
    p = vf_fmadd(p, r, vf_set1(0.5f));
    p = vf_fmadd(p, r, vf_set1(1.0f));
    p = vf_fmadd(p, r, vf_set1(1.0f));
    return vf_mul(p, vf_pow2i(n));
}

static inline vf vf_sigmoid(vf x)
{
    vf one = vf_set1(1.0f);
    return vf_div(one, vf_add(one, vf_exp(vf_sub(vf_zero(), x))));
}

/* tanh: an odd Taylor polynomial near 0 (where 1 - 2/(e^2x + 1) would cancel), the
 * exponential form elsewhere; |x| >= 9 gives +-1 exactly in float. */
static inline vf vf_tanh(vf x)
{
    vf ax = vf_min(vf_set1(9.0f), vf_abs(x)); /* NaN stays NaN: it selects `big`, which is NaN */
    vf one = vf_set1(1.0f);
    vf e = vf_exp(vf_add(ax, ax));
    vf big = vf_sub(one, vf_div(vf_set1(2.0f), vf_add(e, one)));
    /* x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - 1382x^11/155925 + 21844x^13/6081075 */
    vf x2 = vf_mul(ax, ax);
    vf p = vf_set1(21844.0f / 6081075.0f);
    p = vf_fmadd(p, x2, vf_set1(-1382.0f / 155925.0f));
    p = vf_fmadd(p, x2, vf_set1(62.0f / 2835.0f));
    p = vf_fmadd(p, x2, vf_set1(-17.0f / 315.0f));
    p = vf_fmadd(p, x2, vf_set1(2.0f / 15.0f));
    p = vf_fmadd(p, x2, vf_set1(-1.0f / 3.0f));
    vf small = vf_fmadd(vf_mul(p, x2), ax, ax);
    vf t = vf_select_lt(ax, vf_set1(0.4f), small, big);
    return vf_copysign(t, x);
}

#endif
