// cross_entropy with class-index targets over a (rows, n) array of scores: the forward (one
// block per row) keeps the softmax probabilities for the backward (elementwise). Targets are
// in [0, n) and each row's weight is given (the caller checks and weighs the targets).

// Per row r: probs[r] = softmax(x[r]); loss[r] = (logsumexp(x[r]) - x[r, target[r]]) * wt[r],
// where wt[r] is the row's weight (0 for an ignored row, whose target is then 0).
extern "C" __global__ void cross_entropy_forward(const scalar_t* x, const long long* target,
                                                 const scalar_t* wt, scalar_t* probs,
                                                 scalar_t* loss, long long n) {
  __shared__ scalar_t smem[MAX_THREADS];
  const scalar_t* row = x + (long long)blockIdx.x * n;
  scalar_t* p = probs + (long long)blockIdx.x * n;
  scalar_t m = row_max(row, n, smem);
  scalar_t s = row_sum_exp(row, n, m, smem);
  scalar_t inv = scalar_t(1) / s;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) p[j] = exp(row[j] - m) * inv;
  if (threadIdx.x == 0) loss[blockIdx.x] = (m + log(s) - row[target[blockIdx.x]]) * wt[blockIdx.x];
}

// grad[r, j] = coef[r] * (probs[r, j] - (j == target[r])), over rows * n elements.
extern "C" __global__ void cross_entropy_backward(const scalar_t* probs, const long long* target,
                                                  const scalar_t* coef, scalar_t* grad,
                                                  long long rows, long long n) {
  long long total = rows * n;
  for (long long i = grid_start(); i < total; i += grid_stride()) {
    long long r = i / n;
    scalar_t hit = (i - r * n) == target[r] ? scalar_t(1) : scalar_t(0);
    grad[i] = coef[r] * (probs[i] - hit);
  }
}
