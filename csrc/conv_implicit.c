/* The implicit convolution: stride 1, no im2col matrix. The micro-kernels read the patches
 * straight from the (padded) image (see internal/conv_implicit.h for the layout), and
 * backward-data is the forward conv of the padded dout with the flipped, transposed kernel.
 * Threads take whole images. */

#include <string.h>

#include "internal/conv_implicit.h"
#include "internal/conv_paths.h"
#include "internal/gemm_kernels.h"
#include "status.h"

static int min_int(int a, int b) { return a < b ? a : b; }

long implicit_conv_rows(const struct minidl_window *g)
{
    return (long)(g->oh - 1) * g->w + g->ow;
}

size_t implicit_conv_packed_weight_floats(const struct minidl_window *g)
{
    return (size_t)g->kh * g->kw * g->c * (g->f + 32); // F rounded up to NR <= 32
}

static int padded_f(const sgemm_kernel_info *kern, int f)
{
    return (f + kern->nr - 1) / kern->nr * kern->nr;
}

/* One piece: floats [j0, j0 + len) of run ky; row kk0 = ky * KW * C + j0 of the (K, F)
 * weight matrix, found at a_off = ky * WP * C + j0 from a patch's start in xin. */
typedef struct {
    int ky, j0, len, kk0;
    ptrdiff_t a_off;
} conv_piece;

static conv_piece piece_at(const struct minidl_window *g, const sgemm_kernel_info *kern, int ky, int j0)
{
    const int run = (int)(g->kw * g->c);
    conv_piece p = {ky, j0, 0, ky * run + j0, (ptrdiff_t)ky * g->w * g->c + j0};
    if (ky < g->kh)
        p.len = min_int(kern->kc, run - j0);
    return p; // len == 0: past the last piece
}

static conv_piece first_piece(const struct minidl_window *g, const sgemm_kernel_info *kern)
{
    return piece_at(g, kern, 0, 0);
}

static conv_piece next_piece(const struct minidl_window *g, const sgemm_kernel_info *kern, conv_piece p)
{
    if (p.j0 + p.len < g->kw * g->c)
        return piece_at(g, kern, p.ky, p.j0 + p.len);
    return piece_at(g, kern, p.ky + 1, 0);
}

void implicit_conv_pack_weight(float *packed, const float *weight, const struct minidl_window *g)
{
    // weight is (K, F); piece p's NR-wide panels start at packed + kk0 * F_padded
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const size_t f_pad = padded_f(kern, (int)g->f);
    for (conv_piece p = first_piece(g, kern); p.len > 0; p = next_piece(g, kern, p))
        sgemm_pack_b_block(packed + p.kk0 * f_pad, weight + (size_t)p.kk0 * g->f, g->f, 1, p.len, g->f);
}

/* o (cols,) = t + bias (bias may be NULL). restrict lets the compiler vectorize: without it
 * this loop ran scalar and cost 40% of a 3-channel conv. */
static void store_outputs(float *restrict o, const float *restrict t, const float *restrict bias, int cols)
{
    if (bias)
        for (int j = 0; j < cols; j++)
            o[j] = t[j] + bias[j];
    else
        for (int j = 0; j < cols; j++)
            o[j] = t[j];
}

