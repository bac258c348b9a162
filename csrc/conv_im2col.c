/* The im2col convolution: any stride, padding, dilation and groups. The output pixels (n, oy, ox) are the
 * rows of a GEMM:
 *   forward          out (rows, F)    = cols (rows, K) @ weight (K, F),  K = KH * KW * C
 *   backward-data    dcols (rows, K)  = dout (rows, F) @ weight^T, then col2im adds dcols into dx
 *   backward-filter  dweight (K, F)  += cols^T (K, rows) @ dout (rows, F)
 * where cols is the im2col matrix, built in chunks small enough to stay in L2 between
 * im2col and the GEMM. A 1x1, stride-1, unpadded conv needs neither: x itself is cols.
 * Threads split the rows by whole images when there are enough (conv_thread_rows). */

#include <string.h>

#include "internal/conv_paths.h"
#include "internal/gemm_kernels.h"
#include "status.h"

/* Output row g's image *n and the input position (*iy0, *ix0) of its window's corner. */
static void patch_origin(const struct minidl_window *s, int64_t g, int64_t *n, int64_t *iy0, int64_t *ix0)
{
    const int64_t per_image = s->oh * s->ow;
    *n = g / per_image;
    *iy0 = g % per_image / s->ow * s->sh - s->pad_top;
    *ix0 = g % s->ow * s->sw - s->pad_left;
}

/* cols (rows, K) = the input patches of output rows [r0, r0 + rows) in channels [c0, c0 + CG)
 * (CG = C / groups: group c0 / CG), zero where padded. */
static void im2col(float *cols, const float *x, const struct minidl_window *s, int64_t r0, int64_t rows,
                   int64_t c0)
{
    const int64_t c = s->c, cg = conv_group_channels(s), kw = s->kw, k = conv_patch_size(s);
    const int adjacent = s->dw == 1 && cg == c; // a window row is one run of KW * C floats in x
    for (int64_t r = 0; r < rows; r++) {
        int64_t n, iy0, ix0;
        patch_origin(s, r0 + r, &n, &iy0, &ix0);
        float *dst = cols + r * k; // dst is (KH, KW, CG)
        for (int64_t ky = 0; ky < s->kh; ky++, dst += kw * cg) {
            int64_t iy = iy0 + ky * s->dh;
            if (iy < 0 || iy >= s->h) {
                memset(dst, 0, sizeof(float) * kw * cg);
                continue;
            }
            const float *src = x + (n * s->h + iy) * s->w * c + c0; // src is (W, C) from channel c0
            if (adjacent && ix0 >= 0 && ix0 + kw <= s->w) {
                memcpy(dst, src + ix0 * c, sizeof(float) * kw * c);
                continue;
            }
            for (int64_t kx = 0; kx < kw; kx++) {
                int64_t ix = ix0 + kx * s->dw;
                if (ix < 0 || ix >= s->w)
                    memset(dst + kx * cg, 0, sizeof(float) * cg);
                else
                    memcpy(dst + kx * cg, src + ix * c, sizeof(float) * cg);
            }
        }
    }
}

/* dx channels [c0, c0 + CG) += the patches in dcols (rows, K) of output rows [r0, r0 + rows)
 * (the adjoint of im2col). */
static void col2im(float *dx, const float *dcols, const struct minidl_window *s, int64_t r0, int64_t rows,
                   int64_t c0)
{
    const int64_t c = s->c, cg = conv_group_channels(s), kw = s->kw, k = conv_patch_size(s);
    const int adjacent = s->dw == 1 && cg == c;
    for (int64_t r = 0; r < rows; r++) {
        int64_t n, iy0, ix0;
        patch_origin(s, r0 + r, &n, &iy0, &ix0);
        const float *src = dcols + r * k; // src is (KH, KW, CG)
        for (int64_t ky = 0; ky < s->kh; ky++, src += kw * cg) {
            int64_t iy = iy0 + ky * s->dh;
            if (iy < 0 || iy >= s->h)
                continue;
            float *dst = dx + (n * s->h + iy) * s->w * c + c0; // dst is (W, C) from channel c0
            if (adjacent && ix0 >= 0 && ix0 + kw <= s->w) {
                conv_add_floats(dst + ix0 * c, src, kw * c);
                continue;
            }
            for (int64_t kx = 0; kx < kw; kx++) {
                int64_t ix = ix0 + kx * s->dw;
                if (ix >= 0 && ix < s->w)
                    conv_add_floats(dst + ix * c, src + kx * cg, cg);
            }
        }
    }
}

