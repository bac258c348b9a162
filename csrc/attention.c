/* Fused scaled dot-product attention (attention.h): one task per (batch, head); each task
 * computes its (Tq, Tk) score block with the serial GEMM of gemm.c straight from the
 * (B, T, H, D) layouts (strides instead of transposes), applies mask and softmax row by row
 * with the ISA's vector softmax, and multiplies by the values. The tasks run on
 * minidl_num_threads() threads; each thread's scratch block is allocated once per call. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cpu_features.h"
#include "internal/checked_alloc.h"
#include "internal/gemm_kernels.h"
#include "internal/vector_kernels.h"
#include "status.h"

/* Query rows per block of the causal products: a block of rows [r0, r1) reads keys [0, r1)
 * only, so the products skip most of the masked upper triangle; 64 rows keep each product a
 * few whole micro-kernel panels tall. */
#define CAUSAL_BLOCK_ROWS 64

/* Keys the rows [r0, r1) of a block can touch: [0, r1) under the causal mask, else all. A mask
 * can empty a row, which then weighs every key (uniform), so with one all keys count too. */
static int64_t block_keys(int causal, const float *mask, int64_t r1, int64_t tk)
{
    return causal && !mask && r1 < tk ? r1 : tk;
}

/* The keys query row i may attend lie in [0, limit); the mask may drop some of those. */
static int64_t row_limit(int causal, int64_t i, int64_t tk) { return causal && i + 1 < tk ? i + 1 : tk; }

/* How many of the first `limit` keys the mask row allows (limit when there is no mask). */
static int64_t allowed_keys(const float *mask_row, int64_t limit)
{
    if (!mask_row)
        return limit;
    int64_t n = 0;
    for (int64_t j = 0; j < limit; j++)
        n += mask_row[j] != 0.0f;
    return n;
}

/* Turn row (tk scaled scores) into probabilities in place: masked keys 0, a row with no key
 * allowed uniform (Keras adds -1e9 to masked scores, which makes such a row uniform too). */
static void softmax_row(float *row, const float *mask_row, int64_t limit, int64_t tk,
                        const struct vector_kernels *vk)
{
    if (allowed_keys(mask_row, limit) == 0) {
        for (int64_t j = 0; j < tk; j++)
            row[j] = 1.0f / (float)tk;
        return;
    }
    if (mask_row)
        for (int64_t j = 0; j < limit; j++)
            if (mask_row[j] == 0.0f)
                row[j] = -INFINITY;
    vk->softmax_rows(row, NULL, row, 1, limit);
    if (mask_row)   // the vector exp gives the smallest normal float for -inf, not 0
        for (int64_t j = 0; j < limit; j++)
            if (mask_row[j] == 0.0f)
                row[j] = 0.0f;
    memset(row + limit, 0, (size_t)(tk - limit) * sizeof(float));
}

int minidl_attention_forward(float *out, float *probs, const float *q, const float *k, const float *v,
                             const float *mask, const float *dropout, float scale, int causal,
                             int64_t batch, int64_t tq, int64_t tk, int64_t heads, int64_t dim,
                             int64_t dim_v)
{
    // q is (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv), out (B, Tq, H, Dv), probs (B, H, Tq, Tk)
    const struct vector_kernels *vk = minidl_active_kernels();
    const int64_t tasks = batch * heads, block = tq * tk;
    int status = MINIDL_OK;
#pragma omp parallel num_threads(minidl_num_threads())
    {
        int mine = MINIDL_OK;   // this thread's worst status, merged into status at the end
        float *dropped = dropout ? minidl_alloc_floats((size_t)block) : NULL;
        if (dropout && !dropped)
            mine = MINIDL_OUT_OF_MEMORY;
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            if (mine != MINIDL_OK)
                continue;
            const int64_t b = t / heads, h = t % heads;
            const float *qb = q + (b * tq * heads + h) * dim, *kb = k + (b * tk * heads + h) * dim;
            const float *vb = v + (b * tk * heads + h) * dim_v;
            float *p = probs + t * block, *ob = out + (b * tq * heads + h) * dim_v;
            const int64_t rows = causal ? CAUSAL_BLOCK_ROWS : tq;
            for (int64_t r0 = 0; r0 < tq && mine == MINIDL_OK; r0 += rows) {
                const int64_t r1 = r0 + rows < tq ? r0 + rows : tq, keys = block_keys(causal, mask, r1, tk);
                float *pr = p + r0 * tk;
                // scores (r1 - r0, keys) = scale * q_bh rows (., D) @ k_bh^T (D, keys)
                mine = sgemm_strided_serial(pr, tk, qb + r0 * heads * dim, heads * dim, 1, kb, 1, heads * dim,
                                            (int)(r1 - r0), (int)keys, (int)dim, scale, 0.0f);
                for (int64_t i = r0; i < r1; i++)   // writes the whole row: keys past `keys` get 0
                    softmax_row(p + i * tk, mask ? mask + (b * tq + i) * tk : NULL, row_limit(causal, i, tk),
                                tk, vk);
                const float *weights = pr;
                if (dropout) {
                    vk->multiply(dropped + r0 * tk, pr, dropout + t * block + r0 * tk, (r1 - r0) * tk);
                    weights = dropped + r0 * tk;
                }
                // out_bh rows (., Dv) = weights (., keys) @ v_bh (keys, Dv)
                int s = sgemm_strided_serial(ob + r0 * heads * dim_v, heads * dim_v, weights, tk, 1, vb,
                                             heads * dim_v, 1, (int)(r1 - r0), (int)dim_v, (int)keys, 1.0f,
                                             0.0f);
                mine = mine > s ? mine : s;
            }
        }
        free(dropped);
#pragma omp critical(minidl_attention_status)
        status = status > mine ? status : mine;
    }
    return status;
}

