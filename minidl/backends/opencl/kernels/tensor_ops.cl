// The tensor ops of minidl.ops (minidl/backends/base.py, "tensor ops"), one work-item per
// output element. Shapes and strides are compile-time constants: the backend builds one program
// per operand layout (tensor_ops.py caches them), so the index arithmetic folds and nothing
// about a layout has to travel to the device.
//
// Defines (each defaults to a value that leaves it unused):
//   OP            the operation's position in UNARY_OPS / BINARY_OPS / REDUCE_OPS
//   RANK          rank of the iteration space (1..8)
//   D0..D7        its shape (the output's; for reductions the reduced part R0..R7 too)
//   SA*, SB*, SC* element strides of operands a, b, condition (0 on broadcast axes)
//   T             the element type of copies (float or int)

#ifndef OP
#define OP 0
#endif
#ifndef A_SCALAR
#define A_SCALAR 0
#endif
#ifndef B_SCALAR
#define B_SCALAR 0
#endif
#ifndef RANK
#define RANK 1
#endif
#ifndef T
#define T float
#endif
#define DIMS(p) {p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7}
#ifndef D0
#define D0 1
#endif
#ifndef D1
#define D1 1
#endif
#ifndef D2
#define D2 1
#endif
#ifndef D3
#define D3 1
#endif
#ifndef D4
#define D4 1
#endif
#ifndef D5
#define D5 1
#endif
#ifndef D6
#define D6 1
#endif
#ifndef D7
#define D7 1
#endif

// The offset of linear output index i along strides s (shape D, last axis fastest).
#define OFFSET_OF(i, s, result)                                                          \
    do {                                                                                 \
        const long dims_[8] = DIMS(D);                                                   \
        long rest_ = (i), off_ = 0;                                                      \
        for (int k_ = RANK - 1; k_ >= 0; k_--) {                                         \
            off_ += (rest_ % dims_[k_]) * (s)[k_];                                       \
            rest_ /= dims_[k_];                                                          \
        }                                                                                \
        (result) = off_;                                                                 \
    } while (0)

float unary_one(const float x)
{
    switch (OP) {
    case 0: return -x;
    case 1: return fabs(x);
    case 2: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case 3: return sqrt(x);
    case 4: return x * x;
    case 5: return exp(x);
    case 6: return log(x);
    case 7: return log1p(x);
    case 8: return (x > 0.0f || is_nan(x)) ? x : 0.0f;
    case 9: return 1.0f / (1.0f + exp(-x));
    case 10: return tanh(x);
    case 11: return 1.0f / x;
    case 12: return x == 0.0f ? 1.0f : 0.0f;
    case 13: return floor(x);
    case 14: return rint(x);
    case 15: return erf(x);
    case 16: return sin(x);
    case 17: return cos(x);
    case 18: return tan(x);
    case 19: return asin(x);
    case 20: return acos(x);
    case 21: return atan(x);
    case 22: return sinh(x);
    case 23: return cosh(x);
    case 24: return asinh(x);
    case 25: return acosh(x);
    default: return atanh(x);
    }
}

float binary_one(const float a, const float b)
{
    switch (OP) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return pow(a, b);
    case 5: return max_nan(a, b);
    case 6: return (a < b || is_nan(a)) ? a : b;
    case 7: return a == b ? 1.0f : 0.0f;
    case 8: return a != b ? 1.0f : 0.0f;
    case 9: return a < b ? 1.0f : 0.0f;
    case 10: return a <= b ? 1.0f : 0.0f;
    case 11: return a > b ? 1.0f : 0.0f;
    case 12: return a >= b ? 1.0f : 0.0f;
    case 13: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
    default: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
    }
}

__kernel void unary(__global float *out, __global const float *x, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = unary_one(x[i]);
}

#ifdef SA0
// a or b may be a scalar argument (A_SCALAR / B_SCALAR): then its pointer is unused
__kernel void binary(__global float *out, __global const float *a, __global const float *b,
                     const float a_scalar, const float b_scalar, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const long sa[8] = DIMS(SA), sb[8] = DIMS(SB);
    long oa, ob;
    OFFSET_OF(i, sa, oa);
    OFFSET_OF(i, sb, ob);
    out[i] = binary_one(A_SCALAR ? a_scalar : a[oa], B_SCALAR ? b_scalar : b[ob]);
}
#endif

