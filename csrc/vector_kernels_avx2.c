/* The vector kernel table for AVX2 + FMA (8 floats per vector). */
#pragma GCC target("avx2,fma")
#include <immintrin.h>

#include "internal/simd_avx2.h"
#define ISA_NAME "avx2"
#include "internal/vector_kernels_impl.h"

const struct vector_kernels *minidl_vector_kernels_avx2(void) { return &isa_kernels; }
