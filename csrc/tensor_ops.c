/* The tensor ops of minidl.ops (see tensor_ops.h). Strided loops walk the output in order
 * with an odometer over the outer axes and a plain inner loop over the last one, so the
 * common cases (same shapes, a bias row, a scalar) run as unit- or zero-stride inner loops
 * that the compiler vectorizes; large outputs split their outer rows across OpenMP threads. */
#include "tensor_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_num_threads(void) { return 1; }
#endif

#include "internal/parallel.h"

enum { U_NEG, U_ABS, U_SIGN, U_SQRT, U_SQUARE, U_EXP, U_LOG, U_LOG1P, U_RELU, U_SIGMOID, U_TANH,
       U_RECIPROCAL, U_NOT, U_FLOOR, U_ROUND, U_ERF, U_SIN, U_COS, U_TAN, U_ASIN, U_ACOS, U_ATAN,
       U_SINH, U_COSH, U_ASINH, U_ACOSH, U_ATANH };
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAX, B_MIN, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,
       B_AND, B_OR };
enum { R_SUM, R_MAX, R_MIN, R_PROD };

static inline float unary_one(float x, int op)
{
    switch (op) {
    case U_NEG: return -x;
    case U_ABS: return fabsf(x);
    case U_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case U_SQRT: return sqrtf(x);
    case U_SQUARE: return x * x;
    case U_EXP: return expf(x);
    case U_LOG: return logf(x);
    case U_LOG1P: return log1pf(x);
    case U_RELU: return (x > 0.0f || x != x) ? x : 0.0f;   /* NaN stays NaN, as numpy */
    case U_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case U_TANH: return tanhf(x);
    case U_RECIPROCAL: return 1.0f / x;
    case U_NOT: return x == 0.0f ? 1.0f : 0.0f;
    case U_FLOOR: return floorf(x);
    case U_ROUND: return rintf(x);   /* to nearest, ties to even (numpy's round) */
    case U_ERF: return erff(x);
    case U_SIN: return sinf(x);
    case U_COS: return cosf(x);
    case U_TAN: return tanf(x);
    case U_ASIN: return asinf(x);
    case U_ACOS: return acosf(x);
    case U_ATAN: return atanf(x);
    case U_SINH: return sinhf(x);
    case U_COSH: return coshf(x);
    case U_ASINH: return asinhf(x);
    case U_ACOSH: return acoshf(x);
    default: return atanhf(x);       /* U_ATANH */
    }
}

static inline float binary_one(float a, float b, int op)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_POW: return powf(a, b);
    case B_MAX: return (a != a || a > b) ? a : b;   /* NaN wins, as numpy.maximum */
    case B_MIN: return (a != a || a < b) ? a : b;
    case B_EQ: return a == b;
    case B_NE: return a != b;
    case B_LT: return a < b;
    case B_LE: return a <= b;
    case B_GT: return a > b;
    case B_GE: return a >= b;
    case B_AND: return a != 0.0f && b != 0.0f;
    default: return a != 0.0f || b != 0.0f;     /* B_OR */
    }
}

void minidl_tensor_unary(float *out, const float *x, int64_t n, int op)
{
    if (n >= MINIDL_PARALLEL_MIN) {
        #pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) out[i] = unary_one(x[i], op);
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = unary_one(x[i], op);
    }
}

/* Offset of outer row `row` (the multi-index of all axes but the last) along `strides`. */
static inline int64_t row_offset(int64_t row, int rank, const int64_t *shape, const int64_t *strides)
{
    int64_t off = 0;
    for (int k = rank - 2; k >= 0; k--) {
        off += (row % shape[k]) * strides[k];
        row /= shape[k];
    }
    return off;
}

