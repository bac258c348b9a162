/* Losses of the cpu backend. Scores are (n, k); sparse targets are int32 class indices (n),
 * dense targets float (n, k); loss (n) gets one value per row. Functions taking sparse targets
 * check them first and return MINIDL_OK, or MINIDL_TARGET_OUT_OF_RANGE when one lies outside
 * [0, k) (and then write nothing). */
#ifndef MINIDL_LOSS_H
#define MINIDL_LOSS_H

#include <stdint.h>

#include "status.h"

/* probs = softmax(logits); loss = -sum(t * log probs) */
int minidl_softmax_cross_entropy_forward_sparse(float *probs, float *loss, const float *logits,
                                           const int32_t *targets, int64_t n, int64_t k);
void minidl_softmax_cross_entropy_forward_dense(float *probs, float *loss, const float *logits, const float *targets,
                                       int64_t n, int64_t k);
/* dlogits = (probs - onehot(targets)) * scale */
int minidl_softmax_cross_entropy_backward_sparse(float *dlogits, const float *probs, const int32_t *targets,
                                            float scale, int64_t n, int64_t k);
void minidl_softmax_cross_entropy_backward_dense(float *dlogits, const float *probs, const float *targets,
                                        float scale, int64_t n, int64_t k);

/* probs = sigmoid(logits); loss = row mean of max(x, 0) - x t + log(1 + exp(-|x|)) */
void minidl_sigmoid_cross_entropy_forward(float *probs, float *loss, const float *logits, const float *targets,
                                 int64_t n, int64_t k);
/* dlogits = (probs - targets) * scale / k */
void minidl_sigmoid_cross_entropy_backward(float *dlogits, const float *probs, const float *targets, float scale,
                                  int64_t n, int64_t k);

/* Cross-entropy of probabilities clipped to [1e-7, 1 - 1e-7]; gradients are 0 where the clip acts. */
int minidl_cross_entropy_forward_sparse(float *loss, const float *probs, const int32_t *targets, int64_t n,
                                   int64_t k);
void minidl_cross_entropy_forward_dense(float *loss, const float *probs, const float *targets, int64_t n, int64_t k);
void minidl_binary_cross_entropy_forward(float *loss, const float *probs, const float *targets, int64_t n, int64_t k);
int minidl_cross_entropy_backward_sparse(float *dprobs, const float *probs, const int32_t *targets, float scale,
                                    int64_t n, int64_t k);
void minidl_cross_entropy_backward_dense(float *dprobs, const float *probs, const float *targets, float scale,
                                int64_t n, int64_t k);
void minidl_binary_cross_entropy_backward(float *dprobs, const float *probs, const float *targets, float scale,
                                 int64_t n, int64_t k);

/* loss = row mean of (pred - targets)^2; dpred = 2 (pred - targets) / k * scale */
void minidl_mean_squared_error_forward(float *loss, const float *pred, const float *targets, int64_t n, int64_t k);
void minidl_mean_squared_error_backward(float *dpred, const float *pred, const float *targets, float scale, int64_t n,
                         int64_t k);

#endif
