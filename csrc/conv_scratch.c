/* The convolution's geometry helpers, the layout of its scratch, and how threads split the
 * work (see internal/conv_paths.h).
 *
 * Scratch layout. Shared: the packed weights (one call's worth), then the flipped weights of
 * backward-data. Per thread: a work area (an im2col chunk, or a padded image + pitch dout +
 * packed dout), then a partial dweight (K, F) and dbias (F,) of backward-filter. */

#include <string.h>

#include "cpu_features.h"
#include "internal/conv_implicit.h"
#include "internal/conv_paths.h"
#include "internal/gemm_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Bytes of cols per chunk: about a quarter of the 1 MiB L2, leaving room for the packed A block. */
#define CONV_CHUNK_BYTES (256 * 1024)
/* Chunks hold a multiple of this many rows (a multiple of every micro-kernel's MR). */
#define CONV_ROW_QUANTUM 48
/* The implicit path needs at least this many outputs per image (every micro-kernel's MR). */
#define CONV_IMPLICIT_MIN_ROWS 32

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

int64_t conv_chunk_rows(const struct minidl_window *s)
{
    int64_t rows = CONV_CHUNK_BYTES / ((int64_t)sizeof(float) * conv_patch_size(s));
    rows = rows / CONV_ROW_QUANTUM * CONV_ROW_QUANTUM;
    if (rows < CONV_ROW_QUANTUM)
        rows = CONV_ROW_QUANTUM;
    int64_t all = (conv_total_rows(s) + CONV_ROW_QUANTUM - 1) / CONV_ROW_QUANTUM * CONV_ROW_QUANTUM;
    return rows < all ? rows : all;
}

struct minidl_window conv_forward_image(const struct minidl_window *s)
{
    struct minidl_window g = {1, s->oh + s->kh - 1, s->ow + s->kw - 1, s->c, s->kh, s->kw, 1, 1, 0, 0,
                              s->oh, s->ow, s->f, 1, 1, 1};
    return g;
}

struct minidl_window conv_backward_data_image(const struct minidl_window *s)
{
    struct minidl_window g = {1, s->h + s->kh - 1, s->w + s->kw - 1, s->f, s->kh, s->kw, 1, 1, 0, 0,
                              s->h, s->w, s->c, 1, 1, 1};
    return g;
}

int conv_implicit_geometry_ok(const struct minidl_window *s)
{
    if (s->sh != 1 || s->sw != 1 || s->dh != 1 || s->dw != 1 || s->groups != 1 || conv_is_pointwise(s))
        return 0;
    int64_t pad_bottom = s->oh + s->kh - 1 - s->h - s->pad_top, pad_right = s->ow + s->kw - 1 - s->w - s->pad_left;
    if (s->pad_top < 0 || s->pad_left < 0 || pad_bottom < 0 || pad_right < 0 || s->pad_top >= s->kh ||
        s->pad_left >= s->kw || pad_bottom >= s->kh || pad_right >= s->kw)
        return 0;
    struct minidl_window fg = conv_forward_image(s), bg = conv_backward_data_image(s);
    return implicit_conv_rows(&fg) >= CONV_IMPLICIT_MIN_ROWS && implicit_conv_rows(&bg) >= CONV_IMPLICIT_MIN_ROWS;
}

/* ------------------------------------------------------------------ scratch layout */

/* One group's packed weights (K, F / groups) or their transpose, 64-byte aligned. */
static size_t group_packed_floats(const struct minidl_window *s)
{
    int k = (int)conv_patch_size(s), fg = (int)conv_group_filters(s);
    return round16(max_size(sgemm_packed_b_floats(k, fg), sgemm_packed_b_floats(fg, k)));
}

static size_t shared_floats(const struct minidl_window *s)
{
    size_t k = conv_patch_size(s);
    size_t packed = group_packed_floats(s) * s->groups;
    if (conv_implicit_geometry_ok(s)) {
        struct minidl_window fg = conv_forward_image(s), bg = conv_backward_data_image(s);
        packed = max_size(packed, max_size(implicit_conv_packed_weight_floats(&fg),
                                           implicit_conv_packed_weight_floats(&bg)));
    }
    return round16(packed) + round16(k * s->f);
}

size_t conv_padded_x_floats(const struct minidl_window *s)
{
    struct minidl_window g = conv_forward_image(s);
    return round16((size_t)(g.h * g.w * g.c));
}

size_t conv_pitch_dout_floats(const struct minidl_window *s)
{
    struct minidl_window g = conv_forward_image(s);
    return round16((size_t)implicit_conv_rows(&g) * s->f);
}

