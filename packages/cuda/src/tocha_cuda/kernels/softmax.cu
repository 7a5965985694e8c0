// softmax and log_softmax over the last axis of a (rows, n) array, forward and backward.
// One block per row.

// y = softmax(x) or log_softmax(x), row by row.
extern "C" __global__ void softmax_forward(const scalar_t* x, scalar_t* y, long long n,
                                           int log_softmax) {
  __shared__ scalar_t smem[MAX_THREADS];
  const scalar_t* row = x + (long long)blockIdx.x * n;
  scalar_t* out = y + (long long)blockIdx.x * n;
  scalar_t m = row_max(row, n, smem);
  scalar_t s = row_sum_exp(row, n, m, smem);
  if (log_softmax) {
    scalar_t lse = m + log(s);
    for (long long j = threadIdx.x; j < n; j += blockDim.x) out[j] = row[j] - lse;
  } else {
    scalar_t inv = scalar_t(1) / s;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) out[j] = exp(row[j] - m) * inv;
  }
}

// The input gradient from the output gradient g and the forward's output y:
// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
extern "C" __global__ void softmax_backward(const scalar_t* g, const scalar_t* y, scalar_t* dx,
                                            long long n, int log_softmax) {
  __shared__ scalar_t smem[MAX_THREADS];
  long long base = (long long)blockIdx.x * n;
  scalar_t s = 0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x)
    s += log_softmax ? g[base + j] : g[base + j] * y[base + j];
  s = block_sum(s, smem);
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    long long i = base + j;
    dx[i] = log_softmax ? g[i] - exp(y[i]) * s : y[i] * (g[i] - s);
  }
}
