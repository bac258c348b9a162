/* The uint8 addition of csrc/qgemm.h (minidl_add_u8) as one inline loop, compiled twice: plain in
 * qgemm.c and with AVX-512 enabled in qadd_avx512.c, where GCC vectorizes the int64 products
 * (vpmullq), 8x faster than the scalar loop of a generic x86-64 build. The same C code, so the
 * same exact results. */
#ifndef MINIDL_QADD_IMPL_H
#define MINIDL_QADD_IMPL_H

#include <stdint.h>

#include "qgemm.h"

static inline __attribute__((always_inline)) void qadd_u8_range(uint8_t *out, const uint8_t *a, const uint8_t *b,
                                                                int32_t a_zero_point, int32_t b_zero_point,
                                                                int64_t a_multiplier, int64_t b_multiplier,
                                                                int32_t out_zero_point, int32_t relu,
                                                                int64_t begin, int64_t end)
{
    const int64_t half = (int64_t)1 << (MINIDL_QADD_SHIFT - 1);
    const int64_t lo = relu ? out_zero_point : 0;
    for (int64_t i = begin; i < end; i++) {
        int64_t acc = (int64_t)(a[i] - a_zero_point) * a_multiplier + (int64_t)(b[i] - b_zero_point) * b_multiplier;
        int64_t q = ((acc + half) >> MINIDL_QADD_SHIFT) + out_zero_point;
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
