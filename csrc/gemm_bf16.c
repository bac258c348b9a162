/* The bf16 GEMM (gemm_bf16.h): BLIS-style loops around the AMX micro-kernel, the sources and
 * writers they read and write through (internal/gemm_bf16_core.h), and the fallback that runs
 * when AMX does not.
 *
 * Loops, outermost first: columns of C in NC blocks; K in KC blocks, B's block packed once into
 * 16-column VNNI panels (K pairs interleaved); rows of C in MC blocks, A's block packed once as
 * bf16 rows; then the 32 x 32 micro-kernel sweeps the packed block. Ragged M, N and K are
 * zero-padded to the tile sizes in the packed copies, and the writer keeps only the real part. */
#include <string.h>
#include <stdlib.h>

#include "amx.h"
#include "bf16.h"
#include "cpu_features.h"
#include "gemm.h"
#include "gemm_bf16.h"
#include "internal/checked_alloc.h"
#include "internal/gemm_bf16_core.h"
#include "status.h"

/* Block sizes: a packed A block (MC x KC bf16, 128 KiB) stays in L2, and one micro-panel of B
 * (KC x 32 bf16, 32 KiB) in L1 while the micro-kernel sweeps A. */
#define MC 128
#define KC 512
#define NC 512

static int64_t round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------------ sources */
static void matrix_row(const struct bf16_source *src, float *dst, int64_t r, int64_t c0, int64_t count)
{
    memcpy(dst, src->data + r * src->ld + c0, (size_t)count * sizeof(float));
}

static void matrix_t_row(const struct bf16_source *src, float *dst, int64_t r, int64_t c0, int64_t count)
{
    const float *col = src->data + c0 * src->ld + r;
    for (int64_t t = 0; t < count; t++)
        dst[t] = col[t * src->ld];
}

void bf16_source_matrix(struct bf16_source *src, const float *data, int64_t ld, int trans)
{
    memset(src, 0, sizeof *src);
    src->row = trans ? matrix_t_row : matrix_row;
    src->data = data;
    src->ld = ld;
}

/* Walks the runs of row r, columns [c0, c0 + count): EMIT(dst offset, inside, source, run), zeros
 * where not inside (the source address is then outside the image, never read). */
#define IM2COL_WALK(EMIT)                                                                         \
    const struct minidl_window *s = src->window;                                                  \
    const int64_t n = r / (s->oh * s->ow), oy = r / s->ow % s->oh, ox = r % s->ow;                \
    const int64_t row_floats = s->kw * s->c, end = c0 + count;                                    \
    const int64_t iy0 = oy * s->sh - s->pad_top, ix0 = ox * s->sw - s->pad_left;                   \
    const float *image = src->data + n * s->h * s->w * s->c;                                      \
    int64_t ky = c0 / row_floats, pos = c0 % row_floats; /* pos: (kx, c) in kernel row ky */      \
    for (int64_t col = c0; col < end;) {                                                          \
        const int64_t iy = iy0 + ky * s->dh, kx = pos / s->c, ch = pos % s->c;                    \
        const int64_t ix = ix0 + kx * s->dw;                                                      \
        const int inside = iy >= 0 && iy < s->h && ix >= 0 && ix < s->w;                          \
        int64_t run;                                                                              \
        if (iy < 0 || iy >= s->h)                                                                 \
            run = row_floats - pos; /* the whole kernel row is padding */                         \
        else if (s->dw == 1 && ix >= 0 && ix0 + s->kw <= s->w)                                    \
            run = row_floats - pos; /* the rest of the kernel row lies in the image */            \
        else                                                                                      \
            run = s->c - ch;                                                                      \
        if (run > end - col)                                                                      \
            run = end - col;                                                                      \
        EMIT(col - c0, inside, image + (iy * s->w + ix) * s->c + ch, run);                \
        col += run;                                                                               \
        pos += run;                                                                               \
        if (pos == row_floats) {                                                                  \
            pos = 0;                                                                              \
            ky++;                                                                                 \
        }                                                                                         \
    }

/* Row r of the im2col matrix of x (N, H, W, C): output pixel r = (n, oy, ox); its columns are
 * (ky, kx, c), read in place as runs (of C channels, or of a whole kernel row of KW * C floats
 * where the window's row lies inside the image with dilation 1) or zeros where the window
 * leaves the image. The indices advance run by run: a division per element cost more than the
 * tiles' whole multiply (the 3-channel first layer of a CNN ran 20x slower). */
