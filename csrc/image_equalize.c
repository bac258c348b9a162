/* Equalization and CLAHE (see image_equalize.h). Both follow Keras 3.15's torch code step by
 * step in float32 (numpy_ops/equalize.py is the reference); the comments say where its
 * integer and float types matter. The fast versions make one pass over memory per histogram
 * and per look-up, pixel-major, and thread the look-ups; the reference twins walk one
 * channel (one tile) at a time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "image_equalize.h"
#include "internal/checked_alloc.h"
#include "internal/image_loops.h"
#include "internal/parallel.h"
#include "status.h"

/* ----------------------------------------------------------------- Equalization */

/* Keras's _scale_values: v * scale + offset, both rounded to float32 (two roundings). */
typedef struct { float scale, offset; } affine;

static affine to_255(float low, float high)
{
    double scale = 255.0 / ((double)high - (double)low);
    return (affine){(float)scale, (float)(-(double)low * scale)};
}

static affine from_255(float low, float high)
{
    double scale = ((double)high - (double)low) / 255.0;
    return (affine){(float)scale, (float)((double)low - 0.0 * scale)};
}

/* Bin of v (0..255): the float is clamped before the cast, which equals Keras's int32 cast
 * then clip for every number; a NaN falls in bin 0 (its cast is undefined in C). */
static inline int bin_of(float scaled, int bins)
{
    if (!(scaled > 0.0f)) return 0;
    float top = (float)(bins - 1);
    return (int)(scaled < top ? scaled : top);
}

/* The histogram bin ((v * (bins - 1)) / 255) and the look-up index ((v / 255) * (bins - 1)):
 * Keras computes them in these two orders, which can differ by one at a bin's edge. */
static inline int histogram_bin(float v, int bins) { return bin_of((v * (float)(bins - 1)) / 255.0f, bins); }
static inline int lookup_bin(float v, int bins) { return bin_of((v / 255.0f) * (float)(bins - 1), bins); }

/* lut (bins,) from the counts of one channel; 0 when the channel fills at most one bin
 * (then it is kept as it is). */
static int equalize_table(float *lut, const int64_t *hist, int bins)
{
    int nonzero = 0;
    for (int b = 0; b < bins; b++) nonzero += hist[b] != 0;
    if (nonzero <= 1) return 0;
    int64_t cdf = 0, cdf_min = -1;
    int64_t total = 0;
    for (int b = 0; b < bins; b++) total += hist[b];
    for (int b = 0; b < bins; b++) {
        cdf += hist[b];
        if (cdf_min < 0 && cdf > 0) cdf_min = cdf;
    }
    int64_t denominator = total - cdf_min == 0 ? 1 : total - cdf_min;
    cdf = 0;
    for (int b = 0; b < bins; b++) {
        cdf += hist[b];
        /* Keras (torch) divides the int64 counts in float32 and rounds half to even */
        float v = nearbyintf((float)((cdf - cdf_min) * 255) / (float)denominator);
        lut[b] = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
    }
    return 1;
}

static float equalize_pixel(float x, affine in, affine back, const float *lut, int bins)
{
    float v = x * in.scale + in.offset;
    float e = lut ? lut[lookup_bin(v, bins)] : v;
    return e * back.scale + back.offset;
}

int minidl_equalize_reference(float *out, const float *x, float low, float high, int bins,
                              int64_t pixels, int c)
{
    int64_t *hist = minidl_alloc((size_t)bins * sizeof(int64_t));
    float *lut = minidl_alloc_floats((size_t)bins);
    if (!hist || !lut) { free(hist); free(lut); return MINIDL_OUT_OF_MEMORY; }
    affine in = to_255(low, high), back = from_255(low, high);
    for (int k = 0; k < c; k++) {
        memset(hist, 0, (size_t)bins * sizeof(int64_t));
        for (int64_t p = 0; p < pixels; p++)
            hist[histogram_bin(x[p * c + k] * in.scale + in.offset, bins)]++;
        int equalized = equalize_table(lut, hist, bins);
        for (int64_t p = 0; p < pixels; p++)
            out[p * c + k] = equalize_pixel(x[p * c + k], in, back, equalized ? lut : NULL, bins);
    }
    free(hist);
    free(lut);
    return MINIDL_OK;
}

