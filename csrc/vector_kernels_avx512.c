/* The vector kernel table for AVX-512 (16 floats per vector). */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#include <immintrin.h>

#include "internal/simd_avx512.h"
#define ISA_NAME "avx512"
#include "internal/vector_kernels_impl.h"

const struct vector_kernels *minidl_vector_kernels_avx512(void) { return &isa_kernels; }
