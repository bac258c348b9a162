/* Axis permutation of a dense tensor (Permute, softmax along an inner axis). */
#ifndef MINIDL_TRANSPOSE_H
#define MINIDL_TRANSPOSE_H

#include <stdint.h>

#define MINIDL_TRANSPOSE_MAX_RANK 8

/* out = x with its axes permuted: out axis i is x axis axes[i]; shape is x's (rank entries,
 * 1 <= rank <= MINIDL_TRANSPOSE_MAX_RANK, axes a permutation: the caller checks). out must not
 * alias x. */
void minidl_transpose(float *out, const float *x, const int64_t *shape, const int64_t *axes, int64_t rank);

#endif
