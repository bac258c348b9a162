/* Losses of the cpu backend. Scores are (n, k); sparse targets are int32 class indices (n),
 * dense targets float (n, k); loss (n) gets one value per row. Functions taking sparse targets
 * check them first and return -1, or the first row whose target lies outside [0, k) (and then
 * write nothing). */
#ifndef MINIDL_LOSS_H
#define MINIDL_LOSS_H

#include <stdint.h>

/* probs = softmax(logits); loss = -sum(t * log probs) */
int64_t minidl_softmax_xent_forward_sparse(float *probs, float *loss, const float *logits,
                                           const int32_t *targets, int64_t n, int64_t k);
void minidl_softmax_xent_forward_dense(float *probs, float *loss, const float *logits, const float *targets,
                                       int64_t n, int64_t k);
/* dlogits = (probs - onehot(targets)) * scale */
int64_t minidl_softmax_xent_backward_sparse(float *dlogits, const float *probs, const int32_t *targets,
                                            float scale, int64_t n, int64_t k);
void minidl_softmax_xent_backward_dense(float *dlogits, const float *probs, const float *targets,
                                        float scale, int64_t n, int64_t k);

/* probs = sigmoid(logits); loss = row mean of max(x, 0) - x t + log(1 + exp(-|x|)) */
void minidl_sigmoid_xent_forward(float *probs, float *loss, const float *logits, const float *targets,
                                 int64_t n, int64_t k);
/* dlogits = (probs - targets) * scale / k */
void minidl_sigmoid_xent_backward(float *dlogits, const float *probs, const float *targets, float scale,
                                  int64_t n, int64_t k);

/* Cross-entropy of probabilities clipped to [1e-7, 1 - 1e-7]; gradients are 0 where the clip acts. */
int64_t minidl_xent_forward_sparse(float *loss, const float *probs, const int32_t *targets, int64_t n,
                                   int64_t k);
void minidl_xent_forward_dense(float *loss, const float *probs, const float *targets, int64_t n, int64_t k);
void minidl_binary_xent_forward(float *loss, const float *probs, const float *targets, int64_t n, int64_t k);
int64_t minidl_xent_backward_sparse(float *dprobs, const float *probs, const int32_t *targets, float scale,
                                    int64_t n, int64_t k);
void minidl_xent_backward_dense(float *dprobs, const float *probs, const float *targets, float scale,
                                int64_t n, int64_t k);
void minidl_binary_xent_backward(float *dprobs, const float *probs, const float *targets, float scale,
                                 int64_t n, int64_t k);

/* loss = row mean of (pred - targets)^2; dpred = 2 (pred - targets) / k * scale */
void minidl_mse_forward(float *loss, const float *pred, const float *targets, int64_t n, int64_t k);
void minidl_mse_backward(float *dpred, const float *pred, const float *targets, float scale, int64_t n,
                         int64_t k);

#endif
