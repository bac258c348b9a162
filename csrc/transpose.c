/* Transpose as a gather: each thread takes whole rows of the output's last axis and reads them
 * from x with that axis's stride (contiguous when the last axis stays last). */
#include "transpose.h"
#include "internal/parallel.h"

void minidl_transpose(float *out, const float *x, const int64_t *shape, const int64_t *axes, int64_t rank)
{
    int64_t in_stride[MINIDL_TRANSPOSE_MAX_RANK] = {0}, out_shape[MINIDL_TRANSPOSE_MAX_RANK] = {0};
    int64_t src_stride[MINIDL_TRANSPOSE_MAX_RANK] = {0};
    in_stride[rank - 1] = 1;
    for (int64_t i = rank - 2; i >= 0; i--) in_stride[i] = in_stride[i + 1] * shape[i + 1];
    int64_t total = 1;
    for (int64_t i = 0; i < rank; i++) {
        out_shape[i] = shape[axes[i]];
        src_stride[i] = in_stride[axes[i]];
        total *= out_shape[i];
    }
    int64_t inner = out_shape[rank - 1], step = src_stride[rank - 1];
    if (total == 0) return;
    int64_t outer = total / inner;
#pragma omp parallel for schedule(static) if (total >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t o = 0; o < outer; o++) {
        int64_t rem = o, offset = 0;
        for (int64_t i = rank - 2; i >= 0; i--) {
            offset += (rem % out_shape[i]) * src_stride[i];
            rem /= out_shape[i];
        }
        const float *src = x + offset;
        float *dst = out + o * inner;
        for (int64_t j = 0; j < inner; j++) dst[j] = src[j * step];
    }
}