static size_t work_floats(const struct minidl_window *s)
{
    size_t work = round16((size_t)(conv_chunk_rows(s) * conv_patch_size(s)));
    if (conv_implicit_geometry_ok(s)) {
        struct minidl_window fg = conv_forward_image(s), bg = conv_backward_data_image(s);
        size_t filter = conv_padded_x_floats(s) + conv_pitch_dout_floats(s) +
                        sgemm_packed_b_floats((int)implicit_conv_rows(&fg), s->f);
        work = max_size(work, max_size(filter, (size_t)(bg.h * bg.w * bg.c)));
    }
    return round16(work);
}

static size_t per_thread_floats(const struct minidl_window *s)
{
    return work_floats(s) + round16((size_t)(conv_patch_size(s) * s->f)) + round16(s->f);
}

size_t conv_scratch_floats(const struct minidl_window *s, int threads)
{
    return shared_floats(s) + per_thread_floats(s) * threads;
}

int conv_usable_threads(const struct minidl_window *s, size_t scratch_floats)
{
    if (scratch_floats < shared_floats(s))
        return 0;
    int64_t fit = (int64_t)((scratch_floats - shared_floats(s)) / per_thread_floats(s));
    int64_t threads = minidl_num_threads();
    if (threads > fit)
        threads = fit;
    if (threads > conv_total_rows(s))
        threads = conv_total_rows(s) > 0 ? conv_total_rows(s) : 1;
    return (int)threads;
}

float *conv_packed_weight(const struct minidl_window *s, float *scratch)
{
    (void)s;
    return scratch;
}

float *conv_packed_group_weight(const struct minidl_window *s, float *scratch, int64_t g)
{
    return scratch + group_packed_floats(s) * g;
}

float *conv_flipped_weight(const struct minidl_window *s, float *scratch)
{
    return scratch + shared_floats(s) - round16((size_t)(conv_patch_size(s) * s->f));
}

float *conv_thread_work(const struct minidl_window *s, float *scratch, int t)
{
    return scratch + shared_floats(s) + per_thread_floats(s) * t;
}

float *conv_thread_partial_dweight(const struct minidl_window *s, float *scratch, int t)
{
    return conv_thread_work(s, scratch, t) + work_floats(s);
}

float *conv_thread_partial_dbias(const struct minidl_window *s, float *scratch, int t)
{
    return conv_thread_partial_dweight(s, scratch, t) + round16((size_t)(conv_patch_size(s) * s->f));
}

void conv_sum_partials(float *dweight, float *dbias, const struct minidl_window *s, float *scratch, int team)
{
    const int64_t kf = conv_patch_size(s) * s->f;
    for (int t = 1; t < team; t++) {
        conv_add_floats(dweight, conv_thread_partial_dweight(s, scratch, t), kf);
        if (dbias)
            conv_add_floats(dbias, conv_thread_partial_dbias(s, scratch, t), s->f);
    }
}

/* ------------------------------------------------------------------ work split */

void conv_thread_rows(const struct minidl_window *s, int t, int nt, int64_t *r0, int64_t *r1)
{
    int64_t per_image = s->oh * s->ow;
    if (s->n >= nt) {
        *r0 = s->n * t / nt * per_image;
        *r1 = s->n * (t + 1) / nt * per_image;
    } else {
        *r0 = conv_total_rows(s) * t / nt;
        *r1 = conv_total_rows(s) * (t + 1) / nt;
    }
}

void conv_image_range(const struct minidl_window *s, int t, int nt, int64_t *n0, int64_t *n1)
{
    *n0 = s->n * t / nt;
    *n1 = s->n * (t + 1) / nt;
}

void conv_thread_index(int *t, int *nt)
{
#ifdef _OPENMP
    *t = omp_get_thread_num();
    *nt = omp_get_num_threads();
#else
    *t = 0;
    *nt = 1;
#endif
}

void conv_pad_image(float *dst, const float *src, int64_t hp, int64_t wp, int64_t h, int64_t w, int64_t c,
                    int64_t top, int64_t left)
{
    for (int64_t y = 0; y < hp; y++) {
        float *row = dst + y * wp * c; // row is (WP, C)
        int64_t sy = y - top;
        if (sy < 0 || sy >= h) {
            memset(row, 0, sizeof(float) * wp * c);
            continue;
        }
        memset(row, 0, sizeof(float) * left * c);
        memcpy(row + left * c, src + sy * w * c, sizeof(float) * w * c);
        memset(row + (left + w) * c, 0, sizeof(float) * (wp - left - w) * c);
    }
}
