// int8 inference (minidl/backends/quantized_ops.py's contract): uint8 activations x int8 weights
// summed in int, then csrc/qgemm.h's epilogue. Integer arithmetic throughout, one float multiply
// and one rint per element, so results equal the numpy reference and the cpu kernels bit for bit.
// Correctness first: one work-item per output element, no tiling (speed on GPUs later).
//
// Packed weights w: element (k, n) of the (K, N) matrix at ((k / 4) * NP + n) * 4 + k % 4,
// NP = N rounded up to QGEMM_NR.

#define QGEMM_NR 16   // must equal MINIDL_QGEMM_NR of csrc/qgemm.h

int packed_index(const int k, const int n, const int NP)
{
    return ((k / 4) * NP + n) * 4 + (k & 3);
}

// The epilogue of one element: uint8 into out_u8 (is_u8) or float into out_f32.
void store_result(__global uchar *out_u8, __global float *out_f32, const int index, const int acc,
                  const int offset, const float multiplier, const int zp, const int relu,
                  const int is_u8)
{
    const int total = as_int(as_uint(acc) + as_uint(offset));   // wraps, as in C and numpy
    float v = convert_float_rte(total) * multiplier;
    if (is_u8) {
        const float lo = relu ? 0.0f : (float)(-zp), hi = (float)(255 - zp);
        v = v < lo ? lo : (v > hi ? hi : v);
        out_u8[index] = (uchar)((int)rint(v) + zp);
    } else {
        out_f32[index] = relu && v < 0.0f ? 0.0f : v;
    }
}

// out (M, N) = epilogue(a (M, K) @ w); one work-item per output element.
__kernel void qgemm_forward(__global uchar *out_u8, __global float *out_f32, __global const uchar *a,
                            __global const char *w, __global const int *column_offset,
                            __global const float *multiplier, const int zp, const int relu,
                            const int is_u8, const int M, const int K, const int N)
{
    const int i = get_global_id(0);
    if (i >= M * N)
        return;
    const int r = i / N, n = i % N, NP = (N + QGEMM_NR - 1) / QGEMM_NR * QGEMM_NR;
    int acc = 0;
    for (int k = 0; k < K; k++)
        acc += (int)a[r * K + k] * (int)w[packed_index(k, n, NP)];
    store_result(out_u8, out_f32, i, acc, column_offset[n], multiplier[n], zp, relu, is_u8);
}

// out (NB, OH, OW, F) = epilogue(conv of x (NB, H, W, C)); padding holds x_zp (a real zero).
__kernel void qconv2d_forward(__global uchar *out_u8, __global float *out_f32, __global const uchar *x,
                              __global const char *w, __global const int *column_offset,
                              __global const float *multiplier, const int zp, const int relu,
                              const int is_u8, const int x_zp, const int NB, const int H, const int W,
                              const int C, const int KH, const int KW, const int SH, const int SW,
                              const int PT, const int PL, const int OH, const int OW, const int F)
{
    const int i = get_global_id(0);
    if (i >= NB * OH * OW * F)
        return;
    const int f = i % F, pixel = i / F, ox = pixel % OW, oy = (pixel / OW) % OH, b = pixel / (OW * OH);
    const int NP = (F + QGEMM_NR - 1) / QGEMM_NR * QGEMM_NR;
    int acc = 0;
    for (int ky = 0; ky < KH; ky++) {
        const int y = oy * SH - PT + ky;
        for (int kx = 0; kx < KW; kx++) {
            const int xx = ox * SW - PL + kx;
            const int inside = y >= 0 && y < H && xx >= 0 && xx < W;
            const int base = ((b * H + y) * W + xx) * C, k0 = (ky * KW + kx) * C;
            for (int c = 0; c < C; c++) {
                const int value = inside ? (int)x[base + c] : x_zp;
                acc += value * (int)w[packed_index(k0 + c, f, NP)];
            }
        }
    }
    store_result(out_u8, out_f32, i, acc, column_offset[f], multiplier[f], zp, relu, is_u8);
}

// out = clamp(rint(x * inv_scale) + zp, 0, 255), NaN -> zp
__kernel void quantize_u8(__global uchar *out, __global const float *x, const float inv_scale,
                          const int zp, const int count)
{
    const int i = get_global_id(0);
    if (i >= count)
        return;
    const float v = rint(x[i] * inv_scale);
    const float q = isnan(v) ? (float)zp : v + (float)zp;
    out[i] = (uchar)(q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q));
}

__kernel void dequantize_u8(__global float *out, __global const uchar *x, const float scale,
                            const int zp, const int count)
{
    const int i = get_global_id(0);
    if (i >= count)
        return;
    out[i] = scale * (float)((int)x[i] - zp);
}

// out = clamp(((a - za) * ma + (b - zb) * mb + 2^(QADD_SHIFT - 1)) >> QADD_SHIFT + zo, lo, 255)
#define QADD_SHIFT 20   // must equal MINIDL_QADD_SHIFT of csrc/qgemm.h
__kernel void add_u8(__global uchar *out, __global const uchar *a, __global const uchar *b,
                     const int za, const int zb, const long ma, const long mb, const int zo,
                     const int relu, const int count)
{
    const int i = get_global_id(0);
    if (i >= count)
        return;
    const long acc = (long)((int)a[i] - za) * ma + (long)((int)b[i] - zb) * mb;
    const long q = ((acc + (1L << (QADD_SHIFT - 1))) >> QADD_SHIFT) + zo;
    out[i] = (uchar)clamp(q, (long)(relu ? zo : 0), 255L);
}

// max over each window's real positions; one work-item per output element
__kernel void max_pool2d_u8(__global uchar *out, __global const uchar *x, const int NB, const int H,
                            const int W, const int C, const int KH, const int KW, const int SH,
                            const int SW, const int PT, const int PL, const int OH, const int OW)
{
    const int i = get_global_id(0);
    if (i >= NB * OH * OW * C)
        return;
    const int c = i % C, pixel = i / C, ox = pixel % OW, oy = (pixel / OW) % OH, b = pixel / (OW * OH);
    uchar best = 0;
    for (int y = max(oy * SH - PT, 0); y < min(oy * SH - PT + KH, H); y++)
        for (int xx = max(ox * SW - PL, 0); xx < min(ox * SW - PL + KW, W); xx++)
            best = max(best, x[((b * H + y) * W + xx) * C + c]);
    out[i] = best;
}
