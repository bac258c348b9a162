// Keras 3's Equalization and ContrastLimitedAdaptiveHistogramEqualization (CLAHE), and
// RandomPerspective's transforms. Formulas and float32 order follow the numpy reference
// (minidl/backends/numpy_ops/equalize.py, perspective.py) and csrc/image_equalize.c,
// csrc/image_perspective.c; contraction to fma is off so that the roundings are those.
#pragma OPENCL FP_CONTRACT OFF

#define LEVELS 256   // CLAHE's histogram: Keras's 256 levels of 0..255 (not tunable)

// A value's bin: the float clamped to [0, bins - 1] then truncated (Keras's int32 cast and
// clip); a NaN falls in bin 0.
int bin_of(const float scaled, const int bins)
{
    if (!(scaled > 0.0f)) return 0;
    const float top = (float)(bins - 1);
    return (int)(scaled < top ? scaled : top);
}

// hist (c, bins) = 0: one work-item per count.
__kernel void equalize_clear(__global int *hist, const int count)
{
    const int i = get_global_id(0);
    if (i < count) hist[i] = 0;
}

// hist (c, bins) += the bins of x (pixels, c) scaled to 0..255 (v * scale + offset): one
// work-item per pixel, atomic increments (a channel's counts come from the whole batch).
__kernel void equalize_histogram(__global int *hist, __global const float *x, const float scale,
                                 const float offset, const int bins, const long pixels, const int c)
{
    const long p = get_global_id(0);
    if (p >= pixels) return;
    for (int k = 0; k < c; ++k) {
        const float v = x[p * c + k] * scale + offset;
        atomic_inc(&hist[k * bins + bin_of((v * (float)(bins - 1)) / 255.0f, bins)]);
    }
}

// The same counts, a run of `chunk` pixels per work-item: each channel counted in a private
// table (bins <= LEVELS), then added to hist, one atomic per bin the run filled. The CPU
// profile's kernel (profiles.py: equalize_chunk): per-pixel atomics on 3 x 256 counters made
// every increment of a 128-image batch contend for a few cache lines on PoCL.
__kernel void equalize_histogram_chunks(__global int *hist, __global const float *x,
                                        const float scale, const float offset, const int bins,
                                        const long pixels, const int c, const int chunk)
{
    const long first = get_global_id(0) * (long)chunk;
    if (first >= pixels) return;
    const long end = first + chunk < pixels ? first + chunk : pixels;
    int counts[LEVELS];
    for (int k = 0; k < c; ++k) {
        for (int b = 0; b < bins; ++b) counts[b] = 0;
        for (long p = first; p < end; ++p) {
            const float v = x[p * c + k] * scale + offset;
            counts[bin_of((v * (float)(bins - 1)) / 255.0f, bins)]++;
        }
        for (int b = 0; b < bins; ++b)
            if (counts[b]) atomic_add(&hist[k * bins + b], counts[b]);
    }
}

// lut (c, bins + 1) from hist: the look-up table, and at [bins] 1 when the channel is
// equalized (it fills more than one bin), else 0. One work-item per channel.
__kernel void equalize_tables(__global float *lut, __global const int *hist, const int bins,
                              const int c)
{
    const int k = get_global_id(0);
    if (k >= c) return;
    __global const int *h = hist + k * bins;
    __global float *table = lut + k * (bins + 1);
    int nonzero = 0;
    long total = 0, cdf_min = -1, cdf = 0;
    for (int b = 0; b < bins; ++b) {
        nonzero += h[b] != 0;
        total += h[b];
        if (cdf_min < 0 && total > 0) cdf_min = total;
    }
    table[bins] = nonzero > 1 ? 1.0f : 0.0f;
    const long denominator = total - cdf_min == 0 ? 1 : total - cdf_min;
    for (int b = 0; b < bins; ++b) {
        cdf += h[b];
        // Keras (torch) divides the int64 counts in float32 and rounds half to even
        const float v = rint((float)((cdf - cdf_min) * 255) / (float)denominator);
        table[b] = clamp(v, 0.0f, 255.0f);
    }
}