/* out rows (rows, F) += bias, done while the rows are still in cache. */
static void add_bias(float *restrict out, const float *restrict bias, int64_t rows, int64_t f)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < f; j++)
            out[r * f + j] += bias[j];
}

/* Group g of a grouped conv is the GEMM of its own im2col columns (channels g * CG ..) with
 * weight columns g * FG .. of the (K, F) weight matrix, into output columns g * FG ..: strided
 * pointers into the shared matrices, one packed B per group. */
int conv_forward_im2col(float *out, const float *x, const float *weight, const float *bias,
                        const struct minidl_window *s, float *scratch, int threads)
{
    const int k = (int)conv_patch_size(s), f = (int)s->f, pointwise = conv_is_pointwise(s);
    const int fg = (int)conv_group_filters(s);
    const int64_t chunk = conv_chunk_rows(s), groups = s->groups, cg = conv_group_channels(s);
    for (int64_t g = 0; g < groups; g++) // group g's weight (K, FG) as its GEMM's B
        sgemm_pack_b(conv_packed_group_weight(s, scratch, g), weight + g * fg, f, 1, k, fg);
    int status = MINIDL_OK;
#pragma omp parallel num_threads(threads) reduction(max : status)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        float *cols = conv_thread_work(s, scratch, t); // cols is (chunk, K)
        int64_t r0, r1;
        conv_thread_rows(s, t, nt, &r0, &r1);
        int failed = MINIDL_OK; // this thread's status (status is the reduction's private copy)
        for (int64_t r = r0; r < r1 && failed == MINIDL_OK; r += chunk) {
            int64_t rows = r1 - r < chunk ? r1 - r : chunk;
            for (int64_t g = 0; g < groups && failed == MINIDL_OK; g++) {
                const float *a = pointwise ? x + r * k : cols;
                if (!pointwise)
                    im2col(cols, x, s, r, rows, g * cg);
                failed = sgemm_prepacked_b_serial(out + r * f + g * fg, f, a, k, 1,
                                                  conv_packed_group_weight(s, scratch, g), (int)rows, fg, k, 0.0f);
            }
            if (bias)
                add_bias(out + r * f, bias, rows, f);
        }
        status = failed;
    }
    return status;
}

