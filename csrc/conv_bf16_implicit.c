/* The bf16 forward convolution at stride 1 without im2col (conv_bf16.c uses it when
 * bf16_conv_implicit_ok): x is converted once to a zero-padded bf16 copy whose channels are
 * padded to a multiple of 32, and the AMX A tiles are loaded straight from it. At stride 1 the
 * window row ky of output pixel (oy, ox) is the contiguous KW * Cp values at padded row
 * oy + ky * DH, column ox, and the next pixel's starts Cp values later: a tile's row stride.
 * im2col expanded every input value KH * KW times and converted each copy; this converts each
 * once. */
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "internal/checked_alloc.h"
#include "internal/gemm_bf16_core.h"
#include "status.h"

static int64_t round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Stride 1, dilation 1 along rows (so a window row is contiguous), one group, and channels
 * that lose at most half the tile to the padding to a multiple of 32. */
int bf16_conv_implicit_ok(const struct minidl_window *s)
{
    return s->sh == 1 && s->sw == 1 && s->dw == 1 && s->groups == 1 && s->c >= 16 && s->kh <= 64 &&
           s->pad_top >= 0 && s->pad_left >= 0;   // the copy puts the image at (pad_top, pad_left)
}

int bf16_conv_forward_implicit(float *out, const float *x, const float *weight, const float *bias,
                               const struct minidl_window *s)
{
    // out is (N, OH, OW, F), x is (N, H, W, C), weight is (KH, KW, C, F), bias is (F,) or NULL
    const int64_t cp = round_up(s->c, 32), fp = round_up(s->f, BF16_NR);
    const int64_t row_len = s->kw * cp, kp = s->kh * row_len;
    // the padded image: every position a window reads, the tiles' last pixels (past OW) too
    const int64_t hp = max64(s->pad_top + s->h, s->oh + (s->kh - 1) * s->dh);
    const int64_t wp = max64(s->pad_left + s->w, round_up(s->ow, BF16_MR) + s->kw - 1);
    const int64_t image = hp * wp * cp;
    uint16_t *padded = minidl_alloc((size_t)(s->n * image + BF16_MR * cp) * sizeof(uint16_t));
    uint16_t *bp = minidl_alloc((size_t)(kp * fp) * sizeof(uint16_t));
    float *rows = minidl_alloc_floats((size_t)(2 * fp));
    if (!padded || !bp || !rows) {
        free(padded);
        free(bp);
        free(rows);
        return MINIDL_OUT_OF_MEMORY;
    }
    const int threads = minidl_num_threads();
    memset(padded + s->n * image, 0, (size_t)(BF16_MR * cp) * sizeof(uint16_t));   // the slack
    // each padded row: zeros around the image's row (only the border is zeroed: zeroing the whole
    // copy first cost 5% of a keras_cnn step)
    const int64_t right = wp - s->pad_left - s->w;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t nyp = 0; nyp < s->n * hp; nyp++) {
        const int64_t n = nyp / hp, y = nyp % hp - s->pad_top;
        uint16_t *dst = padded + nyp * wp * cp;
        if (y < 0 || y >= s->h) {
            memset(dst, 0, (size_t)(wp * cp) * sizeof(uint16_t));
            continue;
        }
        const float *src = x + (n * s->h + y) * s->w * s->c;
        memset(dst, 0, (size_t)(s->pad_left * cp) * sizeof(uint16_t));
        dst += s->pad_left * cp;
        if (cp == s->c)
            bf16_convert_row(dst, src, s->w * s->c, s->w * s->c);
        else
            for (int64_t xx = 0; xx < s->w; xx++)
                bf16_convert_row(dst + xx * cp, src + xx * s->c, s->c, cp);
        memset(dst + s->w * cp, 0, (size_t)(right * cp) * sizeof(uint16_t));
    }
    // weight as K' = (ky, kx, c < Cp) rows (zeros for the padded channels) in 16-filter panels
    for (int64_t k = 0; k < kp; k += 2) {
        for (int t = 0; t < 2; t++) {
            const int64_t kk = k + t, c = kk % cp, window = kk / cp;   // window = ky * KW + kx
            float *r = rows + t * fp;
            if (c < s->c)
                memcpy(r, weight + (window * s->c + c) * s->f, (size_t)s->f * sizeof(float));
            else
                memset(r, 0, (size_t)s->f * sizeof(float));
        }
        for (int64_t q = 0; q < fp / 16; q++) {
            int64_t count = s->f - q * 16;
            count = count < 0 ? 0 : count > 16 ? 16 : count;
            bf16_interleave_16(bp + q * kp * 16 + k * 16, rows + q * 16, rows + fp + q * 16, (int)count);
        }
    }
    int64_t offsets[64];   // window row ky starts ky * DH padded rows below the pixel
    const int64_t window_rows = s->kh;
    for (int64_t ky = 0; ky < window_rows; ky++)
        offsets[ky] = ky * s->dh * wp * cp;
