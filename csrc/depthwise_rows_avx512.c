/* The depthwise row kernels for AVX-512 (16 channels per vector). */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#include <immintrin.h>

#include "internal/simd_avx512.h"
#include "internal/depthwise_rows_impl.h"

const struct depthwise_rows *minidl_depthwise_rows_avx512(void) { return &isa_rows; }
