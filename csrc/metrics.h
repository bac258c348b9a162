/* Reductions and metric counts written into (1,) float tensors; accumulate != 0 adds to out[0].
 * pred is (n, k); functions taking sparse int32 targets (n) return MINIDL_OK, or
 * MINIDL_TARGET_OUT_OF_RANGE when one lies outside [0, k) (and then write nothing).
 * A row (or, for binary_accuracy, an element) holding a NaN prediction never counts as correct,
 * as in the numpy backend. weights (NULL: every one counts 1) holds one weight per row (per element
 * for binary_accuracy): out then gets the weights of the correct ones, summed in double. */
#ifndef MINIDL_METRICS_H
#define MINIDL_METRICS_H

#include <stdint.h>

#include "status.h"

/* out = sum of x (n), added in double */
void minidl_sum(float *out, const float *x, int accumulate, int64_t n);

/* out = 1 if every element of x is finite, else 0 */
void minidl_all_finite(float *out, const float *x, int64_t n);

/* rows whose argmax (ties to the lowest index) is the target class */
int minidl_categorical_accuracy_sparse(float *out, const float *pred, const int32_t *targets,
                                       const float *weights, int accumulate, int64_t n, int64_t k);
/* dense targets (n, k): the target class is their argmax */
void minidl_categorical_accuracy_dense(float *out, const float *pred, const float *targets,
                                       const float *weights, int accumulate, int64_t n, int64_t k);

/* elements (n) where pred is not NaN and (pred > 0.5) == (targets > 0.5) */
void minidl_binary_accuracy(float *out, const float *pred, const float *targets, const float *weights,
                            int accumulate, int64_t n);

/* rows where fewer than top_k scores are strictly larger than the target's */
int minidl_top_k_accuracy_sparse(float *out, const float *pred, const int32_t *targets, const float *weights,
                                 int64_t top_k, int accumulate, int64_t n, int64_t k);
void minidl_top_k_accuracy_dense(float *out, const float *pred, const float *targets, const float *weights,
                                 int64_t top_k, int accumulate, int64_t n, int64_t k);

#endif
