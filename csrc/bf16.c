/* bfloat16 / float16 rounding of float32 tensors (csrc/bf16.h), portable C the compiler
 * vectorizes: integer arithmetic on the float's bits. */
#include <math.h>
#include <string.h>

#include "bf16.h"
#include "cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static inline uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Keep the top 32 - drop bits, rounding to nearest even (the caller handles NaN and overflow). */
static inline uint32_t round_bits(uint32_t u, int drop)
{
    uint32_t half = (1u << (drop - 1)) - 1, lsb = (u >> drop) & 1u;
    return (u + half + lsb) & ~((1u << drop) - 1);
}

#define PARALLEL_MIN 65536

void minidl_round_bfloat16(float *out, const float *x, int64_t count)
{
#pragma omp parallel for num_threads(count >= PARALLEL_MIN ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        uint32_t u = bits_of(x[i]);
        /* NaN: keep it a (quiet) NaN, whatever its payload's low bits */
        uint32_t r = (u & 0x7fffffffu) > 0x7f800000u ? (u | 0x00400000u) & 0xffff0000u : round_bits(u, 16);
        out[i] = float_of(r);
    }
}

void minidl_round_float16(float *out, const float *x, int64_t count)
{
#pragma omp parallel for num_threads(count >= PARALLEL_MIN ? minidl_num_threads() : 1) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        float v = x[i], a = fabsf(v);
        float r;
        if (!(a < 65520.0f))            /* NaN, inf, or rounds past float16's max (65504) */
            r = a != a ? v : copysignf(INFINITY, v);
        else if (a < 6.103515625e-05f)   /* float16 subnormals: multiples of 2^-24 */
            r = ((v * 16777216.0f + 12582912.0f) - 12582912.0f) / 16777216.0f;
        else
            r = float_of(round_bits(bits_of(v), 13));
        out[i] = r;
    }
}

int minidl_cpu_has_avx512_bf16(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax, ebx, ecx, edx;
    if (minidl_cpu_best_isa() < MINIDL_ISA_AVX512 || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
        return 0;
    return (eax >> 5) & 1;
#else
    return 0;
#endif
}
