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

/* The strided element-wise ops below walk at most this many axes after coalescing. */
#define MAX_AXES 16

/* Merges neighbouring axes that every operand walks as one (stride[k] == stride[k+1] *
 * shape[k+1]; the output is contiguous) and drops axes of length 1, writing the result to
 * shape_out / strides_out[i] (count operands, each `rank` long on input). An image batch
 * (N, H, W, 3) plus a scalar or a same-shape tensor becomes one axis of N*H*W*3 elements:
 * without this the inner loop ran 3 elements long behind a division-heavy row offset, 6x
 * slower than memory allows. Returns the new rank (at least 1), or -1 when rank exceeds
 * MAX_AXES (the caller then walks the axes as given). */
static int coalesce(int rank, const int64_t *shape, int count, const int64_t *const *strides,
                    int64_t *shape_out, int64_t strides_out[][MAX_AXES])
{
    if (rank > MAX_AXES)
        return -1;
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (shape[k] == 1)
            continue;
        int merge = r > 0;
        for (int i = 0; i < count && merge; i++)
            merge = strides_out[i][r - 1] == strides[i][k] * shape[k];
        if (merge) {
            shape_out[r - 1] *= shape[k];
            for (int i = 0; i < count; i++) strides_out[i][r - 1] = strides[i][k];
        } else {
            shape_out[r] = shape[k];
            for (int i = 0; i < count; i++) strides_out[i][r] = strides[i][k];
            r++;
        }
    }
    if (r == 0) {   // every axis has length 1: one element
        shape_out[0] = 1;
        for (int i = 0; i < count; i++) strides_out[i][0] = 0;
        r = 1;
    }
    return r;
}

/* Elements [e0, e1) of out (rows of w elements), the op chosen once outside the loops so
 * that each inner loop is a plain unit- or zero-stride loop the compiler vectorizes. */
