/* The image ops' flat loops (internal/image_loops.h) compiled for any x86-64 (SSE2 vectors). */
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#include "internal/image_loops_impl.h"

const struct image_loops *minidl_image_loops_generic(void) { return &isa_image_loops; }