// out (pixels, c) = each value through its channel's table (or kept); one work-item per value.
__kernel void equalize_apply(__global float *out, __global const float *x,
                             __global const float *lut, const float scale, const float offset,
                             const float back_scale, const float back_offset, const int bins,
                             const long count, const int c)
{
    const long i = get_global_id(0);
    if (i >= count) return;
    __global const float *table = lut + (i % c) * (bins + 1);
    const float v = x[i] * scale + offset;
    const float e = table[bins] != 0.0f ? table[bin_of((v / 255.0f) * (float)(bins - 1), bins)] : v;
    out[i] = e * back_scale + back_offset;
}

// Keras's _transform_value_range to 0..255 and back (skipped for value_range (0, 255)).
float clahe_in(const float x, const float low, const float high, const int identity)
{
    return identity ? x : ((x - low) / (high - low)) * 255.0f + 0.0f;
}

int level_of(const float v)
{
    if (!(v > 0.0f)) return 0;
    return v < 255.0f ? (int)v : 255;
}

// cdfs (n, grid_h, grid_w, c, 256): one work-item per (image, tile, channel) reads its tile's
// counts (clahe_histogram) and writes the clipped CDF, not yet normalised:
// clahe_apply normalises the four values each pixel reads (its first value is the minimum),
// which costs fewer divisions than normalising all 256 levels of every tile. Keras's torch
// backend counts in int64, so its clip limit is truncated to an integer (`limit`).
// hist (n, grid_h, grid_w, c, 256) += the levels of each tile (the image padded by its edge
// pixels to whole tiles): one work-item per padded pixel and channel, atomic increments
// (cleared before by equalize_clear). Counting a tile in one work-item serialized up to its
// area (and stalled Mesa's llvmpipe past 65,000 pixels); this spreads it over the device.
__kernel void clahe_histogram(__global int *hist, __global const float *x, const float low,
                              const float high, const int identity, const int grid_h,
                              const int grid_w, const int tile_h, const int tile_w, const int n,
                              const int h, const int w, const int c, const long total)
{
    const long item = get_global_id(0);
    if (item >= total) return;
    const int k = (int)(item % c);
    const long pixel = item / c;
    const int padded_w = grid_w * tile_w, padded_h = grid_h * tile_h;
    const int x0 = (int)(pixel % padded_w), y = (int)(pixel / padded_w % padded_h);
    const int b = (int)(pixel / padded_w / padded_h);
    const long at = (((long)b * h + min(y, h - 1)) * w + min(x0, w - 1)) * c + k;
    const long tile = (((long)b * grid_h + y / tile_h) * grid_w + x0 / tile_w) * c + k;
    atomic_inc(&hist[tile * LEVELS + level_of(clahe_in(x[at], low, high, identity))]);
}

__kernel void clahe_tiles(__global float *cdfs, __global const int *counts, const float clip_limit,
                          const float limit, const int grid_h, const int grid_w, const int tile_h,
                          const int tile_w, const int n, const int c)
{
    const int item = get_global_id(0);
    if (item >= n * grid_h * grid_w * c) return;
    int hist[LEVELS];
    for (int v = 0; v < LEVELS; ++v) hist[v] = counts[(long)item * LEVELS + v];
    __global float *cdf = cdfs + (long)item * LEVELS;
    const int area = tile_h * tile_w;
    if (area <= 65536) {
        // every partial sum is a multiple of 1/256 no larger than area, which float32 holds
        // exactly: count in units of 1/256 (as csrc/image_equalize.c's tile_cdf_counted),
        // without a chain of dependent float additions
        const int cap = clip_limit > 0.0f ? (int)limit : area;
        int excess = 0;
        for (int v = 0; v < LEVELS; ++v) excess += max(hist[v] - cap, 0);
        int running = 0;
        for (int v = 0; v < LEVELS; ++v) {
            running += min(hist[v], cap) * 256 + excess;
            cdf[v] = (float)running * (1.0f / 256.0f);
        }
        return;
    }
    float excess = 0.0f;
    if (clip_limit > 0.0f)
        for (int v = 0; v < LEVELS; ++v) excess += (float)hist[v] - fmin((float)hist[v], limit);
    const float redistributed = excess / 256.0f;
    float sum = 0.0f;
    for (int v = 0; v < LEVELS; ++v) {
        sum += clip_limit > 0.0f ? fmin((float)hist[v], limit) + redistributed : (float)hist[v];
        cdf[v] = sum;
    }
}