#ifdef SC0
__kernel void where_select(__global float *out, __global const float *c, __global const float *a,
                           __global const float *b, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const long sc[8] = DIMS(SC), sa[8] = DIMS(SA), sb[8] = DIMS(SB);
    long oc, oa, ob;
    OFFSET_OF(i, sc, oc);
    OFFSET_OF(i, sa, oa);
    OFFSET_OF(i, sb, ob);
    out[i] = c[oc] != 0.0f ? a[oa] : b[ob];
}
#endif

#ifdef R0
// out element i (the kept axes, shape D with 1 on reduced axes) reduces the R-shaped block of
// x (reduced sizes R0..R7, 1 on kept axes) at x strides XS0..XS7
__kernel void reduce(__global float *out, __global const float *x, const int n, const int count)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const long xs[8] = DIMS(XS), rd[8] = DIMS(R);
    long base;
    OFFSET_OF(i, xs, base);
    float acc = OP == 0 ? 0.0f : (OP == 3 ? 1.0f : x[base]);
    for (int r = 0; r < count; r++) {
        long rest = r, off = base;
        for (int k = RANK - 1; k >= 0; k--) {
            off += (rest % rd[k]) * xs[k];
            rest /= rd[k];
        }
        const float v = x[off];
        if (OP == 0) acc += v;
        else if (OP == 3) acc *= v;
        else if (!is_nan(acc) && (is_nan(v) || (OP == 1 ? v > acc : v < acc))) acc = v;
    }
    out[i] = acc;
}
#endif

#ifdef S0
// gather (strided_copy) and scatter-add (strided_add) of shape D at strides S0..S7
__kernel void strided_copy(__global T *out, __global const T *x, const int offset, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const long s[8] = DIMS(S);
    long o;
    OFFSET_OF(i, s, o);
    out[i] = x[offset + o];
}

__kernel void strided_add(__global float *out, __global const float *x, const int offset,
                          const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const long s[8] = DIMS(S);
    long o;
    OFFSET_OF(i, s, o);
    out[offset + o] += x[i];
}
#endif

// x (outer, n, inner) at indices (m) -> out (outer, m, inner)
__kernel void take_float(__global float *out, __global const float *x, __global const int *indices,
                         const int n, const int inner, const int m, const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int q = i % inner, j = (i / inner) % m, p = i / (inner * m);
    const int at = indices[j] < 0 ? indices[j] + n : indices[j];
    out[i] = x[((long)p * n + at) * inner + q];
}

// dx (outer, n, inner) += dout (outer, m, inner): one work-item per (p, q) walks the indices in
// order, so repeated indices add without atomics
__kernel void take_backward(__global float *dx, __global const float *dout,
                            __global const int *indices, const int n, const int inner, const int m,
                            const int total)
{
    const int i = get_global_id(0);
    if (i >= total) return;
    const int q = i % inner, p = i / inner;
    for (int j = 0; j < m; j++) {
        const int at = indices[j] < 0 ? indices[j] + n : indices[j];
        dx[((long)p * n + at) * inner + q] += dout[((long)p * m + j) * inner + q];
    }
}

__kernel void arg_reduce(__global int *out, __global const float *x, const int rows, const int k,
                         const int argmin)
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    __global const float *row = x + (long)r * k;
    int best = 0;
    for (int j = 1; j < k && !is_nan(row[best]); j++) {
        const float v = row[j];
        if (is_nan(v) || (argmin ? v < row[best] : v > row[best])) best = j;
    }
    out[r] = best;
}

__kernel void float_to_int(__global int *out, __global const float *x, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = (int)x[i];
}

__kernel void int_to_float(__global float *out, __global const int *x, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = (float)x[i];
}

__kernel void arange_float(__global float *out, const float start, const float step, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = start + (float)i * step;
}

__kernel void arange_int(__global int *out, const int start, const int step, const int n)
{
    const int i = get_global_id(0);
    if (i < n) out[i] = start + i * step;
}
