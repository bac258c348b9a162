/* Per-column reductions with fixed chunking; see internal/column_reduce.h. */
#include <string.h>

#include "internal/column_reduce.h"
#include "internal/parallel.h"
#include "internal/vector_kernels.h"

void minidl_column_reduce(float *out0, float *out1, enum column_reduction kind, const float *a,
                          const float *b, const float *mean, int64_t rows, int64_t c, double scale,
                          float *scratch)
{
    const struct vector_kernels *vk = minidl_active_kernels();
    int64_t chunks = rows < MINIDL_COLUMN_CHUNKS ? rows : MINIDL_COLUMN_CHUNKS;
    int64_t rows_per_chunk = chunks > 0 ? (rows + chunks - 1) / chunks : 0;
    float *part0 = scratch;                          /* part0 is (chunks, c) */
    float *part1 = scratch + MINIDL_COLUMN_CHUNKS * c; /* part1 is (chunks, c) */

#pragma omp parallel for schedule(static) if (rows * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t k = 0; k < chunks; k++) {
        int64_t r0 = k * rows_per_chunk;
        int64_t nr = rows - r0 < rows_per_chunk ? rows - r0 : rows_per_chunk;
        float *p0 = part0 + k * c, *p1 = part1 + k * c;
        memset(p0, 0, (size_t)c * sizeof(float));
        if (kind == COLUMN_SUM_AND_DOT_DEV) memset(p1, 0, (size_t)c * sizeof(float));
        if (nr <= 0) continue; /* the last chunks are empty when rows_per_chunk rounded up */
        switch (kind) {
        case COLUMN_SUM: vk->col_sum(p0, a + r0 * c, nr, c); break;
        case COLUMN_SQ_DEV: vk->col_sq_dev(p0, a + r0 * c, mean, nr, c); break;
        case COLUMN_SUM_AND_DOT_DEV:
            vk->col_sum(p0, a + r0 * c, nr, c);
            vk->col_dot_dev(p1, a + r0 * c, b + r0 * c, mean, nr, c);
            break;
        }
    }
    for (int64_t j = 0; j < c; j++) {
        double s0 = 0.0, s1 = 0.0;
        for (int64_t k = 0; k < chunks; k++) {
            s0 += part0[k * c + j];
            if (kind == COLUMN_SUM_AND_DOT_DEV) s1 += part1[k * c + j];
        }
        out0[j] = (float)(s0 * scale);
        if (kind == COLUMN_SUM_AND_DOT_DEV) out1[j] = (float)(s1 * scale);
    }
}
