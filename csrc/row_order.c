/* Sorting and running sums along rows (row_order.h). */
#include "row_order.h"

#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "internal/checked_alloc.h"
#include "internal/parallel.h"
#include "status.h"

/* a sorts before b: ascending, every NaN after every number (as numpy.sort) */
static inline int before(float a, float b)
{
    return a < b || (b != b && a == a);
}

/* Stable bottom-up merge sort of the positions idx (n) by row[idx]; tmp holds n more. */
static void sort_positions(int32_t *idx, int32_t *tmp, const float *row, int64_t n)
{
    int32_t *src = idx, *dst = tmp;
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)   /* take the right run's only when strictly before */
                dst[k++] = before(row[src[j]], row[src[i]]) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int32_t *swap = src; src = dst; dst = swap;
    }
    if (src != idx)
        for (int64_t k = 0; k < n; k++) idx[k] = src[k];
}

int minidl_rows_argsort(int32_t *out, const float *x, int64_t rows, int64_t n)
{
    int status = MINIDL_OK;
    const int parallel = rows > 1 && rows * n >= MINIDL_PARALLEL_MIN;
    #pragma omp parallel if(parallel)
    {
        int32_t *tmp = (int32_t *)minidl_alloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
        if (tmp == NULL) {
            #pragma omp atomic write
            status = MINIDL_OUT_OF_MEMORY;
        }
        /* every thread meets the loop (a worksharing construct); one without scratch skips
         * its rows, and the status reports the failure */
        #pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            if (tmp == NULL) continue;
            int32_t *idx = out + r * n;
            for (int64_t k = 0; k < n; k++) idx[k] = (int32_t)k;
            sort_positions(idx, tmp, x + r * n, n);
        }
        free(tmp);
    }
    return status;
}

void minidl_rows_scan(float *out, const float *x, int64_t rows, int64_t n, int op)
{
    const int parallel = rows > 1 && rows * n >= MINIDL_PARALLEL_MIN;
    #pragma omp parallel for schedule(static) if(parallel)
    for (int64_t r = 0; r < rows; r++) {
        const float *in = x + r * n;
        float *o = out + r * n;
        double acc = op == 0 ? 0.0 : 1.0;
        for (int64_t k = 0; k < n; k++) {
            acc = op == 0 ? acc + (double)in[k] : acc * (double)in[k];
            o[k] = (float)acc;
        }
    }
}
