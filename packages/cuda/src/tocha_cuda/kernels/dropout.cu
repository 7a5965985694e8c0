// dropout with its own random numbers: Philox4x32-10 keyed by the generator's seed, its
// counter made of the generator's offset and the element's index, so one launch both draws
// and applies the mask.

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// The high and low 32 bits of a * b.
__device__ void mul_hi_lo(unsigned int a, unsigned int b, unsigned int* hi, unsigned int* lo) {
  unsigned long long p = (unsigned long long)a * b;
  *hi = (unsigned int)(p >> 32);
  *lo = (unsigned int)p;
}

// Philox4x32-10: four 32-bit words from the counter c and the key k (Salmon et al., 2011).
__device__ void philox4x32_10(unsigned int c[4], unsigned int k0, unsigned int k1) {
  for (int round = 0; round < 10; ++round) {
    unsigned int hi0, lo0, hi1, lo1;
    mul_hi_lo(PHILOX_M0, c[0], &hi0, &lo0);
    mul_hi_lo(PHILOX_M1, c[2], &hi1, &lo1);
    unsigned int next[4] = {hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0};
    c[0] = next[0];
    c[1] = next[1];
    c[2] = next[2];
    c[3] = next[3];
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
}

// The Philox words of counter (index, offset): word 0 of a block of four, as exported for
// the tests.
extern "C" __global__ void philox_words(unsigned int* out, long long n, unsigned long long seed,
                                        unsigned long long offset) {
  for (long long i = grid_start(); i < n; i += grid_stride()) {
    unsigned int c[4] = {(unsigned int)i, (unsigned int)((unsigned long long)i >> 32),
                         (unsigned int)offset, (unsigned int)(offset >> 32)};
    philox4x32_10(c, (unsigned int)seed, (unsigned int)(seed >> 32));
    out[4 * i] = c[0];
    out[4 * i + 1] = c[1];
    out[4 * i + 2] = c[2];
    out[4 * i + 3] = c[3];
  }
}

// y = x * keep * scale and mask = keep, where keep is u >= p for u uniform on [0, 1) (24
// random bits of the element's first Philox word).
extern "C" __global__ void dropout_forward(const scalar_t* x, scalar_t* y, bool* mask,
                                           long long n, double p, double scale,
                                           unsigned long long seed, unsigned long long offset) {
  for (long long i = grid_start(); i < n; i += grid_stride()) {
    unsigned int c[4] = {(unsigned int)i, (unsigned int)((unsigned long long)i >> 32),
                         (unsigned int)offset, (unsigned int)(offset >> 32)};
    philox4x32_10(c, (unsigned int)seed, (unsigned int)(seed >> 32));
    double u = (c[0] >> 8) * (1.0 / 16777216.0);
    bool keep = u >= p;
    mask[i] = keep;
    y[i] = keep ? x[i] * scalar_t(scale) : scalar_t(0);
  }
}
