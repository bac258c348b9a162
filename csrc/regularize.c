/* Keras's L1/L2 penalties and their gradients, and the norm constraints. The penalty is a
 * whole-tensor reduction (double, OpenMP reduction); the gradient an elementwise pass under
 * `omp simd`; the constraint one norm per (outer, inner) vector, the vectors on the threads. */
#include <math.h>

#include "internal/parallel.h"
#include "regularize.h"
#include "status.h"

void minidl_l1_l2_penalty(float *out, const float *w, float l1, float l2, int accumulate, int64_t n)
{
    double abs_sum = 0.0, sq_sum = 0.0;
#pragma omp parallel for simd schedule(static) reduction(+ : abs_sum, sq_sum) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < n; i++) {
        double x = w[i];
        abs_sum += fabs(x);
        sq_sum += x * x;
    }
    double value = (double)l1 * abs_sum + (double)l2 * sq_sum;
    out[0] = (float)(accumulate ? out[0] + value : value);
}

void minidl_l1_l2_gradient(float *g, const float *w, float l1, float l2, int64_t n)
{
    const float two_l2 = 2.0f * l2;
#pragma omp parallel for simd schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < n; i++) {
        float x = w[i];
        float sign = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); /* NaN stays NaN */
        g[i] += l1 * sign + two_l2 * x;
    }
}

void minidl_norm_constraint(float *w, float min_value, float max_value, float rate, int64_t outer, int64_t reduce,
                            int64_t inner)
{
#pragma omp parallel for schedule(static) if (outer * reduce * inner >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t v = 0; v < outer * inner; v++) {
        float *base = w + (v / inner) * reduce * inner + v % inner;
        double sq = 0.0;
        for (int64_t r = 0; r < reduce; r++) sq += (double)base[r * inner] * base[r * inner];
        double norm = sqrt(sq);
        double clipped = norm < min_value ? min_value : (norm > max_value ? max_value : norm);
        if (norm != norm) clipped = norm;
        float factor = (float)((rate * clipped + (1.0 - rate) * norm) / (1e-7 + norm));
        for (int64_t r = 0; r < reduce; r++) base[r * inner] *= factor;
    }
}

/* n (m, k) = the normalized vectors, inv (m) = 1 / their floored norms; returns whether the
 * floor is inactive per vector in inv's sign (negative: floored, the norm then constant). */
static void orthogonal_normalize(float *n, float *inv, const float *w, int64_t m, int64_t k, int64_t sv,
                                 int64_t se)
{
#pragma omp parallel for schedule(static) if (m * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < m; i++) {
        double sq = 0.0;
        for (int64_t t = 0; t < k; t++) sq += (double)w[i * sv + t * se] * w[i * sv + t * se];
        double r = 1.0 / sqrt(sq > 1e-12 ? sq : 1e-12);
        for (int64_t t = 0; t < k; t++) n[i * k + t] = (float)(w[i * sv + t * se] * r);
        inv[i] = (float)(sq > 1e-12 ? r : -r);
    }
}

static double dot_rows(const float *a, const float *b, int64_t k)
{
    double s = 0.0;
    for (int64_t t = 0; t < k; t++) s += (double)a[t] * b[t];
    return s;
}

static double orthogonal_scale(int64_t m, float factor)
{
    return m > 1 ? (double)factor * 0.5 / ((double)m * (m - 1) * 0.5) : 0.0;
}

int minidl_orthogonal_penalty(float *out, const float *w, float factor, int accumulate, int64_t m, int64_t k,
                              int64_t sv, int64_t se, float *scratch, int64_t scratch_len)
{
    if (scratch_len < m * k + m) return MINIDL_SCRATCH_TOO_SMALL;
    float *n = scratch, *inv = scratch + m * k;
    orthogonal_normalize(n, inv, w, m, k, sv, se);
    double total = 0.0;
#pragma omp parallel for schedule(dynamic) reduction(+ : total) if (m * m * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++)
            if (j != i) total += fabs(dot_rows(n + i * k, n + j * k, k));
    double value = orthogonal_scale(m, factor) * total;
    out[0] = (float)(accumulate ? out[0] + value : value);
    return MINIDL_OK;
}

int minidl_orthogonal_gradient(float *g, const float *w, float factor, int64_t m, int64_t k, int64_t sv,
                               int64_t se, float *scratch, int64_t scratch_len)
{
    if (scratch_len < 2 * m * k + m) return MINIDL_SCRATCH_TOO_SMALL;
    float *n = scratch, *inv = scratch + m * k, *dn = scratch + m * k + m;
    orthogonal_normalize(n, inv, w, m, k, sv, se);
    /* d/dn_i of c * sum over i != j of |n_i . n_j| counts G_ij and G_ji: 2c sum_j sign(G_ij) n_j */
    double c2 = 2.0 * orthogonal_scale(m, factor);
#pragma omp parallel for schedule(dynamic) if (m * m * k >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < m; i++) {
        const float *ni = n + i * k;
        float *di = dn + i * k;
        for (int64_t t = 0; t < k; t++) di[t] = 0.0f;
        for (int64_t j = 0; j < m; j++) {
            if (j == i) continue;
            double d = dot_rows(ni, n + j * k, k);
            float sign = d > 0.0 ? 1.0f : (d < 0.0 ? -1.0f : 0.0f);
            const float *nj = n + j * k;
            for (int64_t t = 0; t < k; t++) di[t] += sign * nj[t];
        }
        /* through the normalization: (dn - (dn . n) n) / norm; a floored norm is a constant */
        double along = inv[i] < 0.0f ? 0.0 : dot_rows(di, ni, k);
        double r = fabs((double)inv[i]);
        for (int64_t t = 0; t < k; t++) g[i * sv + t * se] += (float)(r * c2 * (di[t] - along * ni[t]));
    }
    return MINIDL_OK;
}