void implicit_conv_forward_image(float *out, const float *xin, const float *packed_weight,
                                 const float *bias, const struct minidl_window *g)
{
    // out is (OH, OW, F), xin is (HP, WP, C)
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const int mr = kern->mr, nr = kern->nr, f = (int)g->f, c = (int)g->c;
    const size_t f_pad = padded_f(kern, f);
    const long rows = implicit_conv_rows(g);
    float tile[32 * 32] __attribute__((aligned(64))); // one MR x NR block of outputs, MR, NR <= 32
    for (int jr = 0; jr < f; jr += nr) {
        const int cols = min_int(nr, f - jr);
        for (long q0 = 0; q0 < rows; q0 += mr) {
            // the last tile slides back to end at `rows`, so it never reads past the image
            const long qs = q0 + mr <= rows ? q0 : rows - mr;
            float beta = 0.0f;
            for (conv_piece p = first_piece(g, kern); p.len > 0; p = next_piece(g, kern, p)) {
                kern->ukernel(p.len, xin + qs * c + p.a_off, c, 1,
                              packed_weight + p.kk0 * f_pad + (size_t)jr * p.len, tile, nr, beta);
                beta = 1.0f;
            }
            const int i0 = (int)(q0 - qs);
            int oy = (int)((qs + i0) / g->w), ox = (int)((qs + i0) % g->w);
            for (int i = i0; i < mr; i++) {
                if (ox < g->ow) // outputs past the end of a row are dropped
                    store_outputs(out + ((size_t)oy * g->ow + ox) * f + jr, tile + i * nr,
                                  bias ? bias + jr : NULL, cols);
                if (++ox == g->w) {
                    ox = 0;
                    oy++;
                }
            }
        }
    }
}

int implicit_conv_backward_filter_image(float *dweight, const float *xin, const float *packed_dout,
                                        float beta, const struct minidl_window *g)
{
    // dweight is (K, F); piece rows kk0.. of it = patches^T (len, rows) @ dout (rows, F)
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const long rows = implicit_conv_rows(g);
    for (conv_piece p = first_piece(g, kern); p.len > 0; p = next_piece(g, kern, p)) {
        int status = sgemm_prepacked_b_serial(dweight + (size_t)p.kk0 * g->f, g->f, xin + p.a_off, 1, g->c,
                                              packed_dout, p.len, (int)g->f, (int)rows, beta);
        if (status != MINIDL_OK)
            return status;
    }
    return MINIDL_OK;
}

/* ------------------------------------------------------------------ whole batches */

/* The image of x the forward path reads: x itself when unpadded, else a padded copy in buf. */
static const float *padded_input(float *buf, const float *x_image, const struct minidl_window *s)
{
    struct minidl_window g = conv_forward_image(s);
    if (g.h == s->h && g.w == s->w)
        return x_image;
    conv_pad_image(buf, x_image, g.h, g.w, s->h, s->w, s->c, s->pad_top, s->pad_left);
    return buf;
}

/* Forward and backward-data hand out images one at a time (schedule dynamic), so a thread
 * that loses its core to another job does not hold the others up at the closing barrier;
 * each image's result is the same whichever thread computes it. */
void conv_forward_implicit(float *out, const float *x, const float *weight, const float *bias,
                           const struct minidl_window *s, float *scratch, int threads)
{
    const struct minidl_window g = conv_forward_image(s);
    float *packed_weight = conv_packed_weight(s, scratch);
    implicit_conv_pack_weight(packed_weight, weight, &g);
    const int64_t in_image = s->h * s->w * s->c, out_image = s->oh * s->ow * s->f;
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        float *xpad = conv_thread_work(s, scratch, t); // xpad is (HP, WP, C)
#pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < s->n; n++)
            implicit_conv_forward_image(out + n * out_image, padded_input(xpad, x + n * in_image, s),
                                        packed_weight, bias, &g);
    }
}

/* dx = the forward conv of dout, padded by (KH - 1 - pad_top, KW - 1 - pad_left), with
 * the kernel flipped in space and transposed in channels: w'[ky][kx][f][c] = w[KH-1-ky][KW-1-kx][c][f]. */