// Row (column) i's tiles below and above (int2) and the weight of the one above: Keras's grid
// (i - tile / 2) / tile + 1 over the CDFs padded by one tile each side.
int2 grid_taps(const int i, const int tile, const int grid, float *weight)
{
    const float g = ((float)i - (float)tile / 2.0f) / (float)tile + 1.0f;
    const float g0 = floor(g);
    *weight = g - g0;
    const int r0 = (int)clamp(g0, 0.0f, (float)(grid + 1)), r1 = (int)clamp(g0 + 1.0f, 0.0f, (float)(grid + 1));
    return (int2)(clamp(r0 - 1, 0, grid - 1), clamp(r1 - 1, 0, grid - 1));
}

// Keras's normalised CDF at `level` of one tile's clipped CDF `cdf` (256,) of `area` pixels.
float normalised(__global const float *cdf, const int level, const int area)
{
    const float cdf_min = cdf[0];   // the sum never decreases
    float denominator = (float)area - cdf_min;
    if (denominator == 0.0f) denominator = 1.0f;
    return clamp(((cdf[level] - cdf_min) * 255.0f) / denominator, 0.0f, 255.0f);
}

// out (n, h, w, c): one work-item per pixel, its level looked up in its four nearest tiles.
__kernel void clahe_apply(__global float *out, __global const float *x,
                          __global const float *cdfs, const float low, const float high,
                          const int identity, const int grid_h, const int grid_w,
                          const int tile_h, const int tile_w, const int n, const int h,
                          const int w, const int c)
{
    const long pixel = get_global_id(0);
    if (pixel >= (long)n * h * w) return;
    const int x0 = pixel % w, y = pixel / w % h, b = pixel / w / h, area = tile_h * tile_w;
    float wy, wx;
    const int2 ty = grid_taps(y, tile_h, grid_h, &wy), tx = grid_taps(x0, tile_w, grid_w, &wx);
    __global const float *image = cdfs + (long)b * grid_h * grid_w * c * LEVELS;
    for (int k = 0; k < c; ++k) {
        const float v = x[pixel * c + k];
        const int level = level_of(clahe_in(v, low, high, identity));
#define CDF(row, col) normalised(image + (((long)(row) * grid_w + (col)) * c + k) * LEVELS, level, area)
        const float top = CDF(ty.x, tx.x) * (1.0f - wx) + CDF(ty.x, tx.y) * wx;
        const float bottom = CDF(ty.y, tx.x) * (1.0f - wx) + CDF(ty.y, tx.y) * wx;
#undef CDF
        const float r = top * (1.0f - wy) + bottom * wy;
        out[pixel * c + k] = identity ? r : ((r - 0.0f) / 255.0f) * (high - low) + low;
    }
}

// ---- CLAHE in two passes, the CPU profile's (minidl/backends/opencl/profiles.py,
// CpuProfile.clahe_tile_area: tiles of at most that many pixels). The passes above keep a
// 256-level table per tile and channel, cleared, counted, summed and read back by every pixel:
// for a 4 x 4 tile (a 32 x 32 image on Keras's 8 x 8 grid) that is 1 KiB of traffic for 16
// pixels, and the lookups of clahe_apply gather from tables far larger than a CPU's caches.
// Here one work-item per tile counts its tile in a private table (no atomics, no clearing of
// global memory) and writes, for every pixel that reads the tile, the tile's normalised value
// at the pixel's level into one of the pixel's four corner slots; clahe_apply_corners then
// interpolates each pixel's four slots. The numbers and the order of the float operations are
// those of clahe_tiles' integer path and clahe_apply.

