// Elementwise kernels: one work-item per element, n elements in all.
// Outputs may alias inputs where the backend contract allows it, so no pointer is restrict.
// NaN propagates as in numpy: relu and clips use common.cl's max_nan and clip_nan.

// The activation kernels live in activations.cl.

__kernel void fill_float(__global float *out, const float value, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = value;
}

__kernel void fill_int(__global int *out, const int value, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = value;
}

__kernel void add(__global float *out, __global const float *a, __global const float *b, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}

__kernel void axpby(__global float *out, const float alpha, __global const float *x,
                    const float beta, __global const float *y, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = alpha * x[i] + beta * y[i];
}

__kernel void multiply(__global float *out, __global const float *a, __global const float *b, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = a[i] * b[i];
}

// out, x are (rows, c); bias is (c,); one work-item per row (no per-element division)
__kernel void bias_add(__global float *out, __global const float *x, __global const float *bias,
                       const int rows, const int c)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const size_t o = (size_t)r * c;
    for (int j = 0; j < c; ++j) out[o + j] = x[o + j] + bias[j];
}

// g = clip(g, -clipvalue, clipvalue) in place; a NaN stays NaN
__kernel void clip_by_value(__global float *g, const float clipvalue, const int n)
{
    const int i = get_global_id(0);
    if (i < n) g[i] = clip_nan(g[i], -clipvalue, clipvalue);
}

// out (rows, c_out) receives x (rows, c_in) in its channels [c_offset, c_offset + c_in):
// one piece of a concatenation along the last axis; one work-item per row
__kernel void concat_piece_forward(__global float *out, __global const float *x, const int c_in,
                                   const int c_out, const int c_offset, const int rows)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global float *dst = out + (size_t)r * c_out + c_offset;
    __global const float *src = x + (size_t)r * c_in;
    for (int j = 0; j < c_in; ++j) dst[j] = src[j];
}

// dx (rows, c_in) = channels [c_offset, c_offset + c_in) of dout (rows, c_out)
__kernel void concat_piece_backward(__global float *dx, __global const float *dout, const int c_in,
                                    const int c_out, const int c_offset, const int rows)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global float *dst = dx + (size_t)r * c_in;
    __global const float *src = dout + (size_t)r * c_out + c_offset;
    for (int j = 0; j < c_in; ++j) dst[j] = src[j];
}

// out (N, OH, OW, C) = x (N, H, W, C) zero-padded by top and left (bottom and right follow from
// OH, OW); one work-item per output image row, n = N * OH
__kernel void pad2d_forward(__global float *out, __global const float *x, const int h, const int w,
                            const int c, const int oh, const int ow, const int top, const int left,
                            const int n)
{
    const int r = get_global_id(0);
    if (r >= n) return;
    const int oy = r % oh, b = r / oh;
    const int y = oy - top;
    __global float *dst = out + (size_t)r * ow * c;
    if (y < 0 || y >= h) {
        for (int j = 0; j < ow * c; ++j) dst[j] = 0.0f;
        return;
    }
    __global const float *src = x + (size_t)(b * h + y) * w * c;
    const int before = left * c, inside = w * c;
    for (int j = 0; j < before; ++j) dst[j] = 0.0f;
    for (int j = 0; j < inside; ++j) dst[before + j] = src[j];
    for (int j = before + inside; j < ow * c; ++j) dst[j] = 0.0f;
}

// dx (N, H, W, C) = the interior of dout (N, OH, OW, C); one work-item per dx image row, n = N * H
__kernel void pad2d_backward(__global float *dx, __global const float *dout, const int h, const int w,
                             const int c, const int oh, const int ow, const int top, const int left,
                             const int n)
{
    const int r = get_global_id(0);
    if (r >= n) return;
    const int y = r % h, b = r / h;
    __global float *dst = dx + (size_t)r * w * c;
    __global const float *src = dout + ((size_t)(b * oh + y + top) * ow + left) * c;
    for (int j = 0; j < w * c; ++j) dst[j] = src[j];
}