static void binary_rows(float *out, const float *a, const float *b, int rank, const int64_t *shape,
                        const int64_t *sa, const int64_t *sb, int op, int64_t r0, int64_t r1)
{
    const int64_t w = shape[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
    for (int64_t r = r0; r < r1; r++) {
        const float *pa = a + row_offset(r, rank, shape, sa);
        const float *pb = b + row_offset(r, rank, shape, sb);
        float *po = out + r * w;
        if (ia == 1 && ib == 1) {
            for (int64_t j = 0; j < w; j++) po[j] = binary_one(pa[j], pb[j], op);
        } else if (ia == 1 && ib == 0) {
            const float vb = pb[0];
            for (int64_t j = 0; j < w; j++) po[j] = binary_one(pa[j], vb, op);
        } else if (ia == 0 && ib == 1) {
            const float va = pa[0];
            for (int64_t j = 0; j < w; j++) po[j] = binary_one(va, pb[j], op);
        } else {
            for (int64_t j = 0; j < w; j++) po[j] = binary_one(pa[j * ia], pb[j * ib], op);
        }
    }
}

/* rank 0 is one element: treat it as shape (1,) */
static const int64_t ONE[1] = {1}, ZERO[1] = {0};

void minidl_tensor_binary(float *out, const float *a, const float *b, int rank, const int64_t *shape,
                          const int64_t *a_strides, const int64_t *b_strides, int op)
{
    if (rank == 0) {
        out[0] = binary_one(a[0], b[0], op);
        return;
    }
    int64_t rows = 1;
    for (int k = 0; k < rank - 1; k++) rows *= shape[k];
    const int64_t n = rows * shape[rank - 1];
    if (n >= MINIDL_PARALLEL_MIN && rows > 1) {
        #pragma omp parallel
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
            binary_rows(out, a, b, rank, shape, a_strides, b_strides, op, r0, r1);
        }
    } else {
        binary_rows(out, a, b, rank, shape, a_strides, b_strides, op, 0, rows);
    }
}

void minidl_tensor_where(float *out, const float *c, const float *a, const float *b, int rank,
                         const int64_t *shape, const int64_t *c_strides, const int64_t *a_strides,
                         const int64_t *b_strides)
{
    if (rank == 0) {
        rank = 1;
        shape = ONE;
        c_strides = a_strides = b_strides = ZERO;
    }
    int64_t rows = 1;
    for (int k = 0; k < rank - 1; k++) rows *= shape[k];
    const int64_t w = shape[rank - 1];
    for (int64_t r = 0; r < rows; r++) {
        const float *pc = c + row_offset(r, rank, shape, c_strides);
        const float *pa = a + row_offset(r, rank, shape, a_strides);
        const float *pb = b + row_offset(r, rank, shape, b_strides);
        const int64_t ic = c_strides[rank - 1], ia = a_strides[rank - 1], ib = b_strides[rank - 1];
        for (int64_t j = 0; j < w; j++)
            out[r * w + j] = pc[j * ic] != 0.0f ? pa[j * ia] : pb[j * ib];
    }
}

int minidl_tensor_reduce(float *out, const float *x, int rank, const int64_t *x_shape,
                         const int64_t *out_strides, int64_t out_n, int op)
{
    /* sums and products accumulate in double, as the numpy reference does */
    double *acc = malloc((size_t)(out_n > 0 ? out_n : 1) * sizeof(double));
    if (!acc) return -1;
    const double init = op == R_SUM ? 0.0 : (op == R_PROD ? 1.0 : NAN);
    for (int64_t i = 0; i < out_n; i++) acc[i] = init;
    if (rank == 0) {
        rank = 1;
        x_shape = ONE;
        out_strides = ZERO;
    }
    int64_t rows = 1;
    for (int k = 0; k < rank - 1; k++) rows *= x_shape[k];
    const int64_t w = x_shape[rank - 1], so = out_strides[rank - 1];
    /* max/min: the first element reaching each output seeds it */
    char *seen = (op == R_MAX || op == R_MIN) ? calloc((size_t)(out_n > 0 ? out_n : 1), 1) : NULL;
    if ((op == R_MAX || op == R_MIN) && !seen) {
        free(acc);
        return -1;
    }
    for (int64_t r = 0; r < rows; r++) {
        const float *px = x + r * w;
        double *pa = acc + row_offset(r, rank, x_shape, out_strides);
        char *ps = seen ? seen + (pa - acc) : NULL;
        for (int64_t j = 0; j < w; j++) {
            double v = px[j], *t = pa + j * so;
            switch (op) {
            case R_SUM: *t += v; break;
            case R_PROD: *t *= v; break;
            default: {
                char *s = ps + j * so;
                if (!*s) { *t = v; *s = 1; }
                else if (*t == *t && (v != v || (op == R_MAX ? v > *t : v < *t))) *t = v;
            }
            }
        }
    }
    for (int64_t i = 0; i < out_n; i++) out[i] = (float)acc[i];
    free(seen);
    free(acc);
    return 0;
}

