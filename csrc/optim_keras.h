/* The Keras 3 optimizers beyond SGD/Adam/RMSprop/Adagrad (and Adam's AMSGrad variant), the weights' moving average (use_ema)
 * and clipping by the global norm. Each update is one pass over its tensors (n elements each),
 * state updated in place; weight_decay is decoupled: w -= lr * weight_decay * w before the step.
 * Scalar coefficients that depend on the step come in already computed (see base.py).
 * Argument order: outputs (w and its state), inputs (g), scalars, sizes (csrc/status.h). */
#ifndef MINIDL_OPTIM_KERAS_H
#define MINIDL_OPTIM_KERAS_H

#include <stdint.h>

/* acc_grad = rho acc_grad + (1-rho) g^2; delta = -sqrt(acc_delta+eps) g / sqrt(acc_grad+eps);
 * acc_delta = rho acc_delta + (1-rho) delta^2; w += lr delta */
void minidl_adadelta_update(float *w, float *acc_grad, float *acc_delta, const float *g, float lr, float rho,
                            float epsilon, float weight_decay, int64_t n);
/* m += (g - m)(1-b1); u = max(b2 u, |g|); w -= lr_t m / (u + eps), lr_t = lr / (1 - b1^t) */
void minidl_adamax_update(float *w, float *m, float *u, const float *g, float lr, float lr_t, float beta_1,
                          float beta_2, float epsilon, float weight_decay, int64_t n);
/* Adam(amsgrad=True): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; v_hat = max(v_hat, v) (NaN
 * propagates); w -= lr_t m / (sqrt(v_hat) + eps), lr_t = lr sqrt(1 - b2^t) / (1 - b1^t) */
void minidl_amsgrad_update(float *w, float *m, float *v, float *v_hat, const float *g, float lr, float lr_t,
                           float beta_1, float beta_2, float epsilon, float weight_decay, int64_t n);
/* m += (g - m)(1-b1); v += (g^2 - v)(1-b2); w -= lr (c_m m + c_g g) / (sqrt(v v_scale) + eps) */
void minidl_nadam_update(float *w, float *m, float *v, const float *g, float lr, float beta_1, float beta_2,
                         float epsilon, float c_m, float c_g, float v_scale, float weight_decay, int64_t n);
/* w -= lr sign(b1 m + (1-b1) g); m = b2 m + (1-b2) g */
void minidl_lion_update(float *w, float *m, const float *g, float lr, float beta_1, float beta_2,
                        float weight_decay, int64_t n);
/* Keras Ftrl; l2 is l2_regularization_strength + beta / (2 lr) */
void minidl_ftrl_update(float *w, float *acc, float *linear, const float *g, float lr, float lr_power, float l1,
                        float l2, float l2_shrinkage, float weight_decay, int64_t n);
/* average = momentum average + (1 - momentum) w */
void minidl_ema_update(float *average, const float *w, float momentum, int64_t n);
/* every g[t][i] *= clipnorm / max(global norm, clipnorm), the norm over all count tensors
 * (n[t] elements each) in double */
void minidl_clip_by_global_norm(float **g, float clipnorm, const int64_t *n, int64_t count);

#endif
