/* Picks the vector kernel table of the instruction set cpu_features.c selected. */
#include "cpu_features.h"
#include "internal/vector_kernels.h"

const struct vector_kernels *minidl_active_kernels(void)
{
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: return minidl_vector_kernels_avx512();
    case MINIDL_ISA_AVX2: return minidl_vector_kernels_avx2();
    default: return minidl_vector_kernels_generic();
    }
}
