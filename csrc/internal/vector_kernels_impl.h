/* The vector kernels of struct vector_kernels, written once in the vf_* primitives.
 *
 * Included by vector_kernels_avx2.c and vector_kernels_avx512.c after their simd_*.h header,
 * which fixes the vector width (VF_LANES) and the instructions; everything here is static, so
 * each ISA file gets its own copy and exports only its table. Every loop handles its last
 * partial vector with masked loads and stores, so no kernel reads or writes out of bounds.
 * The optimizers are in vector_kernels_optim.h, the table of all kernels in vector_kernels_table.h.
 */
#ifndef MINIDL_VECTOR_KERNELS_IMPL_H
#define MINIDL_VECTOR_KERNELS_IMPL_H

#include <math.h>

#include "philox.h"
#include "simd_math.h"
#include "vector_kernels.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------------ elementwise */

/* out = a op b elementwise; `op` is a constant at each call, so the test folds away. */
enum binary_op { BINARY_ADD, BINARY_MUL };

ALWAYS_INLINE vf binary_v(int op, vf a, vf b)
{
    return op == BINARY_ADD ? vf_add(a, b) : vf_mul(a, b);
}

ALWAYS_INLINE void binary_loop(float *out, const float *a, const float *b, int op, int64_t n)
{
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) vf_store(out + i, binary_v(op, vf_load(a + i), vf_load(b + i)));
    if (i < n) {
        int t = (int)(n - i);
        vf_store_part(out + i, binary_v(op, vf_load_part(a + i, t, 0.0f), vf_load_part(b + i, t, 0.0f)), t);
    }
}

static void add(float *out, const float *a, const float *b, int64_t n)
{
    binary_loop(out, a, b, BINARY_ADD, n);
}

static void axpby(float *out, float alpha, const float *x, float beta, const float *y, int64_t n)
{
    vf va = vf_set1(alpha), vb = vf_set1(beta);
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES)
        vf_store(out + i, vf_fmadd(va, vf_load(x + i), vf_mul(vb, vf_load(y + i))));
    if (i < n) {
        int t = (int)(n - i);
        vf r = vf_fmadd(va, vf_load_part(x + i, t, 0.0f), vf_mul(vb, vf_load_part(y + i, t, 0.0f)));
        vf_store_part(out + i, r, t);
    }
}

static void multiply(float *out, const float *a, const float *b, int64_t n)
{
    binary_loop(out, a, b, BINARY_MUL, n);
}

static void scale(float *x, float s, int64_t n)
{
    vf vs = vf_set1(s);
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) vf_store(x + i, vf_mul(vf_load(x + i), vs));
    if (i < n) {
        int t = (int)(n - i);
        vf_store_part(x + i, vf_mul(vf_load_part(x + i, t, 0.0f), vs), t);
    }
}

static void bias_add(float *out, const float *x, const float *bias, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) add(out + r * c, x + r * c, bias, c);
}

/* ------------------------------------------------------------------ activations */

#include "vector_activations.h"

static void softmax_rows(float *out, float *lse, const float *x, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        float *outr = out + r * c;
        int64_t j;
        vf vmax = vf_set1(-INFINITY);
        for (j = 0; j + VF_LANES <= c; j += VF_LANES) vmax = vf_max(vmax, vf_load(xr + j));
        if (j < c) vmax = vf_max(vmax, vf_load_part(xr + j, (int)(c - j), -INFINITY));
        float mx = vf_hmax(vmax);
        vf vm = vf_set1(mx), vsum = vf_zero();
        for (j = 0; j + VF_LANES <= c; j += VF_LANES) {
            vf e = vf_exp(vf_sub(vf_load(xr + j), vm));
            vf_store(outr + j, e);
            vsum = vf_add(vsum, e);
        }
        if (j < c) {
            int t = (int)(c - j);
            vf e = vf_keep_first(vf_exp(vf_sub(vf_load_part(xr + j, t, 0.0f), vm)), t);
            vf_store_part(outr + j, e, t);
            vsum = vf_add(vsum, e);
        }
        float total = vf_hsum(vsum);
        scale(outr, 1.0f / total, c);
        if (lse) lse[r] = mx + logf(total);
    }
}

