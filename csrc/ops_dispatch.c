/* Picks the kernel tables (vector kernels, image loops) of the instruction set cpu_features.c
 * selected. */
#include "cpu_features.h"
#include "internal/image_loops.h"
#include "internal/vector_kernels.h"

const struct vector_kernels *minidl_active_kernels(void)
{
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return minidl_vector_kernels_avx512();
    case MINIDL_ISA_AVX2: return minidl_vector_kernels_avx2();
    default: return minidl_vector_kernels_generic();
    }
}

const struct image_loops *minidl_image_loops(void)
{
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return minidl_image_loops_avx512();
    case MINIDL_ISA_AVX2: return minidl_image_loops_avx2();
    default: return minidl_image_loops_generic();
    }
}
