/* The image ops' flat loops (internal/image_loops.h) compiled for AVX-512 (16 floats per vector). */
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw")
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#include "internal/image_loops_impl.h"

const struct image_loops *minidl_image_loops_avx512(void) { return &isa_image_loops; }