static float dot(const float *a, const float *b, int64_t n)
{
    vf acc = vf_zero();
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) acc = vf_fmadd(vf_load(a + i), vf_load(b + i), acc);
    if (i < n) {
        int t = (int)(n - i);
        acc = vf_fmadd(vf_load_part(a + i, t, 0.0f), vf_load_part(b + i, t, 0.0f), acc);
    }
    return vf_hsum(acc);
}

static void softmax_backward_rows(float *dx, const float *dout, const float *y, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *dr = dout + r * c, *yr = y + r * c;
        float *dxr = dx + r * c;
        vf vdot = vf_set1(dot(dr, yr, c));
        int64_t j = 0;
        for (; j + VF_LANES <= c; j += VF_LANES)
            vf_store(dxr + j, vf_mul(vf_load(yr + j), vf_sub(vf_load(dr + j), vdot)));
        if (j < c) {
            int t = (int)(c - j);
            vf g = vf_mul(vf_load_part(yr + j, t, 0.0f), vf_sub(vf_load_part(dr + j, t, 0.0f), vdot));
            vf_store_part(dxr + j, g, t);
        }
    }
}

/* ------------------------------------------------------- column reductions, affine maps */

/* Column reductions walk the matrix in tiles of COL_TILE vectors of columns, keeping the tile's
 * sums in registers across all rows: accumulating into acc row by row would chain every row's
 * add through a store and a reload of the same cache line. */
#define COL_TILE 4

/* Lanes of vector t of a tile `width` columns wide (0 when the tile ends before it). */
ALWAYS_INLINE int tile_lanes(int width, int t)
{
    int lanes = width - t * VF_LANES;
    return lanes < 0 ? 0 : (lanes > VF_LANES ? VF_LANES : lanes);
}

ALWAYS_INLINE vf load_lanes(const float *p, int lanes)
{
    return lanes == VF_LANES ? vf_load(p) : vf_load_part(p, lanes, 0.0f);
}

ALWAYS_INLINE void store_lanes(float *p, vf v, int lanes)
{
    if (lanes == VF_LANES)
        vf_store(p, v);
    else
        vf_store_part(p, v, lanes);
}

ALWAYS_INLINE void add_store_lanes(float *p, vf v, int lanes)
{
    if (lanes == VF_LANES)
        vf_store(p, vf_add(vf_load(p), v));
    else if (lanes > 0)
        vf_store_part(p, vf_add(vf_load_part(p, lanes, 0.0f), v), lanes);
}

/* acc (c) += sum over rows of f(row tile) for one of the three reductions below. */
enum col_kind { COL_SUM, COL_SQ_DEV, COL_DOT_DEV };

/* sum + the `kind` term of the `lanes` elements at `at` (lanes is VF_LANES, a constant, on full
 * tiles, where load_lanes is a plain load). */
ALWAYS_INLINE vf col_term(int kind, vf sum, const float *a, const float *b, int64_t at, int lanes, vf mu)
{
    vf av = load_lanes(a + at, lanes);
    if (kind == COL_SUM) return vf_add(sum, av);
    if (kind == COL_SQ_DEV) {
        vf d = vf_sub(av, mu);
        return vf_fmadd(d, d, sum);
    }
    return vf_fmadd(av, vf_sub(load_lanes(b + at, lanes), mu), sum);
}

