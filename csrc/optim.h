/* Fused optimizer updates (one pass over each tensor, state updated in place) and gradient
 * clipping. Every tensor has n elements; the updated tensors (w and the optimizer's state) come
 * first, then the gradient g. weight_decay is decoupled: w -= lr * weight_decay * w before the step. */
#ifndef MINIDL_OPTIM_H
#define MINIDL_OPTIM_H

#include <stdint.h>

void minidl_clip_by_value(float *g, float clipvalue, int64_t n);
/* g *= clipnorm / max(||g||_2, clipnorm), the norm added up in double */
void minidl_clip_by_norm(float *g, float clipnorm, int64_t n);

/* Keras SGD; velocity is NULL when momentum is 0 */
void minidl_sgd_update(float *w, float *velocity, const float *g, float lr, float momentum, int nesterov,
                       float weight_decay, int64_t n);
/* Keras Adam; lr_t is the bias-corrected step size lr sqrt(1 - b2^t) / (1 - b1^t), computed once
   for every backend by the contract (minidl/backends/contract/optimizers.py); lr scales the
   decoupled weight decay */
void minidl_adam_update(float *w, float *m, float *v, const float *g, float lr, float lr_t, float beta_1,
                        float beta_2, float epsilon, float weight_decay, int64_t n);
/* Keras RMSprop; mom is NULL without momentum */
void minidl_rmsprop_update(float *w, float *ms, float *mom, const float *g, float lr, float rho,
                           float momentum, float epsilon, float weight_decay, int64_t n);
void minidl_adagrad_update(float *w, float *acc, const float *g, float lr, float epsilon, float weight_decay,
                           int64_t n);

#endif
