/* Fused optimizer updates (one pass over each tensor, state updated in place) and gradient
 * clipping. Every tensor has n elements. weight_decay is decoupled: w -= lr * weight_decay * w
 * before the step. */
#ifndef MINIDL_OPTIM_H
#define MINIDL_OPTIM_H

#include <stdint.h>

void minidl_clip_by_value(float *g, float clipvalue, int64_t n);
/* g *= clipnorm / max(||g||_2, clipnorm), the norm added up in double */
void minidl_clip_by_norm(float *g, float clipnorm, int64_t n);

/* Keras SGD; velocity is NULL when momentum is 0 */
void minidl_sgd_update(float *w, const float *g, float *velocity, int64_t n, float lr, float momentum,
                       int nesterov, float weight_decay);
/* Keras Adam at 1-based step */
void minidl_adam_update(float *w, const float *g, float *m, float *v, int64_t n, float lr, float beta_1,
                        float beta_2, float epsilon, int64_t step, float weight_decay);
/* Keras RMSprop; mom is NULL without momentum */
void minidl_rmsprop_update(float *w, const float *g, float *ms, float *mom, int64_t n, float lr, float rho,
                           float momentum, float epsilon, float weight_decay);
void minidl_adagrad_update(float *w, const float *g, float *acc, int64_t n, float lr, float epsilon,
                           float weight_decay);

#endif
