/* 2-D convolution (channels-last) on top of sgemm's micro-kernels: which algorithm each op
 * takes, and the public entry points of conv.h.
 *
 * Stride-1 convolutions (the common case) use the implicit algorithm (conv_implicit.c): no
 * im2col matrix, the micro-kernels read each padded image in place. Other convolutions, and
 * shapes where the implicit algorithm loses, use im2col (conv_im2col.c). Threads split the
 * batch by whole images when there are at least as many images as threads (so no two threads
 * add into the same dx image), each running single-threaded kernels; backward-filter sums
 * per-thread partial gradients at the end. The scratch layout is conv_scratch.c's. */

#include "conv.h"

#include "cpu_features.h"
#include "internal/conv_paths.h"
#include "internal/gemm_kernels.h"
#include "status.h"

/* The thresholds below come from timing the CIFAR-10 CNN's layers on the AVX-512 EPYC
 * (python -m minidl.bench --threads 1 --clock cpu). */
static int implicit_possible(const struct minidl_window *s, int threads)
{
    return conv_implicit_geometry_ok(s) && s->n >= threads;
}

/* The forward kernel reads the image's rows in place: worth it only where the micro-kernel
 * gathers rows fast (AVX2's was 30% slower than im2col and packing for 64 filters). */
static int implicit_forward(const struct minidl_window *s, int threads)
{
    return implicit_possible(s, threads) && sgemm_active_kernel()->fast_row_gather;
}

/* Backward-filter reads the image column-wise (like a packed panel), so every kernel runs it
 * well; runs (KW * C) shorter than 32 floats leave the micro-kernel idle, though. It sums one
 * image per GEMM, whose inner dimension is then that image's rows: on small images (7x7 and
 * 3x3 at 256 channels, area ratio 1.29 and 1.67) that re-reads dweight every few dozen rows,
 * and im2col's larger chunks ran 30% faster (python benchmarks at airbench94's shapes). */
static int implicit_backward_filter(const struct minidl_window *s, int threads)
{
    const double area_ratio = (double)s->h * (s->w + s->kw - 1) / ((double)s->oh * s->ow);
    // 1.25: the CIFAR CNN's 32x32 valid layer (ratio 1.21) stays implicit, 12% faster there
    return implicit_possible(s, threads) && s->kw * s->c >= 32 && area_ratio <= 1.25;
}

/* Backward-data as a forward conv computes C outputs per pixel in NR-wide tiles (C well
 * short of a multiple of NR wastes them), over the whole padded dout: for a "valid" conv
 * that is H * (W + KW - 1) outputs for OH * OW rows of dout, which costs more than col2im
 * once the ratio passes about 1.3. */
static int implicit_backward_data(const struct minidl_window *s, int threads)
{
    const int64_t nr = sgemm_active_kernel()->nr;
    const int64_t c_tiles = (s->c + nr - 1) / nr * nr;
    const double area_ratio = (double)s->h * (s->w + s->kw - 1) / ((double)s->oh * s->ow);
    return implicit_forward(s, threads) && 4 * c_tiles <= 5 * s->c &&
           area_ratio <= 1.3;
}

size_t minidl_conv2d_scratch_floats(const struct minidl_window *s)
{
    return conv_scratch_floats(s, minidl_num_threads());
}

int minidl_conv2d_forward(float *out, const float *x, const float *weight, const float *bias,
                          const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // out is (N, OH, OW, F), x is (N, H, W, C), weight is (K = KH*KW*C, F), bias is (F,)
    int threads = conv_usable_threads(s, scratch_floats);
    if (threads < 1)
        return MINIDL_SCRATCH_TOO_SMALL;
    if (implicit_forward(s, threads)) {
        conv_forward_implicit(out, x, weight, bias, s, scratch, threads);
        return MINIDL_OK;
    }
    return conv_forward_im2col(out, x, weight, bias, s, scratch, threads);
}

int minidl_conv2d_backward_data(float *dx, const float *dout, const float *weight,
                                const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // dx is (N, H, W, C), dout is (N, OH, OW, F), weight is (K = KH*KW*C, F)
    int threads = conv_usable_threads(s, scratch_floats);
    if (threads < 1)
        return MINIDL_SCRATCH_TOO_SMALL;
    if (implicit_backward_data(s, threads)) {
        conv_backward_data_implicit(dx, dout, weight, s, scratch, threads);
        return MINIDL_OK;
    }
    return conv_backward_data_im2col(dx, dout, weight, s, scratch, threads);
}

int minidl_conv2d_backward_filter(float *dweight, float *dbias, const float *dout, const float *x,
                                  const struct minidl_window *s, float *scratch, size_t scratch_floats)
{
    // dweight is (K = KH*KW*C, F), dbias is (F,), dout is (N, OH, OW, F), x is (N, H, W, C)
    int threads = conv_usable_threads(s, scratch_floats);
    if (threads < 1)
        return MINIDL_SCRATCH_TOO_SMALL;
    int team = 1;
    int status = implicit_backward_filter(s, threads)
                     ? conv_backward_filter_implicit(dweight, dbias, dout, x, s, scratch, threads, &team)
                     : conv_backward_filter_im2col(dweight, dbias, dout, x, s, scratch, threads, &team);
    if (status == MINIDL_OK) // every thread t > 0 left its partial sums (zeros when it had no work)
        conv_sum_partials(dweight, dbias, s, scratch, team);
    return status;
}
