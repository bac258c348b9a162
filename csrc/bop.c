/* larq's Bop update (bop.h). The fast version is a branch-free select the compiler vectorizes
 * for the generic target, run block by block on the OpenMP threads above the threading
 * threshold like the other optimizer updates; the reference twin spells out larq's
 * sign(-sign(w m - threshold) w) literally.
 *
 * No FMA: m + gamma (g - m) is rounded after the multiply, as numpy and TensorFlow compute it,
 * so every backend takes the same flip decisions (this file has no target pragma, and the
 * generic x86-64 target has no FMA to contract into). */
#include "bop.h"
#include "internal/parallel.h"

static void bop_range(float *w, float *m, const float *g, float gamma, float threshold, int64_t lo,
                      int64_t hi)
{
    for (int64_t i = lo; i < hi; i++) {
        const float wi = w[i];
        const float mi = m[i] + gamma * (g[i] - m[i]);
        const float d = wi * mi - threshold;
        /* t = -sign(d) w: -w where d > 0, w where d < 0, 0 where d == 0, NaN where d is NaN */
        const float t = d > 0.0f ? -wi : (d < 0.0f ? wi : d * 0.0f);
        m[i] = mi;
        /* larq's sign: +1 for t >= 0 (0 included), -1 below, NaN kept */
        w[i] = t >= 0.0f ? 1.0f : (t < 0.0f ? -1.0f : t);
    }
}

void minidl_bop_update(float *w, float *m, const float *g, float gamma, float threshold, int64_t n)
{
    if (n < MINIDL_PARALLEL_MIN) {
        bop_range(w, m, g, gamma, threshold, 0, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(minidl_num_threads())
    for (int64_t b = 0; b < minidl_blocks(n); b++)
        bop_range(w, m, g, gamma, threshold, b * MINIDL_BLOCK, b * MINIDL_BLOCK + minidl_block_len(n, b));
}

static float sign_of(float x) /* tf.sign: -1, 0, +1, NaN kept */
{
    if (x > 0.0f) return 1.0f;
    if (x < 0.0f) return -1.0f;
    return x == 0.0f ? 0.0f : x;
}

void minidl_bop_update_reference(float *w, float *m, const float *g, float gamma, float threshold,
                                 int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float step = gamma * (g[i] - m[i]);
        m[i] = m[i] + step;
        float t = -sign_of(w[i] * m[i] - threshold) * w[i];
        w[i] = sign_of(sign_of(t) + 0.1f); /* lq.math.sign: sign(sign(x) + 0.1) */
    }
}
