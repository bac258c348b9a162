/* The xor-popcount micro-kernels of binary_conv.c, one file per ISA. Each computes, for `rows`
 * (<= BINARY_MR) patch rows a (rows, words) of sign bits and the packed kernel b (words, f),
 * the popcounts pc[r][j] = sum over words of popcount(a[r][w] ^ b[w][j]) and writes the dot
 * products they stand for, out[r * f + j] = (float)(k_total[r] - 2 pc[r][j]) (+ bias[j] when
 * bias is not NULL), for every j < f: converting in the kernel's registers saves a pass over
 * an int32 copy of the block. */
#ifndef MINIDL_BINARY_KERNELS_H
#define MINIDL_BINARY_KERNELS_H

#include <stdint.h>

#define BINARY_MR 4    /* patch rows per micro-kernel call */

void binary_popcount_generic(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                             const float *bias, int64_t rows, int64_t words, int64_t f);
void binary_popcount_avx2(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                          const float *bias, int64_t rows, int64_t words, int64_t f);
void binary_popcount_avx512(float *out, const uint32_t *a, const uint32_t *b, const int32_t *k_total,
                            const float *bias, int64_t rows, int64_t words, int64_t f);

/* bits (pixels, ceil(c / 32)) = the sign bits of x (pixels, c), as minidl_binary_pack_input. */
void binary_pack_generic(uint32_t *bits, const float *x, int64_t pixels, int64_t c);
void binary_pack_avx2(uint32_t *bits, const float *x, int64_t pixels, int64_t c);
void binary_pack_avx512(uint32_t *bits, const float *x, int64_t pixels, int64_t c);

#endif
