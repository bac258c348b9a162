/* The data path of minidl.data.ArrayIterator: gather + normalize + pad-crop + flip in one pass.
 *
 * The random choices (which rows, crop corners, flips) are made in Python from the iterator's
 * numpy Generator, so a batch is a pure function of those arrays and the C and numpy paths
 * give the same result. The caller (minidl/data.py) checks every size, index and corner. */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "internal/checked_alloc.h"

/* Below this many output floats a batch is built by one thread: the iterator works in a
 * background thread beside the training step, whose kernels already use every core, and a
 * 128-image CIFAR batch (393,216 floats) takes well under a millisecond on one core. */
#define AUGMENT_PARALLEL_MIN_FLOATS (1 << 22)

/* out[k] = src[k] * scale_row[k] + shift_row[k] for a contiguous run of pixels */
typedef void (*normalize_span_fn)(float *out, const void *src, const float *scale_row,
                                  const float *shift_row, int n);

static void normalize_span_u8(float *out, const void *src, const float *scale_row,
                              const float *shift_row, int n)
{
    const uint8_t *s = (const uint8_t *)src;
#pragma omp simd
    for (int k = 0; k < n; k++)
        out[k] = (float)s[k] * scale_row[k] + shift_row[k];
}

static void normalize_span_f32(float *out, const void *src, const float *scale_row,
                               const float *shift_row, int n)
{
    const float *s = (const float *)src;
#pragma omp simd
    for (int k = 0; k < n; k++)
        out[k] = s[k] * scale_row[k] + shift_row[k];
}

/* Reverse the order of the pixels of one row, keeping each pixel's channels in order. */
static void mirror_row(float *row, int width, int channels)  // row is (width, channels)
{
    for (int left = 0, right = width - 1; left < right; left++, right--) {
        float *a = row + (size_t)left * channels;
        float *b = row + (size_t)right * channels;
        for (int c = 0; c < channels; c++) {
            float t = a[c];
            a[c] = b[c];
            b[c] = t;
        }
    }
}

static int augment_batch(float *out, const void *x, size_t elem_size, normalize_span_fn normalize,
                         const int64_t *index, const int32_t *crop_y, const int32_t *crop_x,
                         const uint8_t *flip, const float *scale, const float *shift,
                         int batch, int height, int width, int channels, int pad,
                         int out_height, int out_width)
{
    const size_t src_row_len = (size_t)width * channels;
    const size_t image_len = (size_t)height * src_row_len;
    const size_t out_row_len = (size_t)out_width * channels;
    const size_t out_image_len = (size_t)out_height * out_row_len;

    /* scale and shift repeated along a whole source row, so that a span of pixels is
     * normalized by one loop over contiguous floats, which the compiler vectorizes */
    float *scale_row = minidl_alloc_floats(2 * src_row_len);  // scale_row is (width, channels)
    if (scale_row == NULL)
        return MINIDL_OUT_OF_MEMORY;
    float *shift_row = scale_row + src_row_len;                   // shift_row is (width, channels)
    for (size_t k = 0; k < src_row_len; k++) {
        scale_row[k] = scale[k % channels];
        shift_row[k] = shift[k % channels];
    }

#pragma omp parallel for schedule(static) if ((size_t)batch * out_image_len >= AUGMENT_PARALLEL_MIN_FLOATS)
    for (int i = 0; i < batch; i++) {
        const char *image = (const char *)x + (size_t)index[i] * image_len * elem_size;
        float *out_image = out + (size_t)i * out_image_len;
        /* output column q reads source column x0 + q; only q_begin <= q < q_end lie inside */
        const int x0 = crop_x[i] - pad;
        const int q_begin = x0 < 0 ? -x0 : 0;
        const int q_end = width - x0 < out_width ? width - x0 : out_width;
        for (int r = 0; r < out_height; r++) {
            float *row = out_image + (size_t)r * out_row_len;
            const int sy = crop_y[i] - pad + r;
            if (sy < 0 || sy >= height || q_begin >= q_end) {
                memset(row, 0, out_row_len * sizeof(float));
                continue;
            }
            const char *src = image + ((size_t)sy * width + (size_t)(x0 + q_begin)) * channels * elem_size;
            memset(row, 0, (size_t)q_begin * channels * sizeof(float));
            normalize(row + (size_t)q_begin * channels, src, scale_row, shift_row,
                      (q_end - q_begin) * channels);
            memset(row + (size_t)q_end * channels, 0, (size_t)(out_width - q_end) * channels * sizeof(float));
            if (flip[i])
                mirror_row(row, out_width, channels);
        }
    }
    free(scale_row);
    return MINIDL_OK;
}

int minidl_augment_batch_u8(float *out, const uint8_t *x, const int64_t *index, const int32_t *crop_y,
                            const int32_t *crop_x, const uint8_t *flip, const float *scale, const float *shift,
                            int batch, int height, int width, int channels, int pad, int out_height,
                            int out_width)
{
    return augment_batch(out, x, sizeof(uint8_t), normalize_span_u8, index, crop_y, crop_x, flip,
                         scale, shift, batch, height, width, channels, pad, out_height, out_width);
}

int minidl_augment_batch_f32(float *out, const float *x, const int64_t *index, const int32_t *crop_y,
                             const int32_t *crop_x, const uint8_t *flip, const float *scale, const float *shift,
                             int batch, int height, int width, int channels, int pad, int out_height,
                             int out_width)
{
    return augment_batch(out, x, sizeof(float), normalize_span_f32, index, crop_y, crop_x, flip,
                         scale, shift, batch, height, width, channels, pad, out_height, out_width);
}
