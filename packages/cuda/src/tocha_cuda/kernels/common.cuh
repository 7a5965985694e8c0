// Helpers shared by tocha-cuda's kernels. Every kernel file is compiled once per element
// type, with scalar_t defined on the command line (float or double); arithmetic is done in
// scalar_t. Row kernels run one block per row, with a power-of-two block of at most
// MAX_THREADS threads; elementwise kernels use grid-stride loops.

#define MAX_THREADS 1024

// -inf (NVRTC has no math.h, hence no INFINITY).
#define NEG_INFINITY __int_as_float(0xff800000)

// The sum of `v` over the block's threads, returned to every thread. `smem` holds
// blockDim.x values.
__device__ scalar_t block_sum(scalar_t v, scalar_t* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s];
    __syncthreads();
  }
  scalar_t total = smem[0];
  __syncthreads();
  return total;
}

// The maximum of `v` over the block's threads (NaN if any thread holds NaN).
__device__ scalar_t block_max(scalar_t v, scalar_t* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      scalar_t other = smem[threadIdx.x + s];
      if (other > smem[threadIdx.x] || other != other) smem[threadIdx.x] = other;
    }
    __syncthreads();
  }
  scalar_t top = smem[0];
  __syncthreads();
  return top;
}

// The maximum of a row of `n` values, each thread reading a strided part.
__device__ scalar_t row_max(const scalar_t* row, long long n, scalar_t* smem) {
  scalar_t m = NEG_INFINITY;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    scalar_t v = row[j];
    if (v > m || v != v) m = v;
  }
  return block_max(m, smem);
}

// sum_j exp(row[j] - m) over a row of `n` values.
__device__ scalar_t row_sum_exp(const scalar_t* row, long long n, scalar_t m, scalar_t* smem) {
  scalar_t s = 0;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) s += exp(row[j] - m);
  return block_sum(s, smem);
}

// The first element of this thread in a grid-stride loop, and the stride.
__device__ long long grid_start() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ long long grid_stride() { return (long long)gridDim.x * blockDim.x; }
