/* Rounding float32 values to bfloat16 or float16 precision (kept in float32 storage): the
 * operands of mixed-precision compute (minidl.mixed_precision) on CPUs without native bf16 /
 * fp16 arithmetic. Round to nearest even; NaN stays NaN; float16 overflows to +-inf past 65504
 * (from 65520 up) and keeps its subnormals, as numpy's float32 -> float16 conversion. */
#ifndef MINIDL_BF16_H
#define MINIDL_BF16_H

#include <stdint.h>

/* out may be x (in place). */
void minidl_round_bfloat16(float *out, const float *x, int64_t count);
void minidl_round_float16(float *out, const float *x, int64_t count);

/* Whether the CPU has AVX512_BF16 (cpuid leaf 7 subleaf 1, eax bit 5): native vdpbf16ps. */
int minidl_cpu_has_avx512_bf16(void);

#endif
