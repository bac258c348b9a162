/* The depthwise row kernels for AVX2 + FMA (8 channels per vector). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "internal/simd_avx2.h"
#include "internal/depthwise_rows_impl.h"

const struct depthwise_rows *minidl_depthwise_rows_avx2(void) { return &isa_rows; }