int conv_backward_data_im2col(float *dx, const float *dout, const float *weight,
                              const struct minidl_window *s, float *scratch, int threads)
{
    const int k = (int)conv_patch_size(s), f = (int)s->f, c = (int)s->c, fg = (int)conv_group_filters(s);
    const int64_t chunk = conv_chunk_rows(s), image = s->h * s->w * c, total = conv_total_rows(s);
    const int64_t groups = s->groups, cg = conv_group_channels(s);
    if (conv_is_pointwise(s)) // dx (rows, C) = dout (rows, F) @ weight^T: one GEMM, no overlap
        return sgemm_strided(dx, c, dout, f, 1, weight, 1, f, (int)total, c, f, 1.0f, 0.0f);
    if (s->n < threads) { // too few images to split: one chunk loop, threaded GEMMs
        float *dcols = conv_thread_work(s, scratch, 0); // dcols is (chunk, K)
        memset(dx, 0, sizeof(float) * image * s->n);
        for (int64_t r = 0; r < total; r += chunk) {
            int64_t rows = total - r < chunk ? total - r : chunk;
            for (int64_t g = 0; g < groups; g++) {
                int status = sgemm_strided(dcols, k, dout + r * f + g * fg, f, 1, weight + g * fg, 1, f,
                                           (int)rows, k, fg, 1.0f, 0.0f);
                if (status != MINIDL_OK)
                    return status;
                col2im(dx, dcols, s, r, rows, g * cg);
            }
        }
        return MINIDL_OK;
    }
    for (int64_t g = 0; g < groups; g++) // group g's weight^T (FG, K) as its GEMM's B
        sgemm_pack_b(conv_packed_group_weight(s, scratch, g), weight + g * fg, 1, f, fg, k);
    int status = MINIDL_OK;
#pragma omp parallel num_threads(threads) reduction(max : status)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        float *dcols = conv_thread_work(s, scratch, t); // dcols is (chunk, K)
        int64_t r0, r1, n0, n1;
        conv_thread_rows(s, t, nt, &r0, &r1);
        conv_image_range(s, t, nt, &n0, &n1); // the images this thread owns
        memset(dx + n0 * image, 0, sizeof(float) * image * (n1 - n0));
        int failed = MINIDL_OK;
        for (int64_t r = r0; r < r1 && failed == MINIDL_OK; r += chunk) {
            int64_t rows = r1 - r < chunk ? r1 - r : chunk;
            for (int64_t g = 0; g < groups && failed == MINIDL_OK; g++) {
                failed = sgemm_prepacked_b_serial(dcols, k, dout + r * f + g * fg, f, 1,
                                                  conv_packed_group_weight(s, scratch, g), (int)rows, k, fg, 0.0f);
                col2im(dx, dcols, s, r, rows, g * cg);
            }
        }
        status = failed;
    }
    return status;
}

int conv_backward_filter_im2col(float *dweight, float *dbias, const float *dout, const float *x,
                                const struct minidl_window *s, float *scratch, int threads, int *team)
{
    const int k = (int)conv_patch_size(s), f = (int)s->f, pointwise = conv_is_pointwise(s);
    const int fg = (int)conv_group_filters(s);
    const int64_t chunk = conv_chunk_rows(s), groups = s->groups, cg = conv_group_channels(s);
    int status = MINIDL_OK;
    *team = 1;
#pragma omp parallel num_threads(threads) reduction(max : status)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        if (t == 0)
            *team = nt;
        float *cols = conv_thread_work(s, scratch, t);                             // cols is (chunk, K)
        float *dw = t == 0 ? dweight : conv_thread_partial_dweight(s, scratch, t); // dw is (K, F)
        float *db = t == 0 ? dbias : conv_thread_partial_dbias(s, scratch, t);     // db is (F,)
        int64_t r0, r1;
        conv_thread_rows(s, t, nt, &r0, &r1);
        if (r1 <= r0) // no rows: contribute zeros
            memset(dw, 0, sizeof(float) * k * f);
        if (db)
            memset(db, 0, sizeof(float) * f);
        int failed = MINIDL_OK;
        for (int64_t r = r0; r < r1 && failed == MINIDL_OK; r += chunk) {
            int64_t rows = r1 - r < chunk ? r1 - r : chunk;
            for (int64_t g = 0; g < groups && failed == MINIDL_OK; g++) {
                const float *a = pointwise ? x + r * k : cols;
                if (!pointwise)
                    im2col(cols, x, s, r, rows, g * cg);
                // dw columns of group g (K, FG) (+)= a^T (K, rows) @ its dout columns (rows, FG)
                failed = sgemm_strided_serial(dw + g * fg, f, a, 1, k, dout + r * f + g * fg, f, 1, k, fg,
                                              (int)rows, 1.0f, r == r0 ? 0.0f : 1.0f);
            }
            if (db)
                for (int64_t i = 0; i < rows; i++)
                    conv_add_floats(db, dout + (r + i) * f, f);
        }
        status = failed;
    }
    return status;
}
