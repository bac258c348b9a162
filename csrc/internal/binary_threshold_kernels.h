/* The row kernels of binary_threshold.c, one file per ISA: pixels p0 .. p1 of z (pixels, c)
 * packed against lo / hi (c each) into bits (pixels, ceil(c / 32)), as
 * minidl_binary_pack_thresholds. */
#ifndef MINIDL_BINARY_THRESHOLD_KERNELS_H
#define MINIDL_BINARY_THRESHOLD_KERNELS_H

#include <stdint.h>

void binary_threshold_rows_generic(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                                   int64_t p1, int64_t c);
void binary_threshold_rows_avx2(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                                int64_t p1, int64_t c);
void binary_threshold_rows_avx512(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                                  int64_t p1, int64_t c);

#endif
