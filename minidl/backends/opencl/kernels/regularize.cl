// Keras's L1/L2 penalties and their gradients, and the norm constraints (MaxNorm, MinMaxNorm,
// UnitNorm) on device tensors.

// partial[part] = l1 * sum|x| + l2 * sum x^2 over the part's chunk of x (first pass)
__kernel void l1_l2_partial(__global float *partial, __global const float *x, const float l1,
                            const float l2, const int n, const int parts, const int chunk)
{
    const int part = get_global_id(0);
    if (part >= parts) return;
    const int end = min(n, (part + 1) * chunk);
    float a = 0.0f, s = 0.0f;
    for (int i = part * chunk; i < end; ++i) {
        a += fabs(x[i]);
        s += x[i] * x[i];
    }
    partial[part] = l1 * a + l2 * s;
}

// out[0] (+)= the sum of the partials (second pass, one work-item)
__kernel void l1_l2_finish(__global float *out, __global const float *partial, const int parts,
                           const int accumulate)
{
    if (get_global_id(0) != 0) return;
    float s = 0.0f;
    for (int p = 0; p < parts; ++p) s += partial[p];
    out[0] = accumulate ? out[0] + s : s;
}

// g += l1 * sign(w) + 2 * l2 * w (sign(NaN) stays NaN; OpenCL's sign() would give 0)
__kernel void l1_l2_gradient(__global float *g, __global const float *w, const float l1,
                             const float l2, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float x = w[i];
    const float s = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    g[i] += l1 * s + 2.0f * l2 * x;
}

// w is (outer, reduce, inner); work-item v scales the vector (v / inner, :, v % inner) by
// desired / (1e-7 + norm), desired = rate * clip(norm, min_value, max_value) + (1 - rate) * norm
__kernel void norm_constraint(__global float *w, const int outer, const int reduce, const int inner,
                              const float min_value, const float max_value, const float rate)
{
    const int v = get_global_id(0);
    if (v >= outer * inner) return;
    __global float *base = w + (long)(v / inner) * reduce * inner + v % inner;
    float sq = 0.0f;
    for (int r = 0; r < reduce; ++r) sq += base[(long)r * inner] * base[(long)r * inner];
    const float norm = sqrt(sq);
    const float desired = rate * clip_nan(norm, min_value, max_value) + (1.0f - rate) * norm;
    const float factor = desired / (1e-7f + norm);
    for (int r = 0; r < reduce; ++r) base[(long)r * inner] *= factor;
}

// ------------------------------------------------------------ OrthogonalRegularizer
// m vectors of k elements, element t of vector i at w[i * sv + t * se]; n (m, k) receives the
// normalized vectors, inv (m) 1 / the norm (squared norm floored at 1e-12; negative: floored)
__kernel void orthogonal_normalize(__global float *n, __global float *inv, __global const float *w,
                                   const int m, const int k, const int sv, const int se)
{
    const int i = get_global_id(0);
    if (i >= m) return;
    float sq = 0.0f;
    for (int t = 0; t < k; ++t) sq += w[(long)i * sv + (long)t * se] * w[(long)i * sv + (long)t * se];
    const float r = rsqrt(sq > 1e-12f ? sq : 1e-12f);
    for (int t = 0; t < k; ++t) n[(long)i * k + t] = w[(long)i * sv + (long)t * se] * r;
    inv[i] = sq > 1e-12f ? r : -r;
}

inline float row_dot(__global const float *a, __global const float *b, const int k)
{
    float s = 0.0f;
    for (int t = 0; t < k; ++t) s += a[t] * b[t];
    return s;
}

// partial[i] = scale * sum over j != i of |n_i . n_j| (l1_l2_finish adds the partials up)
__kernel void orthogonal_partial(__global float *partial, __global const float *n, const int m,
                                 const int k, const float scale)
{
    const int i = get_global_id(0);
    if (i >= m) return;
    float s = 0.0f;
    for (int j = 0; j < m; ++j)
        if (j != i) s += fabs(row_dot(n + (long)i * k, n + (long)j * k, k));
    partial[i] = scale * s;
}

// g (vector i) += (dn - (dn . n_i) n_i) / norm, dn = c2 * sum over j != i of sign(n_i . n_j) n_j;
// dn is written to the scratch rows d (m, k)
__kernel void orthogonal_gradient(__global float *g, __global float *d, __global const float *n,
                                  __global const float *inv, const int m, const int k, const int sv,
                                  const int se, const float c2)
{
    const int i = get_global_id(0);
    if (i >= m) return;
    __global const float *ni = n + (long)i * k;
    __global float *di = d + (long)i * k;
    for (int t = 0; t < k; ++t) di[t] = 0.0f;
    for (int j = 0; j < m; ++j) {
        if (j == i) continue;
        const float dot = row_dot(ni, n + (long)j * k, k);
        const float s = dot > 0.0f ? 1.0f : (dot < 0.0f ? -1.0f : 0.0f);
        for (int t = 0; t < k; ++t) di[t] += s * n[(long)j * k + t];
    }
    const float along = inv[i] < 0.0f ? 0.0f : row_dot(di, ni, k);
    const float r = fabs(inv[i]);
    for (int t = 0; t < k; ++t) g[(long)i * sv + (long)t * se] += r * c2 * (di[t] - along * ni[t]);
}