/* hist (c, bins) += the counts of bin (pixels, c); inlined with c a constant for RGB. */
static inline __attribute__((always_inline)) void count_bins(int64_t *hist, const int32_t *bin,
                                                             int64_t pixels, int c, int bins)
{
    for (int64_t p = 0; p < pixels; p++)
        for (int k = 0; k < c; k++) hist[(int64_t)k * bins + bin[p * c + k]]++;
}

/* dst (pixels, c) = tables (c, bins) read at index (pixels, c); inlined as count_bins. */
static inline __attribute__((always_inline)) void look_up(float *dst, const int32_t *index,
                                                          const float *tables, int64_t pixels,
                                                          int c, int bins)
{
    for (int64_t p = 0; p < pixels; p++)
        for (int k = 0; k < c; k++) dst[p * c + k] = tables[(int64_t)k * bins + index[p * c + k]];
}

/* Values per chunk of the fast forward's bins: whole pixels of up to this many values. */
#define EQUALIZE_CHUNK 1024

int minidl_equalize_forward(float *out, const float *x, float low, float high, int bins,
                            int64_t pixels, int c)
{
    if (c > EQUALIZE_CHUNK)   /* a pixel does not fit in a chunk: the plain loops */
        return minidl_equalize_reference(out, x, low, high, bins, pixels, c);
    int64_t *hist = minidl_alloc((size_t)bins * c * sizeof(int64_t));   /* hist is (c, bins) */
    float *lut = minidl_alloc_floats((size_t)bins * c);   /* lut is (c, bins): outputs per bin */
    int *equalized = minidl_alloc((size_t)c * sizeof(int));
    if (!hist || !lut || !equalized) {
        free(hist); free(lut); free(equalized);
        return MINIDL_OUT_OF_MEMORY;
    }
    affine in = to_255(low, high), back = from_255(low, high);
    /* the bins of a chunk at a time, in the active ISA's vector loops (histogram_bin and
     * lookup_bin's numbers), then counted / looked up */
    const struct image_loops *loops = minidl_image_loops();
    const int64_t chunk_pixels = EQUALIZE_CHUNK / (c > 0 ? c : 1);
    int32_t bin[EQUALIZE_CHUNK];
    memset(hist, 0, (size_t)bins * c * sizeof(int64_t));
    for (int64_t p0 = 0; p0 < pixels; p0 += chunk_pixels) {   /* one pass over the batch */
        const int64_t count = (pixels - p0 < chunk_pixels ? pixels - p0 : chunk_pixels) * c;
        loops->histogram_bins(bin, x + p0 * c, count, in.scale, in.offset, bins);
        if (c == 3)
            count_bins(hist, bin, count / 3, 3, bins);
        else
            count_bins(hist, bin, count / c, c, bins);
    }
    for (int k = 0; k < c; k++) {
        float *table = lut + (int64_t)k * bins;
        equalized[k] = equalize_table(table, hist + (int64_t)k * bins, bins);
        if (!equalized[k])
            memset(table, 0, (size_t)bins * sizeof(float));
        /* equalize_pixel's last step done once per bin: the same product and sum */
        for (int b = 0; b < bins; b++) table[b] = table[b] * back.scale + back.offset;
    }
    int64_t blocks = minidl_blocks(pixels);
    int threaded = pixels * c >= MINIDL_PARALLEL_MIN;
#pragma omp parallel for schedule(static) if (threaded) num_threads(minidl_num_threads())
    for (int64_t block = 0; block < blocks; block++) {
        int32_t index[EQUALIZE_CHUNK];
        int64_t end = block * MINIDL_BLOCK + minidl_block_len(pixels, block);
        for (int64_t p0 = block * MINIDL_BLOCK; p0 < end; p0 += chunk_pixels) {
            const int64_t count = (end - p0 < chunk_pixels ? end - p0 : chunk_pixels) * c;
            const float *src = x + p0 * c;
            float *dst = out + p0 * c;
            loops->lookup_bins(index, src, count, in.scale, in.offset, bins);
            if (c == 3)
                look_up(dst, index, lut, count / 3, 3, bins);
            else
                look_up(dst, index, lut, count / c, c, bins);
            for (int k = 0; k < c; k++)   /* a channel filling one bin is kept as it is */
                if (!equalized[k])
                    for (int64_t i = k; i < count; i += c)
                        dst[i] = equalize_pixel(src[i], in, back, NULL, bins);
        }
    }
    free(hist);
    free(lut);
    free(equalized);
    return MINIDL_OK;
}

