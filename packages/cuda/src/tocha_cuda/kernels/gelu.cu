// gelu, exact (erf) or with the tanh approximation, forward and backward; elementwise over
// n contiguous values.

#define SQRT_HALF 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define TANH_K 0.79788456080286535588  // sqrt(2 / pi)
#define TANH_C 0.044715

// y = x * Phi(x), or 0.5 x (1 + tanh(k (x + c x^3))) with tanh_approx.
extern "C" __global__ void gelu_forward(const scalar_t* x, scalar_t* y, long long n,
                                        int tanh_approx) {
  for (long long i = grid_start(); i < n; i += grid_stride()) {
    scalar_t v = x[i];
    scalar_t inner = tanh_approx ? tanh(scalar_t(TANH_K) * (v + scalar_t(TANH_C) * v * v * v))
                                 : erf(v * scalar_t(SQRT_HALF));
    y[i] = scalar_t(0.5) * v * (scalar_t(1) + inner);
  }
}

// dx = g * gelu'(x).
extern "C" __global__ void gelu_backward(const scalar_t* g, const scalar_t* x, scalar_t* dx,
                                         long long n, int tanh_approx) {
  for (long long i = grid_start(); i < n; i += grid_stride()) {
    scalar_t v = x[i], d;
    if (tanh_approx) {
      scalar_t v2 = v * v;
      scalar_t t = tanh(scalar_t(TANH_K) * (v + scalar_t(TANH_C) * v2 * v));
      scalar_t dt = (scalar_t(1) - t * t) * scalar_t(TANH_K) * (scalar_t(1) + scalar_t(3 * TANH_C) * v2);
      d = scalar_t(0.5) * (scalar_t(1) + t) + scalar_t(0.5) * v * dt;
    } else {
      scalar_t cdf = scalar_t(0.5) * (scalar_t(1) + erf(v * scalar_t(SQRT_HALF)));
      d = cdf + v * exp(scalar_t(-0.5) * v * v) * scalar_t(INV_SQRT_2PI);
    }
    dx[i] = g[i] * d;
  }
}
