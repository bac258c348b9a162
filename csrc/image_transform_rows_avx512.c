/* image_transform_forward's row kernel for AVX-512 (16 output floats per vector). The
 * scalar code's products and sums must stay separate roundings: no FMA contraction. */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>

#include "internal/simd_avx512.h"
#include "internal/image_transform_rows_impl.h"

transform_row_fn minidl_transform_row_avx512(void) { return transform_row_isa; }