/* ----------------------------------------------------------------- CLAHE */

enum { LEVELS = 256 };

/* Keras's _transform_value_range to 0..255 and back (skipped for value_range (0, 255)). */
static inline float clahe_in(float x, float low, float high, int identity)
{
    return identity ? x : ((x - low) / (high - low)) * 255.0f + 0.0f;
}

static inline float clahe_out(float v, float low, float high, int identity)
{
    return identity ? v : ((v - 0.0f) / 255.0f) * (high - low) + low;
}

/* A pixel's level: Keras's int32 cast clipped to 0..255 (a NaN: 0). */
static inline int level_of(float v)
{
    if (!(v > 0.0f)) return 0;
    return v < 255.0f ? (int)v : 255;
}

/* cdf (256,) = the clipped, normalised CDF of one tile's histogram `hist` (counts, area
 * pixels). Keras's torch backend counts in int64, so its limit is truncated to an integer. */
static void tile_cdf(float *cdf, const int *hist, int area, float clip_limit)
{
    float h[LEVELS];
    for (int v = 0; v < LEVELS; v++) h[v] = (float)hist[v];
    if (clip_limit > 0.0f) {
        float limit = (float)trunc((double)clip_limit * area / 256.0);
        float excess = 0.0f;
        for (int v = 0; v < LEVELS; v++) {
            float clipped = h[v] < limit ? h[v] : limit;
            excess += h[v] - clipped;
            h[v] = clipped;
        }
        float redistributed = excess / 256.0f;
        for (int v = 0; v < LEVELS; v++) h[v] += redistributed;
    }
    float sum = 0.0f;
    for (int v = 0; v < LEVELS; v++) { sum += h[v]; cdf[v] = sum; }
    float cdf_min = cdf[0];
    for (int v = 1; v < LEVELS; v++) cdf_min = cdf[v] < cdf_min ? cdf[v] : cdf_min;
    float denominator = (float)area - cdf_min;
    if (denominator == 0.0f) denominator = 1.0f;
    for (int v = 0; v < LEVELS; v++) {
        float q = ((cdf[v] - cdf_min) * 255.0f) / denominator;
        cdf[v] = q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q);
    }
}

/* tile_cdf for the fast path: the same numbers, with the running sum in integers. Every
 * partial sum of the clipped, redistributed histogram is a multiple of 1/256 no larger than
 * area, so for area <= 65536 float32 holds each exactly, whatever the order of the additions:
 * counting in units of 1/256 gives tile_cdf's values without its chain of 256 dependent float
 * additions (the loop that cost most). Larger tiles take tile_cdf itself. */
static void tile_cdf_counted(float *cdf, const int *hist, int area, float clip_limit)
{
    if (area > 65536) {
        tile_cdf(cdf, hist, area, clip_limit);
        return;
    }
    int limit = clip_limit > 0.0f ? (int)trunc((double)clip_limit * area / 256.0) : area;
    int excess = 0;
    for (int v = 0; v < LEVELS; v++) excess += hist[v] > limit ? hist[v] - limit : 0;
    /* the sum never decreases: its minimum is its first value */
    float cdf_min = (float)((hist[0] < limit ? hist[0] : limit) * 256 + excess) * (1.0f / 256.0f);
    float denominator = (float)area - cdf_min;
    if (denominator == 0.0f) denominator = 1.0f;
#ifdef __SSE2__
    /* four levels at a time: the running sum as an in-register prefix sum plus the carry of
     * the levels before, then the normalisation, in one pass */
    __m128i carry = _mm_setzero_si128(), vlimit = _mm_set1_epi32(limit);
    __m128i vexcess = _mm_set1_epi32(excess);
    __m128 vmin = _mm_set1_ps(cdf_min), vden = _mm_set1_ps(denominator);
    __m128 v255 = _mm_set1_ps(255.0f), vunit = _mm_set1_ps(1.0f / 256.0f);
    for (int v = 0; v < LEVELS; v += 4) {
        __m128i h = _mm_loadu_si128((const __m128i *)(hist + v));
        __m128i over = _mm_cmpgt_epi32(h, vlimit);
        h = _mm_or_si128(_mm_and_si128(over, vlimit), _mm_andnot_si128(over, h));
        h = _mm_add_epi32(_mm_slli_epi32(h, 8), vexcess);            /* units of 1/256 */
        h = _mm_add_epi32(h, _mm_slli_si128(h, 4));
        h = _mm_add_epi32(h, _mm_slli_si128(h, 8));
        h = _mm_add_epi32(h, carry);
        carry = _mm_shuffle_epi32(h, 0xFF);
        __m128 q = _mm_mul_ps(_mm_cvtepi32_ps(h), vunit);
        q = _mm_div_ps(_mm_mul_ps(_mm_sub_ps(q, vmin), v255), vden);
        _mm_storeu_ps(cdf + v, _mm_min_ps(_mm_max_ps(q, _mm_setzero_ps()), v255));
    }
#else
    int32_t running = 0;
    for (int v = 0; v < LEVELS; v++) {
        running += (hist[v] < limit ? hist[v] : limit) * 256 + excess;   /* units of 1/256 */
        float q = (((float)running * (1.0f / 256.0f) - cdf_min) * 255.0f) / denominator;
        cdf[v] = q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q);
    }
