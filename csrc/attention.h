/* Scaled dot-product attention per (batch, head), fused: scores, mask, softmax and the
 * weighted sum of values in one call, with no (B, H, T, T) tensor besides the probabilities
 * the backward pass needs (and returns as Keras's attention scores).
 *
 * Layouts are Keras MultiHeadAttention's, so its projections feed the kernel without a
 * transpose: q (B, Tq, H, D), k (B, Tk, H, D), v (B, Tk, H, Dv), out (B, Tq, H, Dv),
 * probs (B, H, Tq, Tk). mask (B, Tq, Tk) or NULL: nonzero where query i may attend key j.
 * causal: query i attends keys j <= i only (Keras's use_causal_mask). A query row that can
 * attend nothing gets uniform probabilities, and its scores the softmax gradient of those, as
 * Keras's additive -1e9 mask gives.
 * dropout (B, H, Tq, Tk) or NULL: multipliers (0 or 1 / (1 - rate)) applied to the
 * probabilities before the weighted sum; probs holds them undropped. */
#ifndef MINIDL_ATTENTION_H
#define MINIDL_ATTENTION_H

#include <stdint.h>

/* out = softmax(mask(scale * q k^T)) (* dropout) v; probs = the softmax. Returns MINIDL_OK or
 * MINIDL_OUT_OF_MEMORY (a per-thread scratch row block could not be had). */
int minidl_attention_forward(float *out, float *probs, const float *q, const float *k, const float *v,
                             const float *mask, const float *dropout, float scale, int causal,
                             int64_t batch, int64_t tq, int64_t tk, int64_t heads, int64_t dim,
                             int64_t dim_v);

/* dq, dk, dv of the forward pass above, from dout (B, Tq, H, Dv) and its saved probs. */
int minidl_attention_backward(float *dq, float *dk, float *dv, const float *dout, const float *q,
                              const float *k, const float *v, const float *probs, const float *mask,
                              const float *dropout, float scale, int causal, int64_t batch, int64_t tq,
                              int64_t tk, int64_t heads, int64_t dim, int64_t dim_v);

/* The same two passes with plain loops and libm: the reference the fast ones are tested against. */
void minidl_attention_forward_ref(float *out, float *probs, const float *q, const float *k, const float *v,
                                  const float *mask, const float *dropout, float scale, int causal,
                                  int64_t batch, int64_t tq, int64_t tk, int64_t heads, int64_t dim,
                                  int64_t dim_v);
void minidl_attention_backward_ref(float *dq, float *dk, float *dv, const float *dout, const float *q,
                                   const float *k, const float *v, const float *probs, const float *mask,
                                   const float *dropout, float scale, int causal, int64_t batch,
                                   int64_t tq, int64_t tk, int64_t heads, int64_t dim, int64_t dim_v);

#endif
