/* Gaussian noise and spatial dropout's channel mask. The noise is plain C on libm: it runs
 * once per training step of a GaussianNoise layer, and Box-Muller's log / cos / sin dominate. */
#include <math.h>

#include "noise.h"
#include "internal/parallel.h"
#include "internal/philox.h"

#define TWO_PI 6.28318530717958647692f

/* Box-Muller on two words: u1 in (0, 1] (never log 0), u2 in [0, 1), each with 24 bits. */
static inline void box_muller(float *z0, float *z1, uint32_t w0, uint32_t w1)
{
    float u1 = (float)((w0 >> 8) + 1u) * (1.0f / 16777216.0f);
    float u2 = (float)(w1 >> 8) * (1.0f / 16777216.0f);
    float r = sqrtf(-2.0f * logf(u1));
    *z0 = r * cosf(TWO_PI * u2);
    *z1 = r * sinf(TWO_PI * u2);
}

void minidl_gaussian_noise(float *out, const float *x, float stddev, uint64_t seed, int64_t n)
{
    int64_t counters = (n + 3) / 4;
#pragma omp parallel for schedule(static) if (n >= MINIDL_PARALLEL_MIN / 8) num_threads(minidl_num_threads())
    for (int64_t t = 0; t < counters; t++) {
        uint32_t w[4];
        float z[4];
        philox4x32_10(w, (uint32_t)t, (uint32_t)((uint64_t)t >> 32), (uint32_t)seed, (uint32_t)(seed >> 32));
        box_muller(&z[0], &z[1], w[0], w[1]);
        box_muller(&z[2], &z[3], w[2], w[3]);
        for (int j = 0; j < 4 && 4 * t + j < n; j++) out[4 * t + j] = x[4 * t + j] + stddev * z[j];
    }
}

void minidl_channel_mask_multiply(float *out, const float *x, const float *mask, int64_t n, int64_t k,
                                  int64_t c)
{
#pragma omp parallel for schedule(static) if (n * k * c >= MINIDL_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t row = 0; row < n * k; row++) {
        const float *m = mask + (row / k) * c;
        const float *xr = x + row * c;
        float *o = out + row * c;
#pragma omp simd
        for (int64_t j = 0; j < c; j++) o[j] = xr[j] * m[j];
    }
}