#endif
}

/* Row (column) i's tiles below and above and the weight of the one above: Keras's grid
 * (i - tile / 2) / tile + 1 over the CDFs padded by one tile each side. */
typedef struct { int below, above; float weight; } grid_tap;

static grid_tap grid_tap_of(int i, int tile, int grid)
{
    float g = ((float)i - (float)(tile / 2.0)) / (float)tile + 1.0f;
    float g0 = floorf(g);
    int r0 = (int)fminf(fmaxf(g0, 0.0f), (float)(grid + 1));
    int r1 = (int)fminf(fmaxf(g0 + 1.0f, 0.0f), (float)(grid + 1));
    grid_tap t = {r0 - 1, r1 - 1, g - g0};
    t.below = t.below < 0 ? 0 : (t.below > grid - 1 ? grid - 1 : t.below);
    t.above = t.above < 0 ? 0 : (t.above > grid - 1 ? grid - 1 : t.above);
    return t;
}

static inline int clamp_index(int i, int size) { return i < size ? i : size - 1; }

/* The CDFs (grid_h, grid_w, c, 256) of image `image` (h, w, c); the padding repeats the edge
 * pixel (Keras's "symmetric" as its torch backend runs it: "replicate"). */
static void image_cdfs(float *cdfs, int *hist, const float *image, float low, float high,
                       int identity, float clip_limit, int grid_h, int grid_w, int tile_h,
                       int tile_w, int h, int w, int c)
{
    for (int ty = 0; ty < grid_h; ty++)
        for (int tx = 0; tx < grid_w; tx++) {
            memset(hist, 0, (size_t)c * LEVELS * sizeof(int));   /* hist is (c, 256) */
            for (int y = ty * tile_h; y < (ty + 1) * tile_h; y++) {
                const float *row = image + (int64_t)clamp_index(y, h) * w * c;
                for (int x = tx * tile_w; x < (tx + 1) * tile_w; x++) {
                    const float *pixel = row + (int64_t)clamp_index(x, w) * c;
                    for (int k = 0; k < c; k++)
                        hist[k * LEVELS + level_of(clahe_in(pixel[k], low, high, identity))]++;
                }
            }
            for (int k = 0; k < c; k++)
                tile_cdf_counted(cdfs + (((int64_t)ty * grid_w + tx) * c + k) * LEVELS,
                                 hist + k * LEVELS, tile_h * tile_w, clip_limit);
        }
}

static float clahe_pixel(const float *cdfs, grid_tap ty, grid_tap tx, int k, int level,
                         int grid_w, int c)
{
#define CDF(row, col) cdfs[(((int64_t)(row) * grid_w + (col)) * c + k) * LEVELS + level]
    float top = CDF(ty.below, tx.below) * (1.0f - tx.weight) + CDF(ty.below, tx.above) * tx.weight;
    float bottom = CDF(ty.above, tx.below) * (1.0f - tx.weight) + CDF(ty.above, tx.above) * tx.weight;
#undef CDF
    return top * (1.0f - ty.weight) + bottom * ty.weight;
}

