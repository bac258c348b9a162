/* The depthwise row kernels in plain C (one channel per "vector"), for CPUs without AVX2. */
#include "internal/simd_scalar.h"
#include "internal/depthwise_rows_impl.h"

const struct depthwise_rows *minidl_depthwise_rows_generic(void) { return &isa_rows; }
