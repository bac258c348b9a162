/* The threshold packing of binary_threshold.h. One pass over z, a word of 32 channels at a
 * time; pixels are split across the OpenMP threads above the threading threshold. The row
 * kernel is the active ISA's (binary_threshold_{avx2,avx512}.c, or the generic one here). */
#include "binary_threshold.h"
#include "internal/binary_threshold_kernels.h"
#include "internal/parallel.h"

void binary_threshold_rows_generic(uint32_t *bits, const float *z, const float *lo, const float *hi, int64_t p0,
                      int64_t p1, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t p = p0; p < p1; p++) {
        const float *row = z + p * c;
        for (int64_t k = 0; k < cw; k++) {
            const int64_t base = 32 * k, end = c - base < 32 ? c - base : 32;
            uint32_t word = 0;
            for (int64_t b = 0; b < end; b++) {
                const float v = row[base + b];
                const uint32_t inside = (lo[base + b] <= v) & (v <= hi[base + b]);
                word |= (inside ^ 1u) << b;
            }
            bits[p * cw + k] = word;
        }
    }
}

/* Values below which the packing runs on one thread: it compares and packs at a few values per
 * cycle, so under 256 K values waking the second thread (passive OpenMP waiting) costs more
 * than it saves (zoo.binarynet()'s 5x5x128 and 3x3x256 maps at batch 32: 75 and 22 us on one
 * thread, 127 and 72 us on two), while the 28x28x64 and 10x10x128 ones gain from two. */
#define BINARY_PACK_PARALLEL_MIN (1 << 18)

void minidl_binary_pack_thresholds(int32_t *bits, const float *z, const float *bounds, int64_t pixels,
                                   int64_t c)
{
    const float *lo = bounds, *hi = bounds + c;
    void (*rows)(uint32_t *, const float *, const float *, const float *, int64_t, int64_t, int64_t) =
        binary_threshold_rows_generic;
    switch (minidl_cpu_isa()) {
    case MINIDL_ISA_AVX512: rows = binary_threshold_rows_avx512; break;
    case MINIDL_ISA_AVX2: rows = binary_threshold_rows_avx2; break;
    default: break;
    }
    const int64_t blocks = minidl_blocks(pixels * c);
    const int64_t per_block = (pixels + blocks - 1) / (blocks > 0 ? blocks : 1);
#pragma omp parallel for schedule(static) if (pixels * c >= BINARY_PACK_PARALLEL_MIN) num_threads(minidl_num_threads())
    for (int64_t block = 0; block < blocks; block++) {
        int64_t p0 = block * per_block, p1 = p0 + per_block < pixels ? p0 + per_block : pixels;
        if (p0 < p1)
            rows((uint32_t *)bits, z, lo, hi, p0, p1, c);
    }
}

void minidl_binary_pack_thresholds_reference(int32_t *bits, const float *z, const float *bounds,
                                             int64_t pixels, int64_t c)
{
    const int64_t cw = (c + 31) / 32;
    for (int64_t i = 0; i < pixels * cw; i++)
        bits[i] = 0;
    for (int64_t p = 0; p < pixels; p++)
        for (int64_t ch = 0; ch < c; ch++) {
            float v = z[p * c + ch];
            int positive = bounds[ch] <= v && v <= bounds[c + ch];
            if (!positive)
                ((uint32_t *)bits)[p * cw + ch / 32] |= 1u << (ch % 32);
        }
}