int minidl_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *q,
                              const float *k, const float *v, const float *probs, const float *mask,
                              const float *dropout, float scale, int causal, int64_t batch, int64_t tq,
                              int64_t tk, int64_t heads, int64_t dim, int64_t dim_v)
{
    // dq like q (B, Tq, H, D), dk like k, dv like v, dout like out (B, Tq, H, Dv)
    const struct vector_kernels *vk = minidl_active_kernels();
    const int64_t tasks = batch * heads, block = tq * tk;
    int status = MINIDL_OK;
#pragma omp parallel num_threads(minidl_num_threads())
    {
        int mine = MINIDL_OK;   // this thread's worst status, merged into status at the end
        // ds holds d(weights), then d(probs), then d(scores); dropped the dropped-out weights
        float *ds = minidl_alloc_floats((size_t)block * (dropout ? 2 : 1));
        if (!ds)
            mine = MINIDL_OUT_OF_MEMORY;
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < tasks; t++) {
            if (mine != MINIDL_OK)
                continue;
            const int64_t b = t / heads, h = t % heads;
            const int64_t ld = heads * dim, ld_v = heads * dim_v;
            const float *qb = q + (b * tq * heads + h) * dim, *kb = k + (b * tk * heads + h) * dim;
            const float *vb = v + (b * tk * heads + h) * dim_v, *dob = dout + (b * tq * heads + h) * dim_v;
            float *dqb = dq + (b * tq * heads + h) * dim, *dkb = dk + (b * tk * heads + h) * dim;
            float *dvb = dv + (b * tk * heads + h) * dim_v;
            const float *p = probs + t * block, *weights = p;
            if (dropout) {
                float *dropped = ds + block;
                vk->multiply(dropped, p, dropout + t * block, block);
                weights = dropped;
            }
            int s1, s2 = MINIDL_OK, s3 = MINIDL_OK, s4;
            // dv_bh (Tk, Dv) = weights^T (Tk, Tq) @ dout_bh (Tq, Dv)
            s1 = sgemm_strided_serial(dvb, ld_v, weights, 1, tk, dob, ld_v, 1, (int)tk, (int)dim_v, (int)tq,
                                      1.0f, 0.0f);
            const int64_t rows = causal ? CAUSAL_BLOCK_ROWS : tq;
            for (int64_t r0 = 0; r0 < tq && s2 == MINIDL_OK && s3 == MINIDL_OK; r0 += rows) {
                const int64_t r1 = r0 + rows < tq ? r0 + rows : tq, keys = block_keys(causal, mask, r1, tk);
                float *dsr = ds + r0 * tk;
                // d(weights) rows (., keys) = dout_bh rows (., Dv) @ v_bh^T (Dv, keys)
                s2 = sgemm_strided_serial(dsr, tk, dob + r0 * ld_v, ld_v, 1, vb, 1, ld_v, (int)(r1 - r0),
                                          (int)keys, (int)dim_v, 1.0f, 0.0f);
                if (dropout)   // columns past `keys` hold leftovers, overwritten with 0 below
                    vk->multiply(dsr, dsr, dropout + t * block + r0 * tk, (r1 - r0) * tk);
                for (int64_t i = r0; i < r1; i++) {
                    float *row = ds + i * tk;
                    const int64_t limit = row_limit(causal, i, tk);
                    if (allowed_keys(mask ? mask + (b * tq + i) * tk : NULL, limit) == 0) {
                        // a uniform row: Keras's additive -1e9 passes the softmax gradient to every score
                        vk->softmax_backward_rows(row, row, p + i * tk, 1, tk);
                        continue;
                    }
                    // masked keys have probability 0, so their score gradient comes out 0 too
                    vk->softmax_backward_rows(row, row, p + i * tk, 1, limit);
                    memset(row + limit, 0, (size_t)(tk - limit) * sizeof(float));
                }
                // dq_bh rows (., D) = scale * ds rows (., keys) @ k_bh (keys, D)
                s3 = sgemm_strided_serial(dqb + r0 * ld, ld, dsr, tk, 1, kb, ld, 1, (int)(r1 - r0), (int)dim,
                                          (int)keys, scale, 0.0f);
            }
            // dk_bh (Tk, D) = scale * ds^T (Tk, Tq) @ q_bh (Tq, D)
            s4 = sgemm_strided_serial(dkb, ld, ds, 1, tk, qb, ld, 1, (int)tk, (int)dim, (int)tq, scale, 0.0f);
            int s = s1 > s2 ? s1 : s2;
            s = s > s3 ? s : s3;
            s = s > s4 ? s : s4;
            mine = mine > s ? mine : s;
        }
        free(ds);
#pragma omp critical(minidl_attention_status)
        status = status > mine ? status : mine;
    }
    return status;
}
