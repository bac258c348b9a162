/* The plain reference of attention.c: the same contract (attention.h) with loops and libm,
 * one (batch, head, query) row at a time, on the calling thread. */
#include <math.h>
#include <stdlib.h>

#include "attention.h"

#define Q(b, i, h, d) q[(((b) * tq + (i)) * heads + (h)) * dim + (d)]
#define K(b, j, h, d) k[(((b) * tk + (j)) * heads + (h)) * dim + (d)]
#define V(b, j, h, d) v[(((b) * tk + (j)) * heads + (h)) * dim_v + (d)]

static int allowed(const float *mask, int causal, int64_t b, int64_t i, int64_t j, int64_t tq, int64_t tk)
{
    return !(causal && j > i) && !(mask && mask[(b * tq + i) * tk + j] == 0.0f);
}

static int row_has_key(const float *mask, int causal, int64_t b, int64_t i, int64_t tq, int64_t tk)
{
    for (int64_t j = 0; j < tk; j++)
        if (allowed(mask, causal, b, i, j, tq, tk))
            return 1;
    return 0;
}

void minidl_attention_forward_ref(float *out, float *probs, const float *q, const float *k, const float *v,
                                  const float *mask, const float *dropout, float scale, int causal,
                                  int64_t batch, int64_t tq, int64_t tk, int64_t heads, int64_t dim,
                                  int64_t dim_v)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < tq; i++) {
                float *p = probs + ((b * heads + h) * tq + i) * tk;
                if (!row_has_key(mask, causal, b, i, tq, tk)) {
                    for (int64_t j = 0; j < tk; j++)
                        p[j] = 1.0f / (float)tk;
                } else {
                    float top = -INFINITY, total = 0.0f;
                    for (int64_t j = 0; j < tk; j++) {
                        float s = 0.0f;
                        for (int64_t d = 0; d < dim; d++)
                            s += Q(b, i, h, d) * K(b, j, h, d);
                        p[j] = scale * s;
                        if (allowed(mask, causal, b, i, j, tq, tk) && p[j] > top)
                            top = p[j];
                    }
                    for (int64_t j = 0; j < tk; j++) {
                        p[j] = allowed(mask, causal, b, i, j, tq, tk) ? expf(p[j] - top) : 0.0f;
                        total += p[j];
                    }
                    for (int64_t j = 0; j < tk; j++)
                        p[j] /= total;
                }
                for (int64_t d = 0; d < dim_v; d++) {
                    float acc = 0.0f;
                    for (int64_t j = 0; j < tk; j++)
                        acc += p[j] * (dropout ? dropout[((b * heads + h) * tq + i) * tk + j] : 1.0f) * V(b, j, h, d);
                    out[((b * tq + i) * heads + h) * dim_v + d] = acc;
                }
            }
}

void minidl_attention_backward_ref(float *dq, float *dk, float *dv, const float *dout, const float *q,
                                   const float *k, const float *v, const float *probs, const float *mask,
                                   const float *dropout, float scale, int causal, int64_t batch,
                                   int64_t tq, int64_t tk, int64_t heads, int64_t dim, int64_t dim_v)
{
    for (int64_t n = 0; n < batch * tq * heads * dim; n++)
        dq[n] = 0.0f;
    for (int64_t n = 0; n < batch * tk * heads * dim; n++)
        dk[n] = 0.0f;
    for (int64_t n = 0; n < batch * tk * heads * dim_v; n++)
        dv[n] = 0.0f;
    float *dp = malloc((size_t)(tk > 0 ? tk : 1) * sizeof(float));
    if (!dp)
        return;   // a reference for tests: rows of a few dozen floats
    for (int64_t b = 0; b < batch; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < tq; i++) {
                const int64_t row = ((b * heads + h) * tq + i) * tk;
                const float *p = probs + row, *go = dout + ((b * tq + i) * heads + h) * dim_v;
                float dot = 0.0f;
                for (int64_t j = 0; j < tk; j++) {
                    float keep = dropout ? dropout[row + j] : 1.0f, g = 0.0f;
                    for (int64_t d = 0; d < dim_v; d++) {
                        g += go[d] * V(b, j, h, d);
                        dv[((b * tk + j) * heads + h) * dim_v + d] += p[j] * keep * go[d];
                    }
                    dp[j] = g * keep;
                    dot += dp[j] * p[j];
                }
                for (int64_t j = 0; j < tk; j++) {
                    float ds = scale * p[j] * (dp[j] - dot);
                    for (int64_t d = 0; d < dim; d++) {
                        dq[((b * tq + i) * heads + h) * dim + d] += ds * K(b, j, h, d);
                        dk[((b * tk + j) * heads + h) * dim + d] += ds * Q(b, i, h, d);
                    }
                }
            }
    free(dp);
}
