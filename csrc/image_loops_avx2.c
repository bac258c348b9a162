/* The image ops' flat loops (internal/image_loops.h) compiled for AVX2 (8 floats per vector). */
#pragma GCC target("avx2")
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#include "internal/image_loops_impl.h"

const struct image_loops *minidl_image_loops_avx2(void) { return &isa_image_loops; }
