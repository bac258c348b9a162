/* Stride-1 convolution without im2col: the micro-kernels read the patches straight
 * from the (padded) image. See internal/conv_implicit.h for the layout. */

#include "internal/conv_implicit.h"

#include "internal/gemm_kernels.h"

static int min_int(int a, int b) { return a < b ? a : b; }

long implicit_conv_rows(const implicit_conv_geom *g)
{
    return (long)(g->oh - 1) * g->wp + g->ow;
}

size_t implicit_conv_packed_weight_floats(const implicit_conv_geom *g)
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

static conv_piece piece_at(const implicit_conv_geom *g, const sgemm_kernel_info *kern, int ky, int j0)
{
    const int run = g->kw * g->c;
    conv_piece p = {ky, j0, 0, ky * run + j0, (ptrdiff_t)ky * g->wp * g->c + j0};
    if (ky < g->kh)
        p.len = min_int(kern->kc, run - j0);
    return p; // len == 0: past the last piece
}

static conv_piece first_piece(const implicit_conv_geom *g, const sgemm_kernel_info *kern)
{
    return piece_at(g, kern, 0, 0);
}

static conv_piece next_piece(const implicit_conv_geom *g, const sgemm_kernel_info *kern, conv_piece p)
{
    if (p.j0 + p.len < g->kw * g->c)
        return piece_at(g, kern, p.ky, p.j0 + p.len);
    return piece_at(g, kern, p.ky + 1, 0);
}

void implicit_conv_pack_weight(float *packed, const float *weight, const implicit_conv_geom *g)
{
    // weight is (K, F); piece p's NR-wide panels start at packed + kk0 * F_padded
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const size_t f_pad = padded_f(kern, g->f);
    for (conv_piece p = first_piece(g, kern); p.len > 0; p = next_piece(g, kern, p))
        sgemm_pack_b_block(packed + p.kk0 * f_pad, weight + (size_t)p.kk0 * g->f, g->f, 1, p.len, g->f);
}

/* o (cols,) = t + bias (bias may be NULL), then max(0, .) when relu. restrict lets the
 * compiler vectorize: without it this loop ran scalar and cost 40% of a 3-channel conv. */
static void store_outputs(float *restrict o, const float *restrict t, const float *restrict bias,
                          int cols, int relu)
{
    if (bias)
        for (int j = 0; j < cols; j++)
            o[j] = t[j] + bias[j];
    else
        for (int j = 0; j < cols; j++)
            o[j] = t[j];
    if (relu)
        for (int j = 0; j < cols; j++)
            o[j] = o[j] > 0.0f ? o[j] : 0.0f;
}

void implicit_conv_forward_image(float *out, const float *xin, const float *packed_weight,
                                 const float *bias, int relu, const implicit_conv_geom *g)
{
    // out is (OH, OW, F), xin is (HP, WP, C)
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const int mr = kern->mr, nr = kern->nr, f = g->f, c = g->c;
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
            int oy = (int)((qs + i0) / g->wp), ox = (int)((qs + i0) % g->wp);
            for (int i = i0; i < mr; i++) {
                if (ox < g->ow) // outputs past the end of a row are dropped
                    store_outputs(out + ((size_t)oy * g->ow + ox) * f + jr, tile + i * nr,
                                  bias ? bias + jr : NULL, cols, relu);
                if (++ox == g->wp) {
                    ox = 0;
                    oy++;
                }
            }
        }
    }
}

void implicit_conv_backward_filter_image(float *dweight, const float *xin, const float *packed_dout,
                                         float beta, const implicit_conv_geom *g)
{
    // dweight is (K, F); piece rows kk0.. of it = patches^T (len, rows) @ dout (rows, F)
    const sgemm_kernel_info *kern = sgemm_active_kernel();
    const long rows = implicit_conv_rows(g);
    for (conv_piece p = first_piece(g, kern); p.len > 0; p = next_piece(g, kern, p))
        sgemm_prepacked_b_serial(dweight + (size_t)p.kk0 * g->f, g->f, xin + p.a_off, 1, g->c, packed_dout,
                                 p.len, g->f, (int)rows, beta);
}
