/* image_transform_forward's row kernel for AVX2 (8 output floats per vector). The scalar
 * code's products and sums must stay separate roundings: no FMA contraction. */
#pragma GCC target("avx2,fma")
#pragma GCC optimize("fp-contract=off")
#include <immintrin.h>

#include "internal/simd_avx2.h"
#include "internal/image_transform_rows_impl.h"

transform_row_fn minidl_transform_row_avx2(void) { return transform_row_isa; }
