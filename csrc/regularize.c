/* Keras's L1/L2 penalties and their gradients, and the norm constraints. The penalty is a
 * whole-tensor reduction (double, OpenMP reduction); the gradient an elementwise pass under
 * `omp simd`; the constraint one norm per (outer, inner) vector, the vectors on the threads. */
#include <math.h>

#include "internal/parallel.h"
#include "regularize.h"

void minidl_l1_l2_penalty(float *out, const float *w, int64_t n, float l1, float l2, int accumulate)
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

void minidl_l1_l2_gradient(float *g, const float *w, int64_t n, float l1, float l2)
{
    const float two_l2 = 2.0f * l2;
#pragma omp parallel for simd schedule(static) if (n >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t i = 0; i < n; i++) {
        float x = w[i];
        float sign = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); /* NaN stays NaN */
        g[i] += l1 * sign + two_l2 * x;
    }
}

void minidl_norm_constraint(float *w, int64_t outer, int64_t reduce, int64_t inner, float min_value,
                            float max_value, float rate)
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