#pragma omp parallel num_threads(threads)
    {
    bf16_amx_tile_config();   // once per thread: loading it per row cost 2% of a keras_cnn step
#pragma omp for schedule(static)
    for (int64_t noy = 0; noy < s->n * s->oh; noy++) {
        float block[BF16_MR * BF16_NR] __attribute__((aligned(64)));
        const int64_t n = noy / s->oh, oy = noy % s->oh;
        const uint16_t *first = padded + n * image + oy * wp * cp;   // pixel (oy, 0)'s window
        for (int64_t ox = 0; ox < s->ow; ox += BF16_MR) {
            const uint16_t *a0 = first + ox * cp, *a1 = a0 + 16 * cp;
            const int mb = (int)(s->ow - ox < BF16_MR ? s->ow - ox : BF16_MR);
            for (int64_t j = 0; j < s->f; j += BF16_NR) {
                const uint16_t *b0 = bp + (j / 16) * kp * 16, *b1 = b0 + kp * 16;
                bf16_amx_kernel_window_32x32(block, a0, a1, cp, offsets, window_rows, row_len, b0, b1);
                const int nb = (int)(s->f - j < BF16_NR ? s->f - j : BF16_NR);
                bf16_store_block(out + (noy * s->ow + ox) * s->f + j, s->f, block, mb, nb, 1.0f, 0.0f,
                                 bias ? bias + j : NULL);
            }
        }
    }
    bf16_amx_tile_release();
    }
    free(padded);
    free(bp);
    free(rows);
    return MINIDL_OK;
}

/* ------------------------------------------------------------------ kernel gradient */
/* dweight[(ky, kx, c), f] = sum over output pixels of x[window pixel, c] * dout[pixel, f]: with
 * x copied as zero-padded channel planes, an A tile is 16 channels x 32 consecutive output
 * pixels (row-major over the padded width, the pixels past OW weighted by zeros) read in place.
 * Stride 1 keeps those pixels contiguous; any dilation works. Channels short of a multiple of
 * 32 (a first layer's 3) waste tile rows, cheaply: their sums are few next to the copies. */
int bf16_conv_filter_implicit_ok(const struct minidl_window *s)
{
    return s->sh == 1 && s->sw == 1 && s->groups == 1 && s->pad_top >= 0 && s->pad_left >= 0;
}