static void im2col_row(const struct bf16_source *src, float *dst, int64_t r, int64_t c0, int64_t count)
{
#define COPY_RUN(offset, inside, from, run)                                           \
    do {                                                                              \
        if (inside)                                                                   \
            memcpy(dst + (offset), (from), (size_t)(run) * sizeof(float));            \
        else                                                                          \
            memset(dst + (offset), 0, (size_t)(run) * sizeof(float));                 \
    } while (0)
    IM2COL_WALK(COPY_RUN)
#undef COPY_RUN
}

/* The same, converted run by run into a packed bf16 row. */
static void im2col_pack_row(const struct bf16_source *src, uint16_t *dst, int64_t r, int64_t c0, int64_t count,
                            int64_t padded)
{
#define CONVERT_RUN(offset, inside, from, run)                                        \
    do {                                                                              \
        if (inside)                                                                   \
            bf16_convert_row(dst + (offset), (from), (run), (run));                   \
        else                                                                          \
            memset(dst + (offset), 0, (size_t)(run) * sizeof(uint16_t));              \
    } while (0)
    IM2COL_WALK(CONVERT_RUN)
#undef CONVERT_RUN
    memset(dst + count, 0, (size_t)(padded - count) * sizeof(uint16_t));
}

void bf16_source_im2col(struct bf16_source *src, const float *x, const struct minidl_window *s)
{
    memset(src, 0, sizeof *src);
    src->row = im2col_row;
    src->pack_row = im2col_pack_row;
    src->data = x;
    src->window = s;
}

/* ------------------------------------------------------------------ writers */
static void matrix_write(const struct bf16_writer *w, const float *block, int64_t i0, int64_t j0, int mb,
                         int nb, int first)
{
    bf16_store_block(w->c + i0 * w->ldc + j0, w->ldc, block, mb, nb, w->alpha, first ? w->beta : 1.0f,
                     first && w->bias ? w->bias + j0 : NULL);
}

static void matrix_t_write(const struct bf16_writer *w, const float *block, int64_t i0, int64_t j0, int mb,
                           int nb, int first)
{
    const float alpha = w->alpha, beta = first ? w->beta : 1.0f;
    for (int j = 0; j < nb; j++) {
        float *c = w->c + (j0 + j) * w->ldc + i0;
        const float bias = first && w->bias ? w->bias[j0 + j] : 0.0f;
        for (int i = 0; i < mb; i++)
            c[i] = alpha * block[i * BF16_NR + j] + (beta == 0.0f ? 0.0f : beta * c[i]) + bias;
    }
}

void bf16_writer_matrix(struct bf16_writer *w, float *c, int64_t ldc, float alpha, float beta,
                        const float *bias, int transposed)
{
    memset(w, 0, sizeof *w);
    w->write = transposed ? matrix_t_write : matrix_write;
    w->c = c;
    w->ldc = ldc;
    w->alpha = alpha;
    w->beta = beta;
    w->bias = bias;
}

/* ------------------------------------------------------------------ packing */
/* A's rows [i0, i0 + mc) and columns [p0, p0 + kc) as bf16 rows of kp, zero rows up to mcp.
 * row holds 16 * kc floats. */
static void pack_a(uint16_t *ap, const struct bf16_source *a, float *row, int64_t i0, int64_t mc,
                   int64_t mcp, int64_t p0, int64_t kc, int64_t kp)
{
    if (a->row == matrix_t_row) {
        /* A stored transposed: read 16 of its columns at a time along its rows (one cache line
         * per read) into 16 float rows, rather than gathering each row element by element */
        for (int64_t ib = 0; ib < mc; ib += 16) {
            const int64_t rows = mc - ib < 16 ? mc - ib : 16;
            for (int64_t p = 0; p < kc; p++) {
                const float *src = a->data + (p0 + p) * a->ld + i0 + ib;
                for (int64_t t = 0; t < rows; t++)
                    row[t * kc + p] = src[t];
            }
            for (int64_t t = 0; t < rows; t++)
                bf16_convert_row(ap + (ib + t) * kp, row + t * kc, kc, kp);
        }
    }
    for (int64_t i = 0; i < mc && a->row != matrix_t_row; i++) {
        const float *values = row;
        if (a->pack_row) {
            a->pack_row(a, ap + i * kp, i0 + i, p0, kc, kp);
            continue;
        }
        if (a->row == matrix_row)   // read in place
            values = a->data + (i0 + i) * a->ld + p0;
        else
            a->row(a, row, i0 + i, p0, kc);
        bf16_convert_row(ap + i * kp, values, kc, kp);
    }
    memset(ap + mc * kp, 0, (size_t)((mcp - mc) * kp) * sizeof(uint16_t));
}