/* Walk the multi-indices of `shape` in order, keeping offset = offset0 + i . strides. */
#define ODOMETER_BEGIN(rank, shape, strides, offset0)                                        \
    int64_t idx_[8] = {0}, off_ = (offset0), total_ = 1;                                     \
    for (int k_ = 0; k_ < (rank); k_++) total_ *= (shape)[k_];                               \
    for (int64_t lin_ = 0; lin_ < total_; lin_++) {
#define ODOMETER_END(rank, shape, strides)                                                   \
        for (int k_ = (rank) - 1; k_ >= 0; k_--) {                                           \
            off_ += (strides)[k_];                                                           \
            if (++idx_[k_] < (shape)[k_]) break;                                             \
            off_ -= (strides)[k_] * (shape)[k_];                                             \
            idx_[k_] = 0;                                                                    \
        }                                                                                    \
    }

void minidl_tensor_strided_copy(void *out, const void *x, int rank, const int64_t *shape,
                                int64_t offset, const int64_t *strides)
{
    uint32_t *o = out;
    const uint32_t *src = x;
    ODOMETER_BEGIN(rank, shape, strides, offset)
        o[lin_] = src[off_];
    ODOMETER_END(rank, shape, strides)
}

void minidl_tensor_strided_add(float *out, const float *x, int rank, const int64_t *shape,
                               int64_t offset, const int64_t *strides)
{
    ODOMETER_BEGIN(rank, shape, strides, offset)
        out[off_] += x[lin_];
    ODOMETER_END(rank, shape, strides)
}

static inline int64_t wrap(int32_t i, int64_t n) { return i < 0 ? i + n : i; }

void minidl_tensor_take(void *out, const void *x, const int32_t *indices, int64_t outer, int64_t n,
                        int64_t inner, int64_t m)
{
    uint32_t *o = out;
    const uint32_t *src = x;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t j = 0; j < m; j++)
            memcpy(o + (p * m + j) * inner, src + (p * n + wrap(indices[j], n)) * inner,
                   (size_t)inner * sizeof(uint32_t));
}

void minidl_tensor_take_backward(float *dx, const float *dout, const int32_t *indices,
                                 int64_t outer, int64_t n, int64_t inner, int64_t m)
{
    for (int64_t p = 0; p < outer; p++)
        for (int64_t j = 0; j < m; j++) {
            float *d = dx + (p * n + wrap(indices[j], n)) * inner;
            const float *g = dout + (p * m + j) * inner;
            for (int64_t i = 0; i < inner; i++) d[i] += g[i];
        }
}

void minidl_tensor_arg_reduce(int32_t *out, const float *x, int64_t rows, int64_t k, int op)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *row = x + r * k;
        int64_t best = 0;
        for (int64_t j = 1; j < k && row[best] == row[best]; j++) {
            const float v = row[j];
            if (v != v || (op == 0 ? v > row[best] : v < row[best])) best = j;
        }
        out[r] = (int32_t)best;
    }
}

void minidl_tensor_float_to_int(int32_t *out, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = (int32_t)x[i];   /* truncation toward zero */
}

void minidl_tensor_int_to_float(float *out, const int32_t *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = (float)x[i];
}

void minidl_tensor_arange_float(float *out, int64_t n, double start, double step)
{
    for (int64_t i = 0; i < n; i++) out[i] = (float)(start + (double)i * step);
}

void minidl_tensor_arange_int(int32_t *out, int64_t n, double start, double step)
{
    for (int64_t i = 0; i < n; i++) out[i] = (int32_t)(start + (double)i * step);
}
