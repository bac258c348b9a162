// Keras 3's Adadelta, Adamax, Nadam, Lion and Ftrl updates and the weights' moving average
// (use_ema): one pass over w, g and the state, one work-item per element. Step-dependent
// scalars (bias corrections, Nadam's coefficients) come computed from the step number.

// acc_grad = rho acc_grad + (1-rho) g^2; delta = -sqrt(acc_delta + eps) g / sqrt(acc_grad + eps);
// acc_delta = rho acc_delta + (1-rho) delta^2; w += lr delta
__kernel void adadelta_update(__global float *w, __global const float *g, __global float *acc_grad,
                              __global float *acc_delta, const float lr, const float rho,
                              const float epsilon, const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float ag = rho * acc_grad[i] + (1.0f - rho) * gi * gi;
    const float delta = -(sqrt(acc_delta[i] + epsilon) * gi) / sqrt(ag + epsilon);
    acc_grad[i] = ag;
    acc_delta[i] = rho * acc_delta[i] + (1.0f - rho) * delta * delta;
    w[i] = decayed(w[i], lr, weight_decay) + lr * delta;
}

// m += (g - m)(1-b1); u = max(b2 u, |g|) (NaN propagates); w -= lr_t m / (u + eps)
__kernel void adamax_update(__global float *w, __global const float *g, __global float *m,
                            __global float *u, const float lr, const float lr_t, const float beta_1,
                            const float beta_2, const float epsilon, const float weight_decay,
                            const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * (1.0f - beta_1);
    const float scaled = beta_2 * u[i], ag = fabs(gi);
    const float ui = is_nan(ag) ? ag : (ag > scaled ? ag : scaled);
    m[i] = mi;
    u[i] = ui;
    w[i] = decayed(w[i], lr, weight_decay) - lr_t * mi / (ui + epsilon);
}

// Adam(amsgrad=True): m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; v_hat = max(v_hat, v) (NaN
// propagates); w -= lr_t m / (sqrt(v_hat) + eps), lr_t = lr sqrt(1 - b2^t) / (1 - b1^t)
__kernel void amsgrad_update(__global float *w, __global const float *g, __global float *m,
                             __global float *v, __global float *v_hat, const float lr, const float lr_t,
                             const float beta_1, const float beta_2, const float epsilon,
                             const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float mi = beta_1 * m[i] + (1.0f - beta_1) * gi;
    const float vi = beta_2 * v[i] + (1.0f - beta_2) * gi * gi;
    const float old = v_hat[i];
    const float vhi = is_nan(vi) ? vi : (vi > old ? vi : old);
    m[i] = mi;
    v[i] = vi;
    v_hat[i] = vhi;
    w[i] = decayed(w[i], lr, weight_decay) - lr_t * mi / (sqrt(vhi) + epsilon);
}

// m += (g - m)(1-b1); v += (g^2 - v)(1-b2); w -= lr (c_m m + c_g g) / (sqrt(v v_scale) + eps)
__kernel void nadam_update(__global float *w, __global const float *g, __global float *m,
                           __global float *v, const float lr, const float beta_1, const float beta_2,
                           const float epsilon, const float c_m, const float c_g, const float v_scale,
                           const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * (1.0f - beta_1);
    const float vi = v[i] + (gi * gi - v[i]) * (1.0f - beta_2);
    m[i] = mi;
    v[i] = vi;
    w[i] = decayed(w[i], lr, weight_decay) - lr * (c_m * mi + c_g * gi) / (sqrt(vi * v_scale) + epsilon);
}

// w -= lr sign(b1 m + (1-b1) g) (NaN stays NaN: OpenCL's sign() would give 0); m = b2 m + (1-b2) g
__kernel void lion_update(__global float *w, __global const float *g, __global float *m,
                          const float lr, const float beta_1, const float beta_2,
                          const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i], mi = m[i];
    const float d = beta_1 * mi + (1.0f - beta_1) * gi;
    const float s = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : d);
    w[i] = decayed(w[i], lr, weight_decay) - lr * s;
    m[i] = beta_2 * mi + (1.0f - beta_2) * gi;
}

inline float ftrl_power(const float x, const float power)
{
    return power == 0.5f ? sqrt(x) : pow(x, power);
}

// Keras Ftrl, power = -learning_rate_power, l2 = l2_regularization_strength + beta / (2 lr)
__kernel void ftrl_update(__global float *w, __global const float *g, __global float *acc,
                          __global float *linear, const float lr, const float power, const float l1,
                          const float l2, const float l2_shrinkage, const float weight_decay,
                          const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i], wi = decayed(w[i], lr, weight_decay), a = acc[i];
    const float new_acc = a + gi * gi;
    const float p_new = ftrl_power(new_acc, power), p_old = ftrl_power(a, power);
    const float li = linear[i] + (gi + 2.0f * l2_shrinkage * wi) - (p_new - p_old) / lr * wi;
    const float quadratic = p_new / lr + 2.0f * l2;
    const float clipped = li < -l1 ? -l1 : (li > l1 ? l1 : li);
    linear[i] = li;
    w[i] = (clipped - li) / quadratic;
    acc[i] = new_acc;
}

// average = momentum average + (1 - momentum) w
__kernel void ema_update(__global float *average, __global const float *w, const float momentum,
                         const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    average[i] = momentum * average[i] + (1.0f - momentum) * w[i];
}