ALWAYS_INLINE void col_reduce(float *acc, const float *a, const float *b, const float *mean, int64_t rows,
                              int64_t c, int kind)
{
    for (int64_t j0 = 0; j0 < c; j0 += COL_TILE * VF_LANES) {
        int width = (int)(c - j0 < COL_TILE * VF_LANES ? c - j0 : COL_TILE * VF_LANES);
        vf sum[COL_TILE], mu[COL_TILE];
        int lanes[COL_TILE];
        for (int t = 0; t < COL_TILE; t++) {
            lanes[t] = tile_lanes(width, t);
            sum[t] = vf_zero();
            mu[t] = kind == COL_SUM ? vf_zero() : load_lanes(mean + j0 + t * VF_LANES, lanes[t]);
        }
        if (width == COL_TILE * VF_LANES) {
            for (int64_t r = 0; r < rows; r++)
                for (int t = 0; t < COL_TILE; t++)
                    sum[t] = col_term(kind, sum[t], a, b, r * c + j0 + t * VF_LANES, VF_LANES, mu[t]);
        } else {
            for (int64_t r = 0; r < rows; r++)
                for (int t = 0; t < COL_TILE; t++) {
                    if (lanes[t] == 0) break;
                    sum[t] = col_term(kind, sum[t], a, b, r * c + j0 + t * VF_LANES, lanes[t], mu[t]);
                }
        }
        for (int t = 0; t < COL_TILE; t++) add_store_lanes(acc + j0 + t * VF_LANES, sum[t], lanes[t]);
    }
}

static void col_sum(float *acc, const float *x, int64_t rows, int64_t c)
{
    col_reduce(acc, x, NULL, NULL, rows, c, COL_SUM);
}

static void col_sq_dev(float *acc, const float *x, const float *mean, int64_t rows, int64_t c)
{
    col_reduce(acc, x, NULL, mean, rows, c, COL_SQ_DEV);
}

static void col_dot_dev(float *acc, const float *dy, const float *x, const float *mean, int64_t rows,
                        int64_t c)
{
    col_reduce(acc, dy, x, mean, rows, c, COL_DOT_DEV);
}

static void rows_scale_shift(float *out, const float *x, const float *scale_, const float *shift,
                             int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        float *outr = out + r * c;
        int64_t j = 0;
        for (; j + VF_LANES <= c; j += VF_LANES)
            vf_store(outr + j, vf_fmadd(vf_load(xr + j), vf_load(scale_ + j), vf_load(shift + j)));
        if (j < c) {
            int t = (int)(c - j);
            vf v = vf_fmadd(vf_load_part(xr + j, t, 0.0f), vf_load_part(scale_ + j, t, 0.0f),
                            vf_load_part(shift + j, t, 0.0f));
            vf_store_part(outr + j, v, t);
        }
    }
}

static void rows_affine2(float *out, const float *a, const float *ka, const float *b, const float *kb,
                         const float *shift, int64_t rows, int64_t c)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * c, *br = b + r * c;
        float *outr = out + r * c;
        int64_t j = 0;
        for (; j + VF_LANES <= c; j += VF_LANES) {
            vf v = vf_fmadd(vf_load(ar + j), vf_load(ka + j),
                            vf_fmadd(vf_load(br + j), vf_load(kb + j), vf_load(shift + j)));
            vf_store(outr + j, v);
        }
        if (j < c) {
            int t = (int)(c - j);
            vf v = vf_fmadd(vf_load_part(ar + j, t, 0.0f), vf_load_part(ka + j, t, 0.0f),
                            vf_fmadd(vf_load_part(br + j, t, 0.0f), vf_load_part(kb + j, t, 0.0f),
                                     vf_load_part(shift + j, t, 0.0f)));
            vf_store_part(outr + j, v, t);
        }
    }
}

/* ------------------------------------------------------------------- pooling */

static void max_update(float *best, int32_t *arg, const float *x, int32_t index, int64_t c)
{
    vi vindex = vi_set1((uint32_t)index);
    int64_t j = 0;
    for (; j + VF_LANES <= c; j += VF_LANES) {
        vf bv = vf_load(best + j);
        vi av = vi_load(arg + j);
        vf_argmax_update(&bv, &av, vf_load(x + j), vindex);
        vf_store(best + j, bv);
        vi_store(arg + j, av);
    }
    if (j < c) {
        int t = (int)(c - j);
        vf bv = vf_load_part(best + j, t, 0.0f);
        vi av = vi_load_part(arg + j, t);
        vf_argmax_update(&bv, &av, vf_load_part(x + j, t, 0.0f), vindex);
        vf_store_part(best + j, bv, t);
        vi_store_part(arg + j, av, t);
    }
}

