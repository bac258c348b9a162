/* Weight and activity regularization (Keras's L1, L2, L1L2, OrthogonalRegularizer) and norm
 * constraints (MaxNorm, MinMaxNorm, UnitNorm), applied on the backend's tensors. Argument order:
 * outputs, inputs, scalars, sizes, then a scratch buffer and its length (csrc/status.h). */
#ifndef MINIDL_REGULARIZE_H
#define MINIDL_REGULARIZE_H

#include <stdint.h>

/* out[0] (+)= l1 * sum|w| + l2 * sum w^2, added up in double */
void minidl_l1_l2_penalty(float *out, const float *w, float l1, float l2, int accumulate, int64_t n);
/* g += l1 * sign(w) + 2 * l2 * w */
void minidl_l1_l2_gradient(float *g, const float *w, float l1, float l2, int64_t n);
/* w viewed as (outer, reduce, inner): every (o, i) vector over the reduced axis is scaled by
 * desired / (1e-7 + norm), desired = rate * clip(norm, min_value, max_value) + (1 - rate) * norm */
void minidl_norm_constraint(float *w, float min_value, float max_value, float rate, int64_t outer, int64_t reduce,
                            int64_t inner);

/* Keras's OrthogonalRegularizer on m vectors of k elements, element t of vector i at
 * w[i * sv + t * se] (rows of a matrix: sv = k, se = 1; its columns: sv = 1, se = m); vectors
 * l2-normalized (squared norm floored at 1e-12); penalty = factor / 2 * sum over i != j of
 * |n_i . n_j| / (m (m - 1) / 2). scratch holds m * k + m floats; returns MINIDL_OK or
 * MINIDL_SCRATCH_TOO_SMALL. */
int minidl_orthogonal_penalty(float *out, const float *w, float factor, int accumulate, int64_t m, int64_t k,
                              int64_t sv, int64_t se, float *scratch, int64_t scratch_len);
/* g += d penalty / d w; scratch holds 2 * m * k + m floats */
int minidl_orthogonal_gradient(float *g, const float *w, float factor, int64_t m, int64_t k, int64_t sv,
                               int64_t se, float *scratch, int64_t scratch_len);

#endif