int bf16_conv_backward_filter_implicit(float *dweight, const float *dout, const float *x,
                                       const struct minidl_window *s)
{
    // dweight is (KH, KW, C, F), dout is (N, OH, OW, F), x is (N, H, W, C)
    struct bf16_filter_geometry g;
    g.n = s->n;
    g.hp = max64(s->pad_top + s->h, s->oh + (s->kh - 1) * s->dh);
    g.wp = max64(s->pad_left + s->w, s->ow + (s->kw - 1) * s->dw);
    g.qp = round_up(s->oh * g.wp, 32);
    g.c = s->c;
    g.fp = round_up(s->f, 32);
    g.dh = s->dh;
    g.dw = s->dw;
    // slack past the last plane: the last tiles read up to 32 planes (a ragged channel block's
    // unused rows) and QP + the window's extent beyond it
    const int64_t image_t_count = (s->n * s->c + 32) * g.hp * g.wp + g.qp + 64;
    const int64_t pairs_count = s->n * g.qp * g.fp;
    uint16_t *image_t = minidl_alloc((size_t)image_t_count * sizeof(uint16_t));
    uint16_t *pairs = minidl_alloc((size_t)pairs_count * sizeof(uint16_t));
    float *zeros = minidl_alloc_floats((size_t)g.fp);
    if (!image_t || !pairs || !zeros) {
        free(image_t);
        free(pairs);
        free(zeros);
        return MINIDL_OUT_OF_MEMORY;
    }
    memset(zeros, 0, (size_t)g.fp * sizeof(float));
    const int threads = minidl_num_threads();
    // zeros: the slack, and each plane's border (the image's rows are written below)
    const int64_t plane = g.hp * g.wp, right = g.wp - s->pad_left - s->w;
    memset(image_t + s->n * s->c * plane, 0, (size_t)(image_t_count - s->n * s->c * plane) * sizeof(uint16_t));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < s->n * s->c; p++) {
        uint16_t *t = image_t + p * plane;
        memset(t, 0, (size_t)(s->pad_top * g.wp) * sizeof(uint16_t));
        memset(t + (s->pad_top + s->h) * g.wp, 0, (size_t)((g.hp - s->pad_top - s->h) * g.wp) * sizeof(uint16_t));
        for (int64_t y = s->pad_top; y < s->pad_top + s->h; y++) {
            memset(t + y * g.wp, 0, (size_t)s->pad_left * sizeof(uint16_t));
            memset(t + y * g.wp + s->pad_left + s->w, 0, (size_t)right * sizeof(uint16_t));
        }
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t ny = 0; ny < s->n * s->h; ny++) {   // image row y of image n: its W x C, transposed
        const int64_t n = ny / s->h, y = ny % s->h;
        bf16_convert_columns(image_t + n * s->c * g.hp * g.wp + (s->pad_top + y) * g.wp + s->pad_left,
                             g.hp * g.wp, x + ny * s->w * s->c, s->c, s->w, s->c);
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t n = 0; n < s->n; n++) {
        for (int64_t q = 0; q < g.qp; q += 2) {
            const float *r[2];
            for (int t = 0; t < 2; t++) {
                const int64_t oy = (q + t) / g.wp, ox = (q + t) % g.wp;
                r[t] = oy < s->oh && ox < s->ow ? dout + ((n * s->oh + oy) * s->ow + ox) * s->f : zeros;
            }
            uint16_t *dst = pairs + (n * (g.qp / 2) + q / 2) * g.fp * 2;
            for (int64_t f = 0; f < g.fp / 16; f++) {
                int64_t count = s->f - f * 16;
                count = count < 0 ? 0 : count > 16 ? 16 : count;
                bf16_interleave_16(dst + f * 32, r[0] + f * 16, r[1] + f * 16, (int)count);
            }
        }
    }
    // Images in chunks whose copies fit in L2 (about 1 MiB): every (ky, kx, channel, filter)
    // block sweeps a chunk from cache, then adds its sums into its thread's partial dweight.
    const int64_t c_blocks = (s->c + 31) / 32, f_blocks = g.fp / 32;
    const int64_t blocks = s->kh * s->kw * c_blocks * f_blocks, k = s->kh * s->kw * s->c;
    const int64_t image_bytes = (s->c * g.hp * g.wp + g.qp * g.fp) * 2;
    const int64_t chunk = max64(1, (1 << 20) / image_bytes), chunks = (s->n + chunk - 1) / chunk;
    const int parts = (int)(chunks < threads ? chunks : threads);
    float *partial = parts > 1 ? minidl_alloc_floats((size_t)((parts - 1) * k * s->f)) : NULL;
    if (parts > 1 && !partial) {
        free(image_t);
        free(pairs);
        free(zeros);
        return MINIDL_OUT_OF_MEMORY;
    }
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int t = 0; t < parts; t++) {
        float block[BF16_MR * BF16_NR] __attribute__((aligned(64)));
        float *sums = t == 0 ? dweight : partial + (t - 1) * k * s->f;
        const int64_t first = chunks * t / parts, last = chunks * (t + 1) / parts;
        bf16_amx_tile_config();
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, n1 = n0 + chunk < s->n ? n0 + chunk : s->n;
            for (int64_t i = 0; i < blocks; i++) {
                const int64_t fb = i % f_blocks, cb = i / f_blocks % c_blocks, window = i / (f_blocks * c_blocks);
                const int64_t c0 = cb * 32, f0 = fb * 32;
                bf16_amx_kernel_filter_32x32(block, image_t, pairs, &g, window / s->kw, window % s->kw, c0, f0,
                                             n0, n1);
                const int mb = (int)(s->c - c0 < 32 ? s->c - c0 : 32), nb = (int)(s->f - f0 < 32 ? s->f - f0 : 32);
                bf16_store_block(sums + (window * s->c + c0) * s->f + f0, s->f, block, mb, nb, 1.0f,
                                 ch == first ? 0.0f : 1.0f, NULL);
            }
        }
        bf16_amx_tile_release();
    }
    for (int t = 1; t < parts; t++) {
        const float *p = partial + (t - 1) * k * s->f;
        for (int64_t i = 0; i < k * s->f; i++)
            dweight[i] += p[i];
    }
    free(partial);
    free(image_t);
    free(pairs);
    free(zeros);
    return MINIDL_OK;
}
