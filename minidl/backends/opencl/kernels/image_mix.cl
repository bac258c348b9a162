// The mixing augmentation ops (MixUp, CutMix, RandomErasing, RandomGaussianBlur,
// RandomSharpness): batch_mix_forward, image_paste_forward, image_filter_blend_forward. Their
// per-sample numbers come in small tables drawn on the host (minidl/backends/image_mix_args.py);
// the formulas and the float32 order of each pixel's filter taps (rows, then columns) are those
// of csrc/image_mix.c and minidl/backends/numpy_ops/image_mix.py.
#define MIX_RUN 256   // elements per work-item of batch_mix_forward (tunable)

long source_index(const float k, const int count)
{
    if (!(k > 0.0f)) return 0;   // negative or NaN
    return k >= (float)(count - 1) ? count - 1 : (long)k;
}

// out (n, size) = mix[s, 0] x[s] + mix[s, 1] x[mix[s, 2]]: one work-item per run of MIX_RUN
// elements of one sample.
__kernel void batch_mix_forward(__global float *out, __global const float *x,
                                __global const float *mix, const int n, const long size)
{
    const long runs = (size + MIX_RUN - 1) / MIX_RUN;
    const long item = get_global_id(0);
    if (item >= (long)n * runs) return;
    const long s = item / runs, first = (item % runs) * MIX_RUN;
    const long last = min(first + MIX_RUN, size);
    const float a = mix[3 * s], b = mix[3 * s + 1];
    __global const float *self = x + s * size;
    __global const float *other = x + source_index(mix[3 * s + 2], n) * size;
    __global float *dst = out + s * size;
    for (long k = first; k < last; ++k) dst[k] = a * self[k] + b * other[k];
}

// A table's integer offset (NaN: 0), bounded so that adding a coordinate cannot overflow.
long offset_of(float v)
{
    if (isnan(v)) return 0;
    v = floor(v);
    return v < -1073741824.0f ? -1073741824L : (v > 1073741824.0f ? 1073741824L : (long)v);
}

long clamp_index(const long t, const int length)
{
    return t < 0 ? 0 : (t >= length ? length - 1 : t);
}

// out (n, h, w, c) = x, with image s's box boxes[s] = (x0, x1, y0, y1, k, dx, dy) taken from
// source[k, i + dy, j + dx] (source (m, sh, sw, c), coordinates clamped) clipped to
// [low, high]: one work-item per image row.
__kernel void image_paste_forward(__global float *out, __global const float *x,
                                  __global const float *boxes, __global const float *source,
                                  const float low, const float high, const int n, const int h,
                                  const int w, const int c, const int m, const int sh, const int sw)
{
    const long item = get_global_id(0);
    if (item >= (long)n * h) return;
    const long s = item / h;
    const int i = (int)(item % h);
    __global const float *b = boxes + 7 * s;
    const long row = (long)w * c, at = item * row;
    const long dx = offset_of(b[5]);
    const long from = (source_index(b[4], m) * sh + clamp_index(i + offset_of(b[6]), sh)) * sw * c;
    const int row_inside = (float)i >= b[2] && (float)i < b[3];
    for (int j = 0; j < w; ++j) {
        const int inside = row_inside && (float)j >= b[0] && (float)j < b[1];
        const long col = from + clamp_index(j + dx, sw) * c;
        for (int ch = 0; ch < c; ++ch) {
            const long q = (long)j * c + ch;
            out[at + q] = inside ? clip_nan(source[col + ch], low, high) : x[at + q];
        }
    }
}

// out (n, h, w, c) = clip(x + weights[s] (f - x), low, high), f the zero-padded correlation of
// each channel with taps (kh, kw); weight 0 leaves x (clipped). One work-item per image row.
__kernel void image_filter_blend_forward(__global float *out, __global const float *x,
                                         __global const float *taps, __global const float *weights,
                                         const float low, const float high, const int n,
                                         const int h, const int w, const int c, const int kh,
                                         const int kw)
{
    const long item = get_global_id(0);
    if (item >= (long)n * h) return;
    const long s = item / h;
    const int i = (int)(item % h);
    const long row = (long)w * c;
    __global const float *xs = x + s * h * row;
    __global float *dst = out + item * row;
    __global const float *xrow = x + item * row;
    const float wt = weights[s];
    if (wt == 0.0f) {
        for (long q = 0; q < row; ++q) dst[q] = clip_nan(xrow[q], low, high);
        return;
    }
    // pixel by pixel and channel by channel: no division of the element index (a 64-bit
    // division per element cost most of this kernel on PoCL). The taps that fall inside the
    // image are a range of rows and, per pixel, a range of columns (zero padding adds
    // nothing): loops over those ranges, with no test per tap, add the same terms in the same
    // order as testing each tap would, and ran 1.6x as fast on PoCL (RandomSharpness, batch 128).
    const int a_lo = max(0, kh / 2 - i), a_hi = min(kh, h - i + kh / 2);
    for (int j = 0; j < w; ++j) {
        const int b_lo = max(0, kw / 2 - j), b_hi = min(kw, w - j + kw / 2);
        for (int ch = 0; ch < c; ++ch) {
            const long q = (long)j * c + ch;
            float f = 0.0f;
            for (int a = a_lo; a < a_hi; ++a) {
                __global const float *tap_row = xs + (long)(i + a - kh / 2) * row + ch;
                for (int b = b_lo; b < b_hi; ++b)
                    f += taps[a * kw + b] * tap_row[(long)(j + b - kw / 2) * c];
            }
            dst[q] = clip_nan(xrow[q] + wt * (f - xrow[q]), low, high);
        }
    }
}
