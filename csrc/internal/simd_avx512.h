/* 16-lane float vectors on AVX-512 (F, DQ): the primitives vector_kernels_impl.h is written in.
 *
 * Include after `#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")` and <immintrin.h>.
 * simd_avx2.h offers the same names for 8-lane AVX2 vectors, so the kernels are written once.
 */
#ifndef MINIDL_SIMD_AVX512_H
#define MINIDL_SIMD_AVX512_H

#include <immintrin.h>
#include <stdint.h>

#define VF_LANES 16

typedef __m512 vf;

static inline vf vf_set1(float a) { return _mm512_set1_ps(a); }
static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }

/* The first n (0 <= n < VF_LANES) lanes; the other lanes read as `fill` and are never touched in memory. */
static inline vf vf_load_part(const float *p, int n, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << n) - 1u), p);
}
static inline void vf_store_part(float *p, vf v, int n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}

/* Lanes n and above set to 0. */
static inline vf vf_keep_first(vf v, int n) { return _mm512_maskz_mov_ps((__mmask16)((1u << n) - 1u), v); }

static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
/* max / min return b when either operand is NaN (see vf_clamp in simd_math.h). */
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm512_sqrt_ps(a); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }   /* a*b + c */
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); } /* c - a*b */
static inline vf vf_abs(vf a) { return _mm512_abs_ps(a); }
static inline vf vf_round(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* a > b ? x : y, lane by lane (false for NaN, as in C). */
static inline vf vf_select_gt(vf a, vf b, vf x, vf y)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), y, x);
}
/* a < b ? x : y */
static inline vf vf_select_lt(vf a, vf b, vf x, vf y)
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
}
/* Lanes of `like` with the sign bit of `sign`. */
static inline vf vf_copysign(vf like, vf sign)
{
    const __m512i mask = _mm512_set1_epi32(0x7fffffff);
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(mask, _mm512_castps_si512(like),
                                                        _mm512_castps_si512(sign), 0xCA));
}
/* 1 if every lane is finite (not inf, not NaN). */
static inline int vf_all_finite(vf a)
{
    const __m512i exp_mask = _mm512_set1_epi32(0x7f800000);
    __mmask16 bad = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), exp_mask), exp_mask);
    return bad == 0;
}
/* 2^n for integral n in [-126, 127] held as floats. */
static inline vf vf_pow2i(vf n)
{
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}

/* ---- 32-bit integer lanes (dropout's Philox rounds, max-pool argmax) */
typedef __m512i vi;

static inline vi vi_set1(uint32_t a) { return _mm512_set1_epi32((int)a); }
static inline vi vi_lane_index(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
static inline vi vi_load(const int32_t *p) { return _mm512_loadu_si512(p); }
static inline void vi_store(int32_t *p, vi v) { _mm512_storeu_si512(p, v); }
static inline vi vi_load_part(const int32_t *p, int n)
{
    return _mm512_maskz_loadu_epi32((__mmask16)((1u << n) - 1u), p);
}
static inline void vi_store_part(int32_t *p, vi v, int n)
{
    _mm512_mask_storeu_epi32(p, (__mmask16)((1u << n) - 1u), v);
}
static inline vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
static inline vi vi_xor(vi a, vi b) { return _mm512_xor_si512(a, b); }
static inline vi vi_shr8(vi a) { return _mm512_srli_epi32(a, 8); }
/* Low and high 32 bits of the unsigned 64-bit products a * b, lane by lane. */
static inline vi vi_mullo(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
static inline vi vi_mulhi(vi a, vi b)
{
    vi even = _mm512_srli_epi64(_mm512_mul_epu32(a, b), 32);
    vi odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32));
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, odd);
}
/* a < b (signed) ? x : y */
static inline vf vf_select_ilt(vi a, vi b, vf x, vf y)
{
    return _mm512_mask_blend_ps(_mm512_cmplt_epi32_mask(a, b), y, x);
}
/* best = x and arg = index where x beats best as numpy's argmax ranks values: x is larger, or
 * x is NaN and best is not (ties and later NaNs keep the first winner). */
static inline void vf_argmax_update(vf *best, vi *arg, vf x, vi index)
{
    __mmask16 m = _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(*best, *best, _CMP_ORD_Q), x, *best, _CMP_NLE_UQ);
    *best = _mm512_mask_blend_ps(m, *best, x);
    *arg = _mm512_mask_blend_epi32(m, *arg, index);
}

/* ---- lane masks, integer lanes and gathers (image_transform_rows_impl.h) */
typedef __mmask16 vm;

static inline vm vm_first(int n) { return (vm)(n >= 16 ? 0xFFFFu : (1u << n) - 1u); }
static inline vm vm_and(vm a, vm b) { return (vm)(a & b); }
static inline unsigned vm_bits(vm a) { return (unsigned)a; }
/* a >= b, a <= b (false for NaN) */
static inline vm vf_mask_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
static inline vm vf_mask_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
/* lo <= a < hi (signed) */
static inline vm vi_mask_in(vi a, vi lo, vi hi)
{
    return (vm)(_mm512_cmpge_epi32_mask(a, lo) & _mm512_cmplt_epi32_mask(a, hi));
}
static inline vf vf_floor(vf a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline vi vi_trunc(vf a) { return _mm512_cvttps_epi32(a); }
static inline vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
static inline vi vi_min(vi a, vi b) { return _mm512_min_epi32(a, b); }
static inline vi vi_max(vi a, vi b) { return _mm512_max_epi32(a, b); }
/* a < b (signed) ? x : y */
static inline vi vi_select_lt(vi a, vi b, vi x, vi y)
{
    return _mm512_mask_blend_epi32(_mm512_cmplt_epi32_mask(a, b), y, x);
}
/* base[index] in the lanes of `mask`, `fill` in the others (their memory is not read) */
static inline vf vf_gather(const float *base, vi index, vm mask, vf fill)
{
    return _mm512_mask_i32gather_ps(fill, mask, index, base, 4);
}

static inline float vf_hsum(vf a) { return _mm512_reduce_add_ps(a); }
static inline float vf_hmax(vf a) { return _mm512_reduce_max_ps(a); }

#endif
