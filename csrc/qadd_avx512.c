/* minidl_add_u8's loop (internal/qadd_impl.h) compiled for AVX-512; csrc/qgemm.c calls it when
 * minidl_cpu_isa() is avx512. */
#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl")
#endif
#include "internal/qadd_impl.h"

void qadd_u8_avx512(uint8_t *out, const uint8_t *a, const uint8_t *b, int32_t a_zero_point,
                    int32_t b_zero_point, int64_t a_multiplier, int64_t b_multiplier, int32_t out_zero_point,
                    int32_t relu, int64_t begin, int64_t end)
{
    qadd_u8_range(out, a, b, a_zero_point, b_zero_point, a_multiplier, b_multiplier, out_zero_point, relu,
                  begin, end);
}
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
