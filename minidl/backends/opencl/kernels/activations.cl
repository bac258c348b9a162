// The elementwise activations (softmax has row kernels in loss.cl): one work-item per element.
// Written like minidl/backends/numpy_ops/activations.py, formula for formula, so that NaN and
// +-inf come out where numpy's do (inf * 0 = NaN in the same places); max_nan / clip_nan
// (common.cl) keep NaN where OpenCL's fmax / clamp would drop it. Outputs may alias inputs.

// Activation codes: positions in minidl/activations.py (ACTIVATIONS).
#define ACT_LINEAR 0
#define ACT_RELU 1
#define ACT_LEAKY_RELU 2
#define ACT_SIGMOID 3
#define ACT_TANH 4
#define ACT_GELU 6
#define ACT_GELU_TANH 7
#define ACT_SILU 8
#define ACT_ELU 9
#define ACT_SELU 10
#define ACT_SOFTPLUS 11
#define ACT_SOFTSIGN 12
#define ACT_HARD_SIGMOID 13
#define ACT_HARD_SILU 14
#define ACT_MISH 15
#define ACT_EXPONENTIAL 16
#define ACT_RELU6 17

#define SELU_ALPHA 1.6732632423543772848170429916717f
#define SELU_SCALE 1.0507009873554804934193349852946f
#define GELU_C 0.7978845608028654f      // sqrt(2 / pi)

float sigmoid(const float x)
{
    // never exponentiates a large positive number
    if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));
    const float e = exp(x);
    return e / (1.0f + e);
}

float softplus(const float x)
{
    return max_nan(x, 0.0f) + log1p(exp(-fabs(x)));
}

// tanh(softplus(x)) = n / (n + 2) with n = e^x (e^x + 2), as 1 - 2 / (n + 2) for x >= 0 where n
// may be inf: exactly 1 at +inf (PoCL's tanh(inf) is 0.99999994, and mish'(inf) must be
// inf * 0 = NaN as numpy's)
float tanh_softplus(const float x)
{
    const float e = exp(x), n = e * (e + 2.0f);
    return x < 0.0f ? n / (n + 2.0f) : 1.0f - 2.0f / (n + 2.0f);
}

// 2u of gelu_approximate = x sigmoid(2u) = 0.5 x (1 + tanh u): no cancellation near saturation
float gelu_two_u(const float x)
{
    return 2.0f * GELU_C * (x + 0.044715f * x * x * x);
}

__kernel void activation_forward(__global float *out, __global const float *x, const int code,
                                 const float alpha, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float v = x[i];
    float y;
    switch (code) {
    case ACT_RELU: y = max_nan(v, 0.0f); break;
    case ACT_LEAKY_RELU: y = v > 0.0f ? v : alpha * v; break;
    case ACT_SIGMOID: y = sigmoid(v); break;
    case ACT_TANH: y = tanh(v); break;
    case ACT_GELU: y = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;
    case ACT_GELU_TANH: y = v * sigmoid(gelu_two_u(v)); break;
    case ACT_SILU: y = v * sigmoid(v); break;
    case ACT_ELU: y = v > 0.0f ? v : alpha * expm1(v); break;
    case ACT_SELU: y = SELU_SCALE * (v > 0.0f ? v : SELU_ALPHA * expm1(v)); break;
    case ACT_SOFTPLUS: y = softplus(v); break;
    case ACT_SOFTSIGN: y = v / (1.0f + fabs(v)); break;
    case ACT_HARD_SIGMOID: y = clip_nan(v / 6.0f + 0.5f, 0.0f, 1.0f); break;
    case ACT_HARD_SILU: y = v * clip_nan(v / 6.0f + 0.5f, 0.0f, 1.0f); break;
    case ACT_MISH: y = v * tanh_softplus(v); break;
    case ACT_EXPONENTIAL: y = exp(v); break;
    case ACT_RELU6: y = clip_nan(v, 0.0f, 6.0f); break;
    default: y = v;
    }
    out[i] = y;
}

// dx = dout * f'(x): y is the forward output f(x), xin its input (read by gelu, gelu_tanh,
// silu, elu, softplus, hard_silu and mish; the backend passes y again for the others).
__kernel void activation_backward(__global float *dx, __global const float *dout,
                                  __global const float *y, __global const float *xin,
                                  const int code, const float alpha, const int n)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float d = dout[i];
    const float v = y[i];
    float g;
    switch (code) {
    case ACT_RELU: g = v > 0.0f ? d : 0.0f; break;
    case ACT_LEAKY_RELU: g = v > 0.0f ? d : alpha * d; break;
    case ACT_SIGMOID: g = d * v * (1.0f - v); break;
    case ACT_TANH: g = d * (1.0f - v * v); break;
    case ACT_GELU: {
        const float u = xin[i];
        g = d * (0.5f * (1.0f + erf(u * 0.70710678118654752f)) + u * exp(-0.5f * u * u) * 0.3989422804014327f);
        break;
    }
    case ACT_GELU_TANH: {
        const float u = xin[i], two_u = gelu_two_u(u);
        const float s = sigmoid(two_u), sn = sigmoid(-two_u);
        g = d * (s + 2.0f * u * s * sn * GELU_C * (1.0f + 3.0f * 0.044715f * u * u));
        break;
    }
    case ACT_SILU: {
        const float s = sigmoid(xin[i]);
        g = d * (s * (1.0f + xin[i] * (1.0f - s)));
        break;
    }
    case ACT_ELU: g = d * (xin[i] > 0.0f ? 1.0f : v + alpha); break;
    case ACT_SELU: g = d * (v > 0.0f ? SELU_SCALE : v + SELU_SCALE * SELU_ALPHA); break;
    case ACT_SOFTPLUS: g = d * sigmoid(xin[i]); break;
    case ACT_SOFTSIGN: g = d * ((1.0f - fabs(v)) * (1.0f - fabs(v))); break;
    case ACT_HARD_SIGMOID: g = d * (v > 0.0f && v < 1.0f ? 1.0f / 6.0f : 0.0f); break;
    case ACT_HARD_SILU: {
        const float u = xin[i];
        g = d * (u < -3.0f ? 0.0f : (u > 3.0f ? 1.0f : (2.0f * u + 3.0f) / 6.0f));
        break;
    }
    case ACT_MISH: {
        const float u = xin[i], t = tanh_softplus(u);
        g = d * (t + u * (1.0f - t * t) * sigmoid(u));
        break;
    }
    case ACT_EXPONENTIAL: g = d * v; break;
    case ACT_RELU6: g = d * (v > 0.0f && v < 6.0f ? 1.0f : 0.0f); break;
    default: g = d;
    }
    dx[i] = g;
}
