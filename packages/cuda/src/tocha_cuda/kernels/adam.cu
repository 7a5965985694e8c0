// Adam and AdamW over every parameter of a group in one launch: the parameters and
// gradients are separate arrays (a table of their addresses), the moments are flat arrays
// of the group's total size, and `offsets` gives where each parameter starts in them.

#define AMSGRAD 1
#define MAXIMIZE 2
#define DECOUPLED 4

// Which parameter flat index i falls in: the last j with offsets[j] <= i.
__device__ int parameter_of(const long long* offsets, int count, long long i) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= i) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// One Adam step of every element, with PyTorch's order of operations: weight decay
// (decoupled: p *= 1 - lr * wd; else d = g + wd * p), m.lerp_(d, 1 - beta1),
// v = v * beta2 + (1 - beta2) * d * d, then p -= step_size * m / (sqrt(v) / bias2_sqrt +
// eps), with v replaced by its running maximum under AMSGrad.
extern "C" __global__ void adam_step(const unsigned long long* params,
                                     const unsigned long long* grads, const long long* offsets,
                                     int count, scalar_t* exp_avg, scalar_t* exp_avg_sq,
                                     scalar_t* max_exp_avg_sq, long long total, double lr,
                                     double beta1, double beta2, double eps,
                                     double weight_decay, double step_size, double bias2_sqrt,
                                     int flags) {
  for (long long i = grid_start(); i < total; i += grid_stride()) {
    int j = parameter_of(offsets, count, i);
    long long k = i - offsets[j];
    scalar_t* p = (scalar_t*)params[j] + k;
    scalar_t d = ((const scalar_t*)grads[j])[k];
    if (flags & MAXIMIZE) d = -d;
    if (weight_decay != 0) {
      if (flags & DECOUPLED) *p *= scalar_t(1 - lr * weight_decay);
      else d += scalar_t(weight_decay) * *p;
    }
    scalar_t w = scalar_t(1 - beta1);
    scalar_t m = exp_avg[i];
    m = w < scalar_t(0.5) ? m + w * (d - m) : d - (d - m) * (scalar_t(1) - w);
    exp_avg[i] = m;
    scalar_t v = exp_avg_sq[i] * scalar_t(beta2) + d * scalar_t(1 - beta2) * d;
    exp_avg_sq[i] = v;
    if (flags & AMSGRAD) {
      if (max_exp_avg_sq[i] > v) v = max_exp_avg_sq[i];
      max_exp_avg_sq[i] = v;
    }
    scalar_t denom = sqrt(v) / scalar_t(bias2_sqrt) + scalar_t(eps);
    *p -= m / denom * scalar_t(step_size);
  }
}