/* ------------------------------------------------------------------- dropout */

/* Philox4x32-10 on VF_LANES counters at once (lanes of c0..c3); see internal/philox.h. */
ALWAYS_INLINE void philox_rounds(vi *c0, vi *c1, vi *c2, vi *c3, uint64_t seed)
{
    uint32_t key0 = (uint32_t)seed, key1 = (uint32_t)(seed >> 32);
    vi m0 = vi_set1(PHILOX_M0), m1 = vi_set1(PHILOX_M1);
    for (int round = 0; round < 10; round++) {
        vi hi0 = vi_mulhi(m0, *c0), lo0 = vi_mullo(m0, *c0);
        vi hi1 = vi_mulhi(m1, *c2), lo1 = vi_mullo(m1, *c2);
        *c0 = vi_xor(vi_xor(hi1, *c1), vi_set1(key0));
        *c1 = lo1;
        *c2 = vi_xor(vi_xor(hi0, *c3), vi_set1(key1));
        *c3 = lo0;
        key0 += PHILOX_W0;
        key1 += PHILOX_W1;
    }
}

static void dropout_blocks(float *out, float *mask, const float *x, uint32_t threshold, float keep_scale,
                           uint64_t seed, int64_t first_block, int64_t blocks)
{
    vf scale_v = vf_set1(keep_scale), zero = vf_zero();
    vi threshold_v = vi_set1(threshold);
    for (int64_t b = first_block; b < first_block + blocks; b++) {
        uint64_t counter = (uint64_t)b * 16; /* a multiple of 16: adding a lane never carries */
        for (int part = 0; part < 16 / VF_LANES; part++) {
            vi c0 = vi_add(vi_set1((uint32_t)counter + (uint32_t)(part * VF_LANES)), vi_lane_index());
            vi c1 = vi_set1((uint32_t)(counter >> 32)), c2 = vi_set1(0), c3 = vi_set1(0);
            philox_rounds(&c0, &c1, &c2, &c3, seed);
            vi words[4] = {c0, c1, c2, c3};
            for (int j = 0; j < 4; j++) {
                int64_t e = b * 64 + j * 16 + part * VF_LANES;
                vf m = vf_select_ilt(vi_shr8(words[j]), threshold_v, scale_v, zero);
                vf_store(mask + e, m);
                vf_store(out + e, vf_mul(vf_load(x + e), m));
            }
        }
    }
}

/* ------------------------------------------------------------- whole-tensor reductions */

static float sum(const float *x, int64_t n)
{
    vf a0 = vf_zero(), a1 = vf_zero();
    int64_t i = 0;
    for (; i + 2 * VF_LANES <= n; i += 2 * VF_LANES) {
        a0 = vf_add(a0, vf_load(x + i));
        a1 = vf_add(a1, vf_load(x + i + VF_LANES));
    }
    for (; i + VF_LANES <= n; i += VF_LANES) a0 = vf_add(a0, vf_load(x + i));
    if (i < n) a1 = vf_add(a1, vf_load_part(x + i, (int)(n - i), 0.0f));
    return vf_hsum(vf_add(a0, a1));
}

static float sum_squares(const float *x, int64_t n)
{
    return dot(x, x, n);
}

static int all_finite(const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES)
        if (!vf_all_finite(vf_load(x + i))) return 0;
    if (i < n) return vf_all_finite(vf_load_part(x + i, (int)(n - i), 0.0f));
    return 1;
}

/* ------------------------------------------------------------------- optimizers */

#include "vector_kernels_optim.h"

/* The table each ISA file returns (ISA_NAME is defined by the including file). */
#include "vector_kernels_table.h"

#endif