#define BINARY_CASE(OP, EXPR)                                                               \
    case OP:                                                                                \
        for (int64_t r = e0 / w; r * w < e1; r++) {                                         \
            const int64_t j0 = r * w < e0 ? e0 - r * w : 0;                                \
            const int64_t j1 = (r + 1) * w > e1 ? e1 - r * w : w;                          \
            const float *pa = a + row_offset(r, rank, shape, sa);                           \
            const float *pb = b + row_offset(r, rank, shape, sb);                           \
            float *po = out + r * w;                                                         \
            if (ia == 1 && ib == 1) {                                                        \
                for (int64_t j = j0; j < j1; j++) { float x = pa[j], y = pb[j]; po[j] = (EXPR); } \
            } else if (ia == 1 && ib == 0) {                                                 \
                const float y = pb[0];                                                       \
                for (int64_t j = j0; j < j1; j++) { float x = pa[j]; po[j] = (EXPR); }     \
            } else if (ia == 0 && ib == 1) {                                                 \
                const float x = pa[0];                                                       \
                for (int64_t j = j0; j < j1; j++) { float y = pb[j]; po[j] = (EXPR); }     \
            } else {                                                                         \
                for (int64_t j = j0; j < j1; j++) {                                          \
                    float x = pa[j * ia], y = pb[j * ib];                                    \
                    po[j] = (EXPR);                                                          \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        break;

static void binary_range(float *out, const float *a, const float *b, int rank, const int64_t *shape,
                         const int64_t *sa, const int64_t *sb, int op, int64_t e0, int64_t e1)
{
    const int64_t w = shape[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
    switch (op) {
    BINARY_CASE(B_ADD, x + y)
    BINARY_CASE(B_SUB, x - y)
    BINARY_CASE(B_MUL, x * y)
    BINARY_CASE(B_DIV, x / y)
    BINARY_CASE(B_MAX, (x != x || x > y) ? x : y)   /* NaN wins, as numpy.maximum */
    BINARY_CASE(B_MIN, (x != x || x < y) ? x : y)
    default:
        for (int64_t r = e0 / w; r * w < e1; r++) {
            const int64_t j0 = r * w < e0 ? e0 - r * w : 0;
            const int64_t j1 = (r + 1) * w > e1 ? e1 - r * w : w;
            const float *pa = a + row_offset(r, rank, shape, sa);
            const float *pb = b + row_offset(r, rank, shape, sb);
            for (int64_t j = j0; j < j1; j++) out[r * w + j] = binary_one(pa[j * ia], pb[j * ib], op);
        }
    }
}
#undef BINARY_CASE

/* Splits n elements over the threads in contiguous ranges (whole MINIDL_BLOCKs) when n is
 * large enough to pay for the fork; body(e0, e1) does one range. */
#define SPLIT_ELEMENTS(n, body)                                                              \
    do {                                                                                     \
        if ((n) >= MINIDL_PARALLEL_MIN) {                                                    \
            _Pragma("omp parallel")                                                          \
            {                                                                                \
                const int64_t blocks_ = minidl_blocks(n);                                    \
                const int t_ = omp_get_thread_num(), nt_ = omp_get_num_threads();            \
                int64_t e0 = blocks_ * t_ / nt_ * MINIDL_BLOCK;                              \
                int64_t e1 = blocks_ * (t_ + 1) / nt_ * MINIDL_BLOCK;                        \
                if (e1 > (n)) e1 = (n);                                                      \
                if (e0 < e1) body;                                                           \
            }                                                                                \
        } else {                                                                             \
            const int64_t e0 = 0, e1 = (n);                                                  \
            body;                                                                            \
        }                                                                                    \
    } while (0)

/* rank 0 is one element: treat it as shape (1,) */
static const int64_t ONE[1] = {1}, ZERO[1] = {0};

void minidl_tensor_binary(float *out, const float *a, const float *b, int rank, const int64_t *shape,
                          const int64_t *a_strides, const int64_t *b_strides, int op)
{
    if (rank == 0) {
        out[0] = binary_one(a[0], b[0], op);
        return;
    }
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= shape[k];
    if (n == 0)
        return;
    int64_t merged_shape[MAX_AXES], merged[2][MAX_AXES];
    const int64_t *given[2] = {a_strides, b_strides};
    const int merged_rank = coalesce(rank, shape, 2, given, merged_shape, merged);
    if (merged_rank > 0) {
        rank = merged_rank;
        shape = merged_shape;
        a_strides = merged[0];
        b_strides = merged[1];
    }
    SPLIT_ELEMENTS(n, binary_range(out, a, b, rank, shape, a_strides, b_strides, op, e0, e1));
}

static void where_range(float *out, const float *c, const float *a, const float *b, int rank,
                        const int64_t *shape, const int64_t *sc, const int64_t *sa,
                        const int64_t *sb, int64_t e0, int64_t e1)
{
    const int64_t w = shape[rank - 1], ic = sc[rank - 1], ia = sa[rank - 1], ib = sb[rank - 1];
    for (int64_t r = e0 / w; r * w < e1; r++) {
        const int64_t j0 = r * w < e0 ? e0 - r * w : 0;
        const int64_t j1 = (r + 1) * w > e1 ? e1 - r * w : w;
        const float *pc = c + row_offset(r, rank, shape, sc);
        const float *pa = a + row_offset(r, rank, shape, sa);
        const float *pb = b + row_offset(r, rank, shape, sb);
        float *po = out + r * w;
        if (ic == 1 && ia == 1 && ib == 1) {
            for (int64_t j = j0; j < j1; j++) po[j] = pc[j] != 0.0f ? pa[j] : pb[j];
        } else {
            for (int64_t j = j0; j < j1; j++) po[j] = pc[j * ic] != 0.0f ? pa[j * ia] : pb[j * ib];
        }
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
    int64_t n = 1;
    for (int k = 0; k < rank; k++) n *= shape[k];
    if (n == 0)
        return;
    int64_t merged_shape[MAX_AXES], merged[3][MAX_AXES];
    const int64_t *given[3] = {c_strides, a_strides, b_strides};
    const int merged_rank = coalesce(rank, shape, 3, given, merged_shape, merged);
    if (merged_rank > 0) {
        rank = merged_rank;
        shape = merged_shape;
        c_strides = merged[0];
        a_strides = merged[1];
        b_strides = merged[2];
    }
    SPLIT_ELEMENTS(n, where_range(out, c, a, b, rank, shape, c_strides, a_strides, b_strides, e0, e1));
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