void conv_backward_data_implicit(float *dx, const float *dout, const float *weight,
                                 const struct minidl_window *s, float *scratch, int threads)
{
    const struct minidl_window g = conv_backward_data_image(s);
    const int64_t kh = s->kh, kw = s->kw, c = s->c, f = s->f;
    float *packed_weight = conv_packed_weight(s, scratch);
    float *flipped = conv_flipped_weight(s, scratch); // (KH, KW, F, C)
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            const float *src = weight + ((kh - 1 - ky) * kw + (kw - 1 - kx)) * c * f; // (C, F)
            float *dst = flipped + (ky * kw + kx) * f * c;                           // (F, C)
            for (int64_t ci = 0; ci < c; ci++)
                for (int64_t fi = 0; fi < f; fi++)
                    dst[fi * c + ci] = src[ci * f + fi];
        }
    implicit_conv_pack_weight(packed_weight, flipped, &g);
    const int64_t in_image = s->h * s->w * c, out_image = s->oh * s->ow * f;
#pragma omp parallel num_threads(threads)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        float *dpad = conv_thread_work(s, scratch, t); // dpad is (H + KH - 1, W + KW - 1, F)
#pragma omp for schedule(dynamic, 1)
        for (int64_t n = 0; n < s->n; n++) {
            conv_pad_image(dpad, dout + n * out_image, g.h, g.w, s->oh, s->ow, f, kh - 1 - s->pad_top,
                           kw - 1 - s->pad_left);
            implicit_conv_forward_image(dx + n * in_image, dpad, packed_weight, NULL, &g);
        }
    }
}

/* Each thread sums its images' gradients into dw/db (thread 0 straight into dweight/dbias). */
int conv_backward_filter_implicit(float *dweight, float *dbias, const float *dout, const float *x,
                                  const struct minidl_window *s, float *scratch, int threads, int *team)
{
    const struct minidl_window g = conv_forward_image(s);
    const int64_t f = s->f, rows = implicit_conv_rows(&g);
    const int64_t in_image = s->h * s->w * s->c, out_image = s->oh * s->ow * f;
    int status = MINIDL_OK;
    *team = 1;
#pragma omp parallel num_threads(threads) reduction(max : status)
    {
        int t, nt;
        conv_thread_index(&t, &nt);
        if (t == 0)
            *team = nt;
        float *xpad = conv_thread_work(s, scratch, t);                             // xpad is (HP, WP, C)
        float *pitch = xpad + conv_padded_x_floats(s);                             // pitch is (rows, F)
        float *packed = pitch + conv_pitch_dout_floats(s);                         // pitch packed as a GEMM's B
        float *dw = t == 0 ? dweight : conv_thread_partial_dweight(s, scratch, t); // dw is (K, F)
        float *db = t == 0 ? dbias : conv_thread_partial_dbias(s, scratch, t);     // db is (F,)
        int first = 1; // no image summed into dw yet
        int failed = MINIDL_OK; // this thread's status (status is the reduction's private copy)
        if (db)
            memset(db, 0, sizeof(float) * f);
        int64_t n0, n1; // a fixed share of the images, so the sums (and results) are reproducible
        conv_image_range(s, t, nt, &n0, &n1);
        for (int64_t n = n0; n < n1 && failed == MINIDL_OK; n++) {
            const float *d = dout + n * out_image; // d is (OH, OW, F)
            for (int64_t q = 0; q < rows; q++) {
                int64_t oy = q / g.w, ox = q % g.w;
                if (ox < s->ow)
                    memcpy(pitch + q * f, d + (oy * s->ow + ox) * f, sizeof(float) * f);
                else
                    memset(pitch + q * f, 0, sizeof(float) * f);
            }
            sgemm_pack_b(packed, pitch, f, 1, (int)rows, (int)f);
            failed = implicit_conv_backward_filter_image(dw, padded_input(xpad, x + n * in_image, s), packed,
                                                         first ? 0.0f : 1.0f, &g);
            first = 0;
            if (dbias)
                for (int64_t i = 0; i < s->oh * s->ow; i++)
                    conv_add_floats(db, d + i * f, f);
        }
        if (first) // this thread got no image: it contributes zeros
            memset(dw, 0, sizeof(float) * conv_patch_size(s) * f);
        status = failed;
    }
    return status;
}
