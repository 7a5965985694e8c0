// layer_norm over the last n values of each row of a (rows, n) array: forward, the input's
// gradient (one block per row) and the weight and bias gradients (column sums in chunks).

// y = (x - mean) * rstd (* w) (+ b) per row; mean and rstd of each row are kept for the
// backward. w and b are read only when has_w / has_b are set.
extern "C" __global__ void layer_norm_forward(const scalar_t* x, const scalar_t* w,
                                              const scalar_t* b, scalar_t* y, scalar_t* mean,
                                              scalar_t* rstd, long long n, double eps,
                                              int has_w, int has_b) {
  __shared__ scalar_t smem[MAX_THREADS];
  long long base = (long long)blockIdx.x * n;
  scalar_t s = 0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) s += x[base + j];
  scalar_t mu = block_sum(s, smem) / n;
  scalar_t q = 0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    scalar_t d = x[base + j] - mu;
    q += d * d;
  }
  scalar_t r = scalar_t(1) / sqrt(block_sum(q, smem) / n + scalar_t(eps));
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    scalar_t v = (x[base + j] - mu) * r;
    if (has_w) v *= w[j];
    if (has_b) v += b[j];
    y[base + j] = v;
  }
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = mu;
    rstd[blockIdx.x] = r;
  }
}

// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) per row, with gw = g * w (or g) and
// xhat = (x - mean) * rstd.
extern "C" __global__ void layer_norm_backward_input(const scalar_t* g, const scalar_t* x,
                                                     const scalar_t* mean, const scalar_t* rstd,
                                                     const scalar_t* w, scalar_t* dx,
                                                     long long n, int has_w) {
  __shared__ scalar_t smem[MAX_THREADS];
  long long base = (long long)blockIdx.x * n;
  scalar_t mu = mean[blockIdx.x], r = rstd[blockIdx.x];
  scalar_t sum_gw = 0, sum_gw_xhat = 0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    scalar_t gw = has_w ? g[base + j] * w[j] : g[base + j];
    sum_gw += gw;
    sum_gw_xhat += gw * (x[base + j] - mu) * r;
  }
  scalar_t mean_gw = block_sum(sum_gw, smem) / n;
  scalar_t mean_gw_xhat = block_sum(sum_gw_xhat, smem) / n;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    scalar_t gw = has_w ? g[base + j] * w[j] : g[base + j];
    scalar_t xhat = (x[base + j] - mu) * r;
    dx[base + j] = r * (gw - mean_gw - xhat * mean_gw_xhat);
  }
}

// Partial column sums of g * xhat (the weight's gradient) and of g (the bias's): block
// (blockIdx.x, blockIdx.y) sums columns blockIdx.x * blockDim.x + threadIdx.x over the rows
// of chunk blockIdx.y, into row blockIdx.y of the (chunks, n) arrays dw and db.
extern "C" __global__ void layer_norm_backward_params(const scalar_t* g, const scalar_t* x,
                                                      const scalar_t* mean,
                                                      const scalar_t* rstd, scalar_t* dw,
                                                      scalar_t* db, long long rows, long long n,
                                                      long long chunk) {
  long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  long long first = (long long)blockIdx.y * chunk;
  long long last = first + chunk < rows ? first + chunk : rows;
  scalar_t sw = 0, sb = 0;
  for (long long i = first; i < last; ++i) {
    scalar_t gv = g[i * n + j];
    sw += gv * (x[i * n + j] - mean[i]) * rstd[i];
    sb += gv;
  }
  dw[(long long)blockIdx.y * n + j] = sw;
  db[(long long)blockIdx.y * n + j] = sb;
}