static int clahe_run(float *out, const float *x, float low, float high, float clip_limit,
                     int grid_h, int grid_w, int n, int h, int w, int c, int threaded)
{
    int tile_h = (h + grid_h - 1) / grid_h, tile_w = (w + grid_w - 1) / grid_w;
    int identity = low == 0.0f && high == 255.0f;
    size_t table = (size_t)grid_h * grid_w * c * LEVELS;
    int failed = 0;
#pragma omp parallel if (threaded) num_threads(minidl_num_threads())
    {
        float *cdfs = minidl_alloc_floats(table);              /* this thread's image's CDFs */
        int *hist = minidl_alloc((size_t)c * LEVELS * sizeof(int));
        grid_tap *cols = minidl_alloc((size_t)w * sizeof(grid_tap));
        if (!cdfs || !hist || !cols) {
#pragma omp atomic write
            failed = 1;
        } else {
            for (int x0 = 0; x0 < w; x0++) cols[x0] = grid_tap_of(x0, tile_w, grid_w);
        }
#pragma omp for schedule(static)
        for (int b = 0; b < n; b++) {
            if (!cdfs || !hist || !cols) continue;
            const float *image = x + (int64_t)b * h * w * c;
            image_cdfs(cdfs, hist, image, low, high, identity, clip_limit, grid_h, grid_w, tile_h,
                       tile_w, h, w, c);
            for (int y = 0; y < h; y++) {
                grid_tap ty = grid_tap_of(y, tile_h, grid_h);
                for (int x0 = 0; x0 < w; x0++)
                    for (int k = 0; k < c; k++) {
                        int64_t at = (((int64_t)b * h + y) * w + x0) * c + k;
                        int level = level_of(clahe_in(x[at], low, high, identity));
                        out[at] = clahe_out(clahe_pixel(cdfs, ty, cols[x0], k, level, grid_w, c),
                                            low, high, identity);
                    }
            }
        }
        free(cdfs);
        free(hist);
        free(cols);
    }
    return failed ? MINIDL_OUT_OF_MEMORY : MINIDL_OK;
}

int minidl_clahe_forward(float *out, const float *x, float low, float high, float clip_limit,
                         int grid_h, int grid_w, int n, int h, int w, int c)
{
    if (h < 1 || w < 1) return MINIDL_INVALID_SIZE;
    return clahe_run(out, x, low, high, clip_limit, grid_h, grid_w, n, h, w, c,
                     (int64_t)n * h * w * c >= MINIDL_PARALLEL_MIN && n > 1);
}

/* The reference: one (image, channel, tile) at a time, each pixel's four CDF values read
 * from tables recomputed per channel, on one thread. */
int minidl_clahe_reference(float *out, const float *x, float low, float high, float clip_limit,
                           int grid_h, int grid_w, int n, int h, int w, int c)
{
    if (h < 1 || w < 1) return MINIDL_INVALID_SIZE;
    int tile_h = (h + grid_h - 1) / grid_h, tile_w = (w + grid_w - 1) / grid_w;
    int identity = low == 0.0f && high == 255.0f;
    float *cdfs = minidl_alloc_floats((size_t)grid_h * grid_w * LEVELS);
    if (!cdfs) return MINIDL_OUT_OF_MEMORY;
    for (int b = 0; b < n; b++)
        for (int k = 0; k < c; k++) {
            for (int ty = 0; ty < grid_h; ty++)
                for (int tx = 0; tx < grid_w; tx++) {
                    int hist[LEVELS] = {0};
                    for (int y = ty * tile_h; y < (ty + 1) * tile_h; y++)
                        for (int x0 = tx * tile_w; x0 < (tx + 1) * tile_w; x0++) {
                            float v = x[(((int64_t)b * h + clamp_index(y, h)) * w +
                                         clamp_index(x0, w)) * c + k];
                            hist[level_of(clahe_in(v, low, high, identity))]++;
                        }
                    tile_cdf(cdfs + ((int64_t)ty * grid_w + tx) * LEVELS, hist, tile_h * tile_w,
                             clip_limit);
                }
            for (int y = 0; y < h; y++)
                for (int x0 = 0; x0 < w; x0++) {
                    int64_t at = (((int64_t)b * h + y) * w + x0) * c + k;
                    int level = level_of(clahe_in(x[at], low, high, identity));
                    out[at] = clahe_out(clahe_pixel(cdfs, grid_tap_of(y, tile_h, grid_h),
                                                    grid_tap_of(x0, tile_w, grid_w), 0, level,
                                                    grid_w, 1),
                                        low, high, identity);
                }
        }
    free(cdfs);
    return MINIDL_OK;
}