// corners (n, h, w, c, 4): slot (below row, below column), (below, above), (above, below),
// (above, above) of each pixel as grid_taps names its tiles. One work-item per (image, tile,
// channel), which serially visits its own area and the pixels of the eight tiles around it.
__kernel void clahe_tile_corners(__global float *corners, __global const float *x,
                                 const float low, const float high, const int identity,
                                 const float clip_limit, const float limit, const int grid_h,
                                 const int grid_w, const int tile_h, const int tile_w,
                                 const int n, const int h, const int w, const int c)
{
    const int item = get_global_id(0);
    if (item >= n * grid_h * grid_w * c) return;
    const int k = item % c, tx = item / c % grid_w, ty = item / c / grid_w % grid_h;
    const int b = item / c / grid_w / grid_h, area = tile_h * tile_w;
    __global const float *image = x + (long)b * h * w * c + k;
    int hist[LEVELS];
    for (int v = 0; v < LEVELS; ++v) hist[v] = 0;
    for (int i = 0; i < tile_h; ++i) {   // the tile, padded by the image's edge pixels
        __global const float *row = image + (long)min(ty * tile_h + i, h - 1) * w * c;
        for (int j = 0; j < tile_w; ++j)
            ++hist[level_of(clahe_in(row[(long)min(tx * tile_w + j, w - 1) * c], low, high, identity))];
    }
    // hist becomes the running clipped count S(v); the clipped CDF at v is then, in units of
    // 1/256, 256 S(v) + (v + 1) excess: clahe_tiles' integer path (area <= 65536 here)
    const int cap = clip_limit > 0.0f ? (int)limit : area;
    int excess = 0, clipped = 0;
    for (int v = 0; v < LEVELS; ++v) {
        excess += max(hist[v] - cap, 0);
        clipped += min(hist[v], cap);
        hist[v] = clipped;
    }
    const float cdf_min = (float)(hist[0] * 256 + excess) * (1.0f / 256.0f);
    float denominator = (float)area - cdf_min;
    if (denominator == 0.0f) denominator = 1.0f;
    // The pixels reading this tile lie within one tile of it: grid_taps' tiles never decrease
    // along a row or column, so the rows (columns) that read it as their tile below (and as
    // their tile above) are ranges, found once here rather than at every pixel.
    int4 rows = (int4)(h, 0, h, 0), cols = (int4)(w, 0, w, 0);   // below [x, y), above [z, w)
    for (int y = max((ty - 1) * tile_h, 0); y < min((ty + 2) * tile_h, h); ++y) {
        float unused;
        const int2 taps = grid_taps(y, tile_h, grid_h, &unused);
        if (taps.x == ty) { rows.x = min(rows.x, y); rows.y = y + 1; }
        if (taps.y == ty) { rows.z = min(rows.z, y); rows.w = y + 1; }
    }
    for (int x0 = max((tx - 1) * tile_w, 0); x0 < min((tx + 2) * tile_w, w); ++x0) {
        float unused;
        const int2 taps = grid_taps(x0, tile_w, grid_w, &unused);
        if (taps.x == tx) { cols.x = min(cols.x, x0); cols.y = x0 + 1; }
        if (taps.y == tx) { cols.z = min(cols.z, x0); cols.w = x0 + 1; }
    }
    for (int y = min(rows.x, rows.z); y < max(rows.y, rows.w); ++y) {
        const int below = y >= rows.x && y < rows.y, above = y >= rows.z && y < rows.w;
        for (int x0 = min(cols.x, cols.z); x0 < max(cols.y, cols.w); ++x0) {
            const int left = x0 >= cols.x && x0 < cols.y, right = x0 >= cols.z && x0 < cols.w;
            const long at = ((long)y * w + x0) * c;
            const int level = level_of(clahe_in(image[at], low, high, identity));
            const float cdf = (float)(hist[level] * 256 + (level + 1) * excess) * (1.0f / 256.0f);
            const float value = clamp(((cdf - cdf_min) * 255.0f) / denominator, 0.0f, 255.0f);
            __global float *slot = corners + ((long)b * h * w * c + at + k) * 4;
            if (below && left) slot[0] = value;
            if (below && right) slot[1] = value;
            if (above && left) slot[2] = value;
            if (above && right) slot[3] = value;
        }
    }
}

// out (n, h, w, c): each value the interpolation of its four corner slots, as clahe_apply.
// One work-item per pixel.
__kernel void clahe_apply_corners(__global float *out, __global const float *corners,
                                  const float low, const float high, const int identity,
                                  const int grid_h, const int grid_w, const int tile_h,
                                  const int tile_w, const int n, const int h, const int w,
                                  const int c)
{
    const int pixel = get_global_id(0);
    if (pixel >= n * h * w) return;
    const int x0 = pixel % w, y = pixel / w % h;
    float wy, wx;
    grid_taps(y, tile_h, grid_h, &wy);
    grid_taps(x0, tile_w, grid_w, &wx);
    for (int k = 0; k < c; ++k) {
        const float4 v = vload4((long)pixel * c + k, corners);
        const float top = v.x * (1.0f - wx) + v.y * wx;
        const float bottom = v.z * (1.0f - wx) + v.w * wx;
        const float r = top * (1.0f - wy) + bottom * wy;
        out[(long)pixel * c + k] = identity ? r : ((r - 0.0f) / 255.0f) * (high - low) + low;
    }
}