/* B's rows [p0, p0 + kc) and columns [j0, j0 + nc) as ncp / 16 VNNI panels: panel q holds
 * columns q * 16 .. q * 16 + 16 as kp / 2 rows of 16 (row 2t, row 2t + 1) pairs. */
static void pack_b(uint16_t *bp, const struct bf16_source *b, float *rows, int64_t p0, int64_t kc, int64_t kp,
                   int64_t j0, int64_t nc, int64_t ncp)
{
    float *r0 = rows, *r1 = rows + round_up(nc, 16);
    for (int64_t p = 0; p < kp; p += 2) {
        if (p < kc)
            b->row(b, r0, p0 + p, j0, nc);
        else
            memset(r0, 0, (size_t)nc * sizeof(float));
        if (p + 1 < kc)
            b->row(b, r1, p0 + p + 1, j0, nc);
        else
            memset(r1, 0, (size_t)nc * sizeof(float));
        for (int64_t q = 0; q < ncp / 16; q++) {
            int64_t count = nc - q * 16;
            count = count < 0 ? 0 : count > 16 ? 16 : count;
            bf16_interleave_16(bp + q * kp * 16 + p * 16, r0 + q * 16, r1 + q * 16, (int)count);
        }
    }
}

/* ------------------------------------------------------------------ driver */
int bf16_gemm_native(void)
{
    return minidl_amx_active() && minidl_cpu_has_avx512_bf16();
}

int bf16_gemm_run(const struct bf16_writer *w, const struct bf16_source *a, const struct bf16_source *b,
                  int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t k0, int64_t k1)
{
    float block[BF16_MR * BF16_NR] __attribute__((aligned(64)));
    if (m1 <= m0 || n1 <= n0)
        return MINIDL_OK;
    if (k1 <= k0) {   // an empty sum: C = beta * C (+ bias)
        memset(block, 0, sizeof block);
        for (int64_t i = m0; i < m1; i += BF16_MR)
            for (int64_t j = n0; j < n1; j += BF16_NR)
                w->write(w, block, i, j, (int)min64(BF16_MR, m1 - i), (int)min64(BF16_NR, n1 - j), 1);
        return MINIDL_OK;
    }
    const int64_t mc_max = min64(MC, round_up(m1 - m0, BF16_MR));
    const int64_t kc_max = min64(KC, round_up(k1 - k0, BF16_KSTEP));
    const int64_t nc_max = min64(NC, round_up(n1 - n0, BF16_NR));
    uint16_t *ap = minidl_alloc((size_t)(mc_max * kc_max) * sizeof(uint16_t));
    uint16_t *bp = minidl_alloc((size_t)(kc_max * nc_max) * sizeof(uint16_t));
    // the packers' float rows: two of B's, or 16 of a transposed A's
    float *rows = minidl_alloc_floats((size_t)(16 * (kc_max > nc_max ? kc_max : nc_max) + 32));
    if (!ap || !bp || !rows) {
        free(ap);
        free(bp);
        free(rows);
        return MINIDL_OUT_OF_MEMORY;
    }
    bf16_amx_tile_config();   // this thread's tiles
    for (int64_t jc = n0; jc < n1; jc += NC) {
        const int64_t nc = min64(NC, n1 - jc), ncp = round_up(nc, BF16_NR);
        for (int64_t pc = k0; pc < k1; pc += KC) {
            const int64_t kc = min64(KC, k1 - pc), kp = round_up(kc, BF16_KSTEP);
            pack_b(bp, b, rows, pc, kc, kp, jc, nc, ncp);
            for (int64_t ic = m0; ic < m1; ic += MC) {
                const int64_t mc = min64(MC, m1 - ic), mcp = round_up(mc, BF16_MR);
                pack_a(ap, a, rows, ic, mc, mcp, pc, kc, kp);
                for (int64_t jr = 0; jr < nc; jr += BF16_NR) {
                    const uint16_t *b0 = bp + (jr / 16) * kp * 16, *b1 = b0 + kp * 16;
                    for (int64_t ir = 0; ir < mc; ir += BF16_MR) {
                        bf16_amx_kernel_32x32(block, ap + ir * kp, b0, b1, kp);
                        w->write(w, block, ic + ir, jc + jr, (int)min64(BF16_MR, mc - ir),
                                 (int)min64(BF16_NR, nc - jr), pc == k0);
                    }
                }
            }
        }
    }
    bf16_amx_tile_release();
    free(ap);
    free(bp);
    free(rows);
    return MINIDL_OK;
}

