// CUDA's thread model on the CPU, for testing tocha-cuda's kernels without a GPU: each
// block's threads are std::threads meeting at a std::barrier for __syncthreads(); blocks
// run one after another, so a block's __shared__ arrays can be function statics.
#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

using std::erf;
using std::exp;
using std::log;
using std::sqrt;
using std::tanh;

struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
};

static thread_local dim3 threadIdx;
static dim3 blockIdx, blockDim, gridDim;
static std::barrier<>* block_barrier;

#define __global__
#define __device__ static inline
#define __shared__ static

static inline float __int_as_float(unsigned int bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

static inline void __syncthreads() { block_barrier->arrive_and_wait(); }

// Run `body` as a (gx, gy) grid of blocks of bx threads.
template <class Body>
void emulate_launch(unsigned int gx, unsigned int gy, unsigned int bx, Body body) {
  gridDim = {gx, gy, 1};
  blockDim = {bx, 1, 1};
  for (unsigned int y = 0; y < gy; ++y) {
    for (unsigned int x = 0; x < gx; ++x) {
      blockIdx = {x, y, 0};
      std::barrier<> barrier(bx);
      block_barrier = &barrier;
      std::vector<std::thread> threads;
      for (unsigned int t = 0; t < bx; ++t) {
        threads.emplace_back([t, &body] {
          threadIdx = {t, 0, 0};
          body();
        });
      }
      for (auto& thread : threads) thread.join();
    }
  }
}
