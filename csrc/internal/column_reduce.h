/* Per-column sums over the rows of an (rows, c) matrix, shared by bias_grad and batchnorm.
 *
 * Rows are cut into at most MINIDL_COLUMN_CHUNKS chunks, a number fixed by `rows` alone, so
 * the result does not depend on the thread count. Each chunk accumulates float partial sums
 * in the caller's scratch with a vector kernel; the partials are then added in double.
 */
#ifndef MINIDL_COLUMN_REDUCE_H
#define MINIDL_COLUMN_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#define MINIDL_COLUMN_CHUNKS 32

enum column_reduction {
    COLUMN_SUM,             /* out0 = sum of a */
    COLUMN_SQ_DEV,          /* out0 = sum of (a - mean)^2 */
    COLUMN_SUM_AND_DOT_DEV, /* out0 = sum of a, out1 = sum of a * (b - mean) */
};

/* out0, out1 (c) = scale * the reduction over rows; a, b are (rows, c); out1 and b are used
 * by COLUMN_SUM_AND_DOT_DEV only; scratch holds 2 * MINIDL_COLUMN_CHUNKS * c floats. */
void minidl_column_reduce(float *out0, float *out1, enum column_reduction kind, const float *a,
                          const float *b, const float *mean, int64_t rows, int64_t c, double scale,
                          float *scratch);

#endif