/* ------------------------------------------------------------------ public GEMM */
/* A float32 copy of the stored operand (rows x ld floats, the last row cols long), rounded. */
static float *rounded_copy(const float *t, int64_t rows, int64_t cols, int64_t ld)
{
    const int64_t count = rows > 0 ? (rows - 1) * ld + cols : 0;
    float *copy = minidl_alloc_floats((size_t)(count > 0 ? count : 1));
    if (copy && count > 0)
        minidl_round_bfloat16(copy, t, count);
    return copy;
}


static int rounded_gemm(int reference, float *c, const float *a, const float *b, float alpha, float beta,
                        int trans_a, int trans_b, int m, int n, int k, int lda, int ldb, int ldc)
{
    float *ra = trans_a ? rounded_copy(a, k, m, lda) : rounded_copy(a, m, k, lda);
    float *rb = trans_b ? rounded_copy(b, n, k, ldb) : rounded_copy(b, k, n, ldb);
    int status = MINIDL_OK;
    if (!ra || !rb)
        status = MINIDL_OUT_OF_MEMORY;
    else if (reference)
        minidl_sgemm_ref(c, ra, rb, alpha, beta, trans_a, trans_b, m, n, k, lda, ldb, ldc);
    else
        status = minidl_sgemm(c, ra, rb, alpha, beta, trans_a, trans_b, m, n, k, lda, ldb, ldc);
    free(ra);
    free(rb);
    return status;
}

int minidl_gemm_bf16(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                     int trans_b, int m, int n, int k, int lda, int ldb, int ldc)
{
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    if (!bf16_gemm_native())
        return rounded_gemm(0, c, a, b, alpha, beta, trans_a, trans_b, m, n, k, lda, ldb, ldc);
    struct bf16_source sa, sb;
    struct bf16_writer w;
    bf16_source_matrix(&sa, a, lda, trans_a);
    bf16_source_matrix(&sb, b, ldb, trans_b);
    bf16_writer_matrix(&w, c, ldc, alpha, beta, NULL, 0);
    // Threads take whole 32-row blocks of C, or 32-column blocks when C has too few rows.
    const int threads = minidl_num_threads();
    const int by_rows = m >= 32 * threads || m >= n;
    const int64_t extent = by_rows ? m : n, blocks = (extent + 31) / 32;
    const int parts = (int)(blocks < threads ? blocks : threads);
    const int64_t per_part = (blocks + parts - 1) / parts * 32;
    int status = MINIDL_OK;
#pragma omp parallel for num_threads(parts) schedule(static) reduction(| : status)
    for (int t = 0; t < parts; t++) {
        const int64_t lo = t * per_part, hi = min64(extent, lo + per_part);
        status |= by_rows ? bf16_gemm_run(&w, &sa, &sb, lo, hi, 0, n, 0, k)
                          : bf16_gemm_run(&w, &sa, &sb, 0, m, lo, hi, 0, k);
    }
    return status ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

int minidl_gemm_bf16_ref(float *c, const float *a, const float *b, float alpha, float beta, int trans_a,
                         int trans_b, int m, int n, int k, int lda, int ldb, int ldc)
{
    if (m <= 0 || n <= 0)
        return MINIDL_OK;
    return rounded_gemm(1, c, a, b, alpha, beta, trans_a, trans_b, m, n, k, lda, ldb, ldc);
}

const char *minidl_bf16_kernel_name(void)
{
    return bf16_gemm_native() ? "amx: bf16 tiles (TDPBF16PS), 32x32 micro-kernel"
                              : "rounded: operands rounded to bf16, float32 kernels";
}