// The four uniforms (word >> 8) / 2^24 of counter (s, word) under the seed.
float4 counter_uniforms(const long s, const uint word, const uint seed_lo, const uint seed_hi)
{
    const uint4 bits = philox4x32((uint4)((uint)s, word, 0u, 0u), (uint2)(seed_lo, seed_hi));
    return convert_float4(bits >> 8) * (1.0f / 16777216.0f);
}

// transforms (n, 8): RandomPerspective's row of each sample (one work-item per sample), the
// 8 x 8 system of Keras's compute_homography_matrix solved by Gaussian elimination with
// partial pivoting, in float (the cpu backend solves it in double).
__kernel void image_perspective_transforms(__global float *transforms, const float lower,
                                           const float upper, const float scale,
                                           const uint seed_lo, const uint seed_hi, const int n,
                                           const int height, const int width)
{
    const int s = get_global_id(0);
    if (s >= n) return;
    const float4 coin = counter_uniforms(s, 0u, seed_lo, seed_hi);
    const float4 u0 = counter_uniforms(s, 1u, seed_lo, seed_hi), u1 = counter_uniforms(s, 2u, seed_lo, seed_hi);
    const float u[8] = {u0.x, u0.y, u0.z, u0.w, u1.x, u1.y, u1.z, u1.w};
    const float w1 = (float)(width - 1), h1 = (float)(height - 1);
    const float start[8] = {0.0f, 0.0f, w1, 0.0f, 0.0f, h1, w1, h1};
    float t[8] = {1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f};
    if (coin.x < lower + (upper - lower) * coin.y && height > 1 && width > 1) {
        float a[8][8], rhs[8];
        for (int i = 0; i < 4; ++i) {
            const float sx = start[2 * i], sy = start[2 * i + 1];
            const float ex = sx + sx * (-0.5f * scale + scale * u[2 * i]);
            const float ey = sy + sy * (-0.5f * scale + scale * u[2 * i + 1]);
            const float r0[8] = {ex, ey, 1.0f, 0.0f, 0.0f, 0.0f, -sx * ex, -sx * ey};
            const float r1[8] = {0.0f, 0.0f, 0.0f, ex, ey, 1.0f, -sy * ex, -sy * ey};
            for (int j = 0; j < 8; ++j) { a[2 * i][j] = r0[j]; a[2 * i + 1][j] = r1[j]; }
            rhs[2 * i] = sx;
            rhs[2 * i + 1] = sy;
        }
        int solved = 1;
        for (int col = 0; col < 8 && solved; ++col) {
            int pivot = col;
            for (int r = col + 1; r < 8; ++r)
                if (fabs(a[r][col]) > fabs(a[pivot][col])) pivot = r;
            if (a[pivot][col] == 0.0f) { solved = 0; break; }
            for (int j = 0; j < 8; ++j) { const float tmp = a[col][j]; a[col][j] = a[pivot][j]; a[pivot][j] = tmp; }
            const float tmp = rhs[col]; rhs[col] = rhs[pivot]; rhs[pivot] = tmp;
            for (int r = col + 1; r < 8; ++r) {
                const float f = a[r][col] / a[col][col];
                for (int j = col; j < 8; ++j) a[r][j] -= f * a[col][j];
                rhs[r] -= f * rhs[col];
            }
        }
        if (solved) {
            for (int r = 7; r >= 0; --r) {
                float v = rhs[r];
                for (int j = r + 1; j < 8; ++j) v -= a[r][j] * rhs[j];
                rhs[r] = v / a[r][r];
            }
            for (int j = 0; j < 8; ++j) t[j] = rhs[j];
        }
    }
    for (int j = 0; j < 8; ++j) transforms[s * 8 + j] = t[j];
}
