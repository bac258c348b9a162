// Rounding float tensors to bfloat16 or float16 precision, kept in float storage: the operands
// of mixed-precision compute (minidl.mixed_precision) where the device has no such arithmetic.
// Round to nearest even on the float's bits, as csrc/bf16.c; equal to it bit for bit.

// keep the top 32 - drop bits of u, rounding to nearest even
uint round_bits(const uint u, const int drop)
{
    const uint below_half = (1u << (drop - 1)) - 1u, lsb = (u >> drop) & 1u;
    return (u + below_half + lsb) & ~((1u << drop) - 1u);
}

__kernel void round_bfloat16(__global float *out, __global const float *x, const int n)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    const uint u = as_uint(x[i]);
    // NaN stays a quiet NaN
    out[i] = as_float((u & 0x7fffffffu) > 0x7f800000u ? (u | 0x00400000u) & 0xffff0000u
                                                       : round_bits(u, 16));
}

__kernel void round_float16(__global float *out, __global const float *x, const int n)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    const float v = x[i], a = fabs(v);
    float r;
    if (!(a < 65520.0f))              // NaN, inf, or past float16's largest value (65504)
        r = isnan(a) ? v : copysign(INFINITY, v);
    else if (a < 6.103515625e-05f)     // float16 subnormals: multiples of 2^-24 (exact scalings)
        r = rint(v * 16777216.0f) / 16777216.0f;
    else
        r = as_float(round_bits(as_uint(v), 13));
    out[i] = r;
}
