/* 8-lane float vectors on AVX2 + FMA, with the same names as simd_avx512.h.
 *
 * Include after `#pragma GCC target("avx2,fma")` and <immintrin.h>.
 */
#ifndef MINIDL_SIMD_AVX2_H
#define MINIDL_SIMD_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#define VF_LANES 8

typedef __m256 vf;

static inline vf vf_set1(float a) { return _mm256_set1_ps(a); }
static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }

/* Lane i is all ones when i < n. */
static inline __m256i vf_lane_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* The first n (0 <= n < VF_LANES) lanes; the other lanes read as `fill` and are never touched in memory. */
static inline vf vf_load_part(const float *p, int n, float fill)
{
    __m256i m = vf_lane_mask(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline void vf_store_part(float *p, vf v, int n) { _mm256_maskstore_ps(p, vf_lane_mask(n), v); }

/* Lanes n and above set to 0. */
static inline vf vf_keep_first(vf v, int n) { return _mm256_and_ps(v, _mm256_castsi256_ps(vf_lane_mask(n))); }

static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
/* max / min return b when either operand is NaN (see vf_clamp in simd_math.h). */
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf vf_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }   /* a*b + c */
static inline vf vf_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); } /* c - a*b */
static inline vf vf_abs(vf a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline vf vf_round(vf a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* a > b ? x : y, lane by lane (false for NaN, as in C). */
static inline vf vf_select_gt(vf a, vf b, vf x, vf y)
{
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_GT_OQ));
}
/* a < b ? x : y */
static inline vf vf_select_lt(vf a, vf b, vf x, vf y)
{
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}
/* Lanes of `like` with the sign bit of `sign`. */
static inline vf vf_copysign(vf like, vf sign)
{
    const vf sign_bit = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(sign_bit, like), _mm256_and_ps(sign_bit, sign));
}
/* 1 if every lane is finite (not inf, not NaN). */
static inline int vf_all_finite(vf a)
{
    const __m256i exp_mask = _mm256_set1_epi32(0x7f800000);
    __m256i bad = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(a), exp_mask), exp_mask);
    return _mm256_testz_si256(bad, bad);
}
/* 2^n for integral n in [-126, 127] held as floats. */
static inline vf vf_pow2i(vf n)
{
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

/* ---- 32-bit integer lanes (dropout's Philox rounds, max-pool argmax) */
typedef __m256i vi;

static inline vi vi_set1(uint32_t a) { return _mm256_set1_epi32((int)a); }
static inline vi vi_lane_index(void) { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
static inline vi vi_load(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline void vi_store(int32_t *p, vi v) { _mm256_storeu_si256((__m256i *)p, v); }
static inline vi vi_load_part(const int32_t *p, int n) { return _mm256_maskload_epi32((const int *)p, vf_lane_mask(n)); }
static inline void vi_store_part(int32_t *p, vi v, int n) { _mm256_maskstore_epi32((int *)p, vf_lane_mask(n), v); }
static inline vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
static inline vi vi_xor(vi a, vi b) { return _mm256_xor_si256(a, b); }
static inline vi vi_shr8(vi a) { return _mm256_srli_epi32(a, 8); }
/* Low and high 32 bits of the unsigned 64-bit products a * b, lane by lane. */
static inline vi vi_mullo(vi a, vi b) { return _mm256_mullo_epi32(a, b); }
static inline vi vi_mulhi(vi a, vi b)
{
    vi even = _mm256_srli_epi64(_mm256_mul_epu32(a, b), 32);
    vi odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32));
    return _mm256_blend_epi32(even, odd, 0xAA);
}
/* a < b (signed) ? x : y */
static inline vf vf_select_ilt(vi a, vi b, vf x, vf y)
{
    return _mm256_blendv_ps(y, x, _mm256_castsi256_ps(_mm256_cmpgt_epi32(b, a)));
}
/* best = x and arg = index where x beats best as numpy's argmax ranks values: x is larger, or
 * x is NaN and best is not (ties and later NaNs keep the first winner). */
static inline void vf_argmax_update(vf *best, vi *arg, vf x, vi index)
{
    vf m = _mm256_and_ps(_mm256_cmp_ps(x, *best, _CMP_NLE_UQ), _mm256_cmp_ps(*best, *best, _CMP_ORD_Q));
    *best = _mm256_blendv_ps(*best, x, m);
    *arg = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(*arg), _mm256_castsi256_ps(index), m));
}

/* ---- lane masks, integer lanes and gathers (image_transform_rows_impl.h); a mask lane is all
 * ones or all zeros */
typedef __m256 vm;

static inline vm vm_first(int n) { return _mm256_castsi256_ps(vf_lane_mask(n)); }
static inline vm vm_and(vm a, vm b) { return _mm256_and_ps(a, b); }
static inline unsigned vm_bits(vm a) { return (unsigned)_mm256_movemask_ps(a); }
/* a >= b, a <= b (false for NaN) */
static inline vm vf_mask_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline vm vf_mask_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
/* lo <= a < hi (signed) */
static inline vm vi_mask_in(vi a, vi lo, vi hi)
{
    return _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_cmpgt_epi32(lo, a), _mm256_cmpgt_epi32(hi, a)));
}
static inline vf vf_floor(vf a) { return _mm256_floor_ps(a); }
static inline vi vi_trunc(vf a) { return _mm256_cvttps_epi32(a); }
static inline vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
static inline vi vi_min(vi a, vi b) { return _mm256_min_epi32(a, b); }
static inline vi vi_max(vi a, vi b) { return _mm256_max_epi32(a, b); }
/* a < b (signed) ? x : y */
static inline vi vi_select_lt(vi a, vi b, vi x, vi y)
{
    return _mm256_blendv_epi8(y, x, _mm256_cmpgt_epi32(b, a));
}
/* base[index] in the lanes of `mask`, `fill` in the others (their memory is not read) */
static inline vf vf_gather(const float *base, vi index, vm mask, vf fill)
{
    return _mm256_mask_i32gather_ps(fill, base, index, mask, 4);
}

static inline float vf_hsum(vf a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float vf_hmax(vf a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif
