/* Reductions and metric counts written into (1,) float tensors; accumulate != 0 adds to out[0].
 * pred is (n, k); functions taking sparse int32 targets (n) return -1, or the first row whose
 * target lies outside [0, k) (and then write nothing). */
#ifndef MINIDL_METRICS_H
#define MINIDL_METRICS_H

#include <stdint.h>

/* out = sum of x (n), added in double */
void minidl_sum(float *out, const float *x, int64_t n, int accumulate);
/* out = 1 if every element of x is finite, else 0 */
void minidl_all_finite(float *out, const float *x, int64_t n);

/* rows whose argmax (ties to the lowest index) equals the target class */
int64_t minidl_categorical_accuracy_sparse(float *out, const float *pred, const int32_t *targets, int64_t n,
                                           int64_t k, int accumulate);
/* dense targets (n, k): the target class is their argmax */
void minidl_categorical_accuracy_dense(float *out, const float *pred, const float *targets, int64_t n,
                                       int64_t k, int accumulate);
/* elements (n) where (pred > 0.5) == (targets > 0.5) */
void minidl_binary_accuracy(float *out, const float *pred, const float *targets, int64_t n, int accumulate);
/* rows where fewer than top_k scores are strictly larger than the target's score */
int64_t minidl_top_k_accuracy_sparse(float *out, const float *pred, const int32_t *targets, int64_t n,
                                     int64_t k, int64_t top_k, int accumulate);
void minidl_top_k_accuracy_dense(float *out, const float *pred, const float *targets, int64_t n, int64_t k,
                                 int64_t top_k, int accumulate);

#endif
