// Fused optimizer updates: one pass over w, its gradient g and its state, one work-item per
// element. Decoupled weight decay (AdamW-style) shrinks w by lr * weight_decay * w first.

// w -= lr * g
__kernel void sgd_update(__global float *w, __global const float *g, const float lr,
                         const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float wi = decayed(w[i], lr, weight_decay);
    w[i] = wi - lr * g[i];
}

// velocity = momentum * velocity - lr * g; w += velocity (nesterov: w += momentum * velocity - lr * g)
__kernel void sgd_momentum_update(__global float *w, __global const float *g,
                                  __global float *velocity, const float lr, const float momentum,
                                  const int nesterov, const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float v = momentum * velocity[i] - lr * gi;
    velocity[i] = v;
    const float wi = decayed(w[i], lr, weight_decay);
    w[i] = nesterov ? wi + momentum * v - lr * gi : wi + v;
}

// lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), computed on the host from the step number
__kernel void adam_update(__global float *w, __global const float *g, __global float *m,
                          __global float *v, const float lr, const float lr_t, const float beta_1,
                          const float beta_2, const float epsilon, const float weight_decay,
                          const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float mi = beta_1 * m[i] + (1.0f - beta_1) * gi;
    const float vi = beta_2 * v[i] + (1.0f - beta_2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float wi = decayed(w[i], lr, weight_decay);
    w[i] = wi - lr_t * mi / (sqrt(vi) + epsilon);
}

// ms = rho ms + (1 - rho) g^2; inc = lr g / sqrt(ms + epsilon);
// with momentum: mom = momentum mom + inc, w -= mom; else w -= inc (mom is then unused)
__kernel void rmsprop_update(__global float *w, __global const float *g, __global float *ms,
                             __global float *mom, const int use_momentum, const float lr,
                             const float rho, const float momentum, const float epsilon,
                             const float weight_decay, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float msi = rho * ms[i] + (1.0f - rho) * gi * gi;
    ms[i] = msi;
    float step = lr * gi / sqrt(msi + epsilon);
    if (use_momentum) {
        step += momentum * mom[i];
        mom[i] = step;
    }
    const float wi = decayed(w[i], lr, weight_decay);
    w[i] = wi - step;
}

// acc += g^2; w -= lr g / sqrt(acc + epsilon)
__kernel void adagrad_update(__global float *w, __global const float *g, __global float *acc,
                             const float lr, const float epsilon, const float weight_decay,
                             const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float a = acc[i] + gi * gi;
    acc[i] = a;
    const float wi = decayed(w[i], lr, weight_decay);
    w[i] = wi - lr * gi / sqrt(a + epsilon);
}
