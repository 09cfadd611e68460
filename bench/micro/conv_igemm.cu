// Diagnostic microbenchmark (not built by EGG): a tap-major implicit-GEMM convolution on TF32
// tensor cores (mma.sync m16n8k8), reading NCHW and writing NCHW with the bias and tanh fused,
// against the conv family's structure today (cuDNN in channels-last: the input transposed, the
// convolution, a transposing pass) whose parts bench/micro/transpose_pass.cu and
// conv_igemm_torch.py time. Each variant is checked against an exact fp32 direct convolution.
// Timed as egg-harness measures (L2 flushed before each trial, CUDA events, median of 30).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/micro/conv_igemm.cu -o /tmp/conv_igemm && /tmp/conv_igemm
//   /tmp/conv_igemm one   # the first shape's 128x128 tile only (for ncu)
//
// The GEMM: M = output pixels, N = output channels, K = window taps x input channels, in that
// order (tap-major), so that a K tile of BK channels lies in one tap: a thread's pixel has one
// input offset per tap, checked for the padding once, and its tile rows are that offset plus a
// channel's plane each (one multiply-add an element, where a channel-major order divides k into
// channel and taps for every element). This is the sixteenth session's kernel: shared tiles [k][m]
// and [k][n], scalar fragment reads. The product's kernel (templates/conv/igemm.cuh.tmpl) has
// since kept its tiles in fragment order (16-byte fragment reads, B rounded by the weight copy;
// docs/PERFORMANCE.md, seventeenth session), which this file does not follow. The weight is first
// copied to [tap][channel][out channel] (a small kernel, timed as part of each call) so the B tile
// is read 16 bytes a copy. Tiles go global -> shared by cp.async, STAGES deep; fragments are
// rounded to TF32 (cvt.rna) as the tensor cores expect. The NHWC variants first copy x
// channels-last (timed in the call, as cuDNN's channels-last route does) and fill the A tile 16
// bytes a copy: whether the NCHW tile's 4-byte copies are what holds the kernel back.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "check.h"
#include "timing.h"

namespace {

struct Geo {
  int n, c, k, h, w, r, s, stride, pad, oh, ow;
};

// fp32 -> TF32 operand bits. ROUND 0: cvt.rna (a conversion instruction); 1: the same rounding
// (to nearest, ties away) by integer add and mask; 2: the raw bits (the tensor cores read the top
// 19, which truncates).
template <int ROUND>
__device__ __forceinline__ unsigned tf32r(float v) {
  if constexpr (ROUND == 0) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
  } else if constexpr (ROUND == 1) {
    return (__float_as_uint(v) + 0x1000u) & 0xffffe000u;
  } else {
    return __float_as_uint(v);
  }
}

__device__ __forceinline__ void cp4(float* smem, const float* g, bool pred) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(g),
               "r"(pred ? 4 : 0));
}

__device__ __forceinline__ void cp16(float* smem, const float* g, bool pred) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g),
               "r"(pred ? 16 : 0));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void wait_groups() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// w [k][c][r][s] -> wt [r * s][c][k].
__global__ void weight_to_taps(const float* __restrict__ w, float* __restrict__ wt, Geo g) {
  const int i = int(blockIdx.x) * 256 + int(threadIdx.x), taps = g.r * g.s;
  if (i >= g.k * g.c * taps) return;
  const int co = i % g.k, c = i / g.k % g.c, tap = i / g.k / g.c;
  wt[i] = w[(co * g.c + c) * taps + tap];
}

// BM pixels x BN output channels a block, BK channels of one tap a K step, WM x WN warps.
// NHWC = 0: x is NCHW, the A tile As[k][m] filled 4 bytes a copy (a pixel's channels are planes
// apart). NHWC = 1: x is a channels-last copy (made in the call, timed), the A tile As[m][k]
// filled 16 bytes a copy (4 channels of a pixel), rows padded to BK + 4 words so a fragment's
// lanes (m = group, k = t) fall in banks 4 group + t.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int NHWC, int ROUND>
__global__ void __launch_bounds__(WM* WN * 32)
    igemm(const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
          float* __restrict__ out, Geo g) {
  constexpr int kThreads = WM * WN * 32, kWtm = BM / WM, kWtn = BN / WN;
  constexpr int kFm = kWtm / 16, kFn = kWtn / 8;
  // Rows padded by 8 words: a fragment's lanes (k = t, m = group) fall in banks 8 t + group.
  constexpr int kLda = NHWC ? BK + 4 : BM + 8, kLdb = BN + 8;
  constexpr int kAStage = NHWC ? BM * kLda : BK * kLda, kBStage = BK * kLdb;
  constexpr int kAVecs = BM * BK / 4, kAVPer = (kAVecs + WM * WN * 32 - 1) / (WM * WN * 32);
  constexpr int kAStep = kThreads / BM, kAPer = BK / kAStep;
  constexpr int kBVecs = BK * BN / 4, kBPer = (kBVecs + kThreads - 1) / kThreads;
  static_assert(kThreads % BM == 0 && BK % kAStep == 0 && BK % 8 == 0, "A tile mapping");
  static_assert(BN % 4 == 0, "B tile mapping");
  static_assert(kWtm % 16 == 0 && kWtn % 8 == 0, "warp tile");
  extern __shared__ __align__(16) float smem[];
  float* As = smem;
  float* Bs = smem + STAGES * kAStage;
  const long long M = (long long)g.n * g.oh * g.ow, isp = (long long)g.h * g.w;
  const long long m0 = (long long)blockIdx.x * BM;
  const int n0 = int(blockIdx.y) * BN;
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  const int wm = warp / WN, wn = warp % WN, gq = lane / 4, tq = lane % 4;
  // This thread's pixel for the A loads.
  const int ml = tid % BM, kl0 = tid / BM;
  const long long m = m0 + ml;
  const bool m_ok = m < M;
  int img = 0, oh = 0, ow = 0;
  if (m_ok) {
    ow = int(m % g.ow);
    const long long t = m / g.ow;
    oh = int(t % g.oh);
    img = int(t / g.oh);
  }
  const float* ximg = x + (long long)img * g.c * isp;
  const int ct = (g.c + BK - 1) / BK, kt_n = g.r * g.s * ct;
  // NHWC: this thread's kAVPer 16-byte copies a tile: pixel tid / (BK / 4) + i * (threads /
  // (BK / 4)), channels 4 (tid % (BK / 4)).. of the tile.
  constexpr int kQ = BK / 4, kRowsPer = WM * WN * 32 / kQ;
  int v_img[kAVPer], v_oh[kAVPer], v_ow[kAVPer];
  bool v_ok[kAVPer];
  if constexpr (NHWC) {
#pragma unroll
    for (int i = 0; i < kAVPer; ++i) {
      const long long mv = m0 + tid / kQ + i * kRowsPer;
      v_ok[i] = mv < M && tid / kQ + i * kRowsPer < BM;
      const long long mc = v_ok[i] ? mv : 0;
      v_ow[i] = int(mc % g.ow);
      v_oh[i] = int(mc / g.ow % g.oh);
      v_img[i] = int(mc / g.ow / g.oh);
    }
  }
  auto issue = [&](int kt) {
    const int tap = kt / ct, c0 = kt % ct * BK, kh = tap / g.s, kw = tap % g.s;
    float* as = As + kt % STAGES * kAStage;
    if constexpr (NHWC) {
#pragma unroll
      for (int i = 0; i < kAVPer; ++i) {
        const int ih = v_oh[i] * g.stride - g.pad + kh, iw = v_ow[i] * g.stride - g.pad + kw;
        const int c = c0 + 4 * (tid % kQ);
        const bool p =
            v_ok[i] && unsigned(ih) < unsigned(g.h) && unsigned(iw) < unsigned(g.w) && c < g.c;
        cp16(as + (tid / kQ + i * kRowsPer) * kLda + 4 * (tid % kQ),
             p ? x + (((long long)v_img[i] * g.h + ih) * g.w + iw) * g.c + c : x, p);
      }
    } else {
      const int ih = oh * g.stride - g.pad + kh, iw = ow * g.stride - g.pad + kw;
      const bool ok = m_ok && unsigned(ih) < unsigned(g.h) && unsigned(iw) < unsigned(g.w);
      const float* src = ximg + (long long)ih * g.w + iw + (long long)(c0 + kl0) * isp;
#pragma unroll
      for (int i = 0; i < kAPer; ++i) {
        const int kl = kl0 + i * kAStep;
        const bool p = ok && c0 + kl < g.c;
        cp4(as + kl * kLda + ml, p ? src + (long long)(i * kAStep) * isp : x, p);
      }
    }
    float* bs = Bs + kt % STAGES * kBStage;
#pragma unroll
    for (int i = 0; i < kBPer; ++i) {
      const int e = tid + i * kThreads, kl = e / (BN / 4), v = e % (BN / 4);
      if (kBVecs % kThreads != 0 && e >= kBVecs) break;
      const int c = c0 + kl, co = n0 + 4 * v;
      const bool p = c < g.c && co < g.k;
      cp16(bs + kl * kLdb + 4 * v, p ? wt + ((long long)tap * g.c + c) * g.k + co : wt, p);
    }
  };
  float acc[kFm][kFn][4];
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int j = 0; j < kFn; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_n) issue(s);
    commit();
  }
  for (int kt = 0; kt < kt_n; ++kt) {
    wait_groups<STAGES - 2>();
    __syncthreads();  // tile kt landed for everyone; tile kt - 1's stage is free
    if (kt + STAGES - 1 < kt_n) issue(kt + STAGES - 1);
    commit();
    const float* as =
        As + kt % STAGES * kAStage + (NHWC ? (wm * kWtm + gq) * kLda : wm * kWtm + gq);
    const float* bs = Bs + kt % STAGES * kBStage + wn * kWtn + gq;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      unsigned a[kFm][4], b[kFn][2];
#pragma unroll
      for (int i = 0; i < kFm; ++i) {
        if constexpr (NHWC) {  // As[m][k]
          const float* p = as + i * 16 * kLda + kk + tq;
          a[i][0] = tf32r<ROUND>(p[0]);
          a[i][1] = tf32r<ROUND>(p[8 * kLda]);
          a[i][2] = tf32r<ROUND>(p[4]);
          a[i][3] = tf32r<ROUND>(p[8 * kLda + 4]);
        } else {  // As[k][m]
          const float* p = as + (kk + tq) * kLda + i * 16;
          a[i][0] = tf32r<ROUND>(p[0]);
          a[i][1] = tf32r<ROUND>(p[8]);
          a[i][2] = tf32r<ROUND>(p[4 * kLda]);
          a[i][3] = tf32r<ROUND>(p[4 * kLda + 8]);
        }
      }
#pragma unroll
      for (int j = 0; j < kFn; ++j) {
        const float* q = bs + (kk + tq) * kLdb + j * 8;
        b[j][0] = tf32r<ROUND>(q[0]);
        b[j][1] = tf32r<ROUND>(q[4 * kLdb]);
      }
#pragma unroll
      for (int i = 0; i < kFm; ++i)
#pragma unroll
        for (int j = 0; j < kFn; ++j) mma(acc[i][j], a[i], b[j]);
    }
  }
  wait_groups<0>();
  // Epilogue straight from the fragments: lane (group, t) holds pixels group and group + 8 of each
  // 16-row tile, channels 2 t and 2 t + 1 of each 8-column tile; a store writes 8 consecutive
  // pixels of 4 channels (four whole 32-byte sectors).
  const long long osp = (long long)g.oh * g.ow;
#pragma unroll
  for (int i = 0; i < kFm; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long mm = m0 + wm * kWtm + i * 16 + gq + 8 * h;
      if (mm >= M) continue;
      const long long n = mm / osp, sp = mm % osp;
#pragma unroll
      for (int j = 0; j < kFn; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int co = n0 + wn * kWtn + j * 8 + 2 * tq + e;
          if (co < g.k) out[(n * g.k + co) * osp + sp] = tanhf(acc[i][j][2 * h + e] + bias[co]);
        }
    }
}

// x [n][c][hw] -> xt [n][hw][c]: 32 x 32 tiles through shared memory (the conv family's swap).
__global__ void to_nhwc(const float* __restrict__ x, float* __restrict__ xt, int c, int hw) {
  __shared__ float tile[32][33];
  const long long base = (long long)blockIdx.z * c * hw;
  const int p0 = int(blockIdx.x) * 32, c0 = int(blockIdx.y) * 32;
  for (int k = int(threadIdx.y); k < 32; k += 8) {
    const int cc = c0 + k, p = p0 + int(threadIdx.x);
    tile[k][threadIdx.x] = cc < c && p < hw ? x[base + (long long)cc * hw + p] : 0.0f;
  }
  __syncthreads();
  for (int k = int(threadIdx.y); k < 32; k += 8) {
    const int p = p0 + k, cc = c0 + int(threadIdx.x);
    if (cc < c && p < hw) xt[base + (long long)p * c + cc] = tile[threadIdx.x][k];
  }
}

// The exact reference: one output a thread, fp32 multiply-adds in (c, kh, kw) order.
__global__ void direct(const float* __restrict__ x, const float* __restrict__ w,
                       const float* __restrict__ bias, float* __restrict__ out, Geo g) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  const long long osp = (long long)g.oh * g.ow, total = (long long)g.n * g.k * osp;
  if (i >= total) return;
  const int ow = int(i % g.ow), oh = int(i / g.ow % g.oh), co = int(i / osp % g.k);
  const long long n = i / osp / g.k;
  float s = 0.0f;
  for (int c = 0; c < g.c; ++c)
    for (int kh = 0; kh < g.r; ++kh)
      for (int kw = 0; kw < g.s; ++kw) {
        const int ih = oh * g.stride - g.pad + kh, iw = ow * g.stride - g.pad + kw;
        if (unsigned(ih) < unsigned(g.h) && unsigned(iw) < unsigned(g.w))
          s += x[((n * g.c + c) * g.h + ih) * g.w + iw] * w[((co * g.c + c) * g.r + kh) * g.s + kw];
      }
  out[i] = tanhf(s + bias[co]);
}

// The largest |a - b| (as bits: non-negative floats order as integers).
__global__ void max_diff(const float* __restrict__ a, const float* __restrict__ b, long long n,
                         unsigned* worst) {
  float m = 0.0f;
  for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n;
       i += (long long)gridDim.x * 256)
    m = fmaxf(m, fabsf(a[i] - b[i]));
  atomicMax(worst, __float_as_uint(m));
}

__global__ void fill(float* p, long long n, unsigned seed, float scale) {
  for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n;
       i += (long long)gridDim.x * 256) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = scale * (float(h & 0xffffff) / float(0x1000000) - 0.5f);
  }
}

struct Shape {
  const char* name;
  Geo g;
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int NHWC = 0, int ROUND = 0>
int run_variant(const char* label, const Shape& sh, const float* x, const float* w, float* wt,
                const float* bias, float* out, const float* ref, unsigned* worst_d, void* flush,
                size_t flush_bytes, float* xt = nullptr) {
  const Geo& g = sh.g;
  if (g.k % 4 || (NHWC && g.c % 4)) return 0;
  constexpr size_t kSmem =
      size_t(STAGES) * ((NHWC ? BM * (BK + 4) : BK * (BM + 8)) + BK * (BN + 8)) * sizeof(float);
  auto kernel = igemm<BM, BN, BK, WM, WN, STAGES, NHWC, ROUND>;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
  const long long M = (long long)g.n * g.oh * g.ow, total = M * g.k;
  const dim3 grid(unsigned((M + BM - 1) / BM), unsigned((g.k + BN - 1) / BN));
  const int wn = g.k * g.c * g.r * g.s;
  auto call = [&] {
    weight_to_taps<<<(wn + 255) / 256, 256>>>(w, wt, g);
    if (NHWC) {
      const int hw = g.h * g.w;
      to_nhwc<<<dim3((hw + 31) / 32, (g.c + 31) / 32, g.n), dim3(32, 8)>>>(x, xt, g.c, hw);
    }
    kernel<<<grid, WM * WN * 32, kSmem>>>(NHWC ? xt : x, wt, bias, out, g);
  };
  CK(cudaMemset(out, 0, total * 4));
  call();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemset(worst_d, 0, 4));
  max_diff<<<1024, 256>>>(out, ref, total, worst_d);
  unsigned bits = 0;
  CK(cudaMemcpy(&bits, worst_d, 4, cudaMemcpyDeviceToHost));
  float worst = 0;
  std::memcpy(&worst, &bits, 4);
  const float ms = time_cold_ms(call, flush, flush_bytes);
  const double flop = 2.0 * M * g.k * g.c * g.r * g.s;
  printf("%-22s %-34s %8.4f ms %7.1f TFLOP/s  max|diff| %.2e%s\n", sh.name, label, ms,
         flop / ms / 1e9, worst, worst < 1e-2 ? "" : "  WRONG");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // "one" / "one-nhwc": the first shape's 128x128 tile alone, NCHW or channels-last loads (ncu);
  // "round": the first shape's 128x128 tile with each TF32 rounding.
  const bool one = argc > 1 && std::strncmp(argv[1], "one", 3) == 0;
  const bool one_nhwc = one && std::strcmp(argv[1], "one-nhwc") == 0;
  const bool rounding = argc > 1 && std::strcmp(argv[1], "round") == 0;
  // KernelBench level 2's conv-led shapes (3x3, stride 1, no padding) and a padded ResNet layer.
  const Shape shapes[] = {
      {"N64 C64 K128 256^2", {64, 64, 128, 256, 256, 3, 3, 1, 0, 254, 254}},
      {"N64 C64 K64 256^2", {64, 64, 64, 256, 256, 3, 3, 1, 0, 254, 254}},
      {"N128 C64 K128 128^2", {128, 64, 128, 128, 128, 3, 3, 1, 0, 126, 126}},
      {"N128 C8 K64 128^2", {128, 8, 64, 128, 128, 3, 3, 1, 0, 126, 126}},
      {"N32 C128 K128 56^2 p1", {32, 128, 128, 56, 56, 3, 3, 1, 1, 56, 56}},
  };
  const size_t flush_bytes = 256u << 20;
  void* flush;
  CK(cudaMalloc(&flush, flush_bytes));
  unsigned* worst;
  CK(cudaMalloc(&worst, 4));
  for (const Shape& sh : shapes) {
    const Geo& g = sh.g;
    const long long xn = (long long)g.n * g.c * g.h * g.w, wn = (long long)g.k * g.c * g.r * g.s;
    const long long on = (long long)g.n * g.k * g.oh * g.ow;
    float *x, *w, *wt, *bias, *out, *ref;
    CK(cudaMalloc(&x, xn * 4));
    CK(cudaMalloc(&w, wn * 4));
    CK(cudaMalloc(&wt, wn * 4));
    CK(cudaMalloc(&bias, g.k * 4));
    CK(cudaMalloc(&out, on * 4));
    CK(cudaMalloc(&ref, on * 4));
    float* xt;  // the channels-last copy of x
    CK(cudaMalloc(&xt, xn * 4));
    fill<<<1024, 256>>>(x, xn, 1u, 2.0f);
    fill<<<1024, 256>>>(w, wn, 2u, 2.0f / std::sqrt(float(g.c * g.r * g.s)));
    fill<<<1, 256>>>(bias, g.k, 3u, 0.2f);
    direct<<<unsigned((on + 255) / 256), 256>>>(x, w, bias, ref, g);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int rc = 0;
    if (rounding) {
      rc |= run_variant<128, 128, 32, 2, 4, 3, 0, 0>("128x128x32 cvt.rna", sh, x, w, wt, bias, out,
                                                     ref, worst, flush, flush_bytes);
      rc |= run_variant<128, 128, 32, 2, 4, 3, 0, 1>("128x128x32 integer round", sh, x, w, wt, bias,
                                                     out, ref, worst, flush, flush_bytes);
      rc |= run_variant<128, 128, 32, 2, 4, 3, 0, 2>("128x128x32 raw bits", sh, x, w, wt, bias, out,
                                                     ref, worst, flush, flush_bytes);
    } else if (one_nhwc) {
      rc |= run_variant<128, 128, 32, 2, 4, 3, 1>("NHWC 128x128x32 w2x4 s3", sh, x, w, wt, bias,
                                                  out, ref, worst, flush, flush_bytes, xt);
    } else if (one) {
      rc |= run_variant<128, 128, 32, 2, 4, 3>("128x128x32 w2x4 s3", sh, x, w, wt, bias, out, ref,
                                               worst, flush, flush_bytes);
    } else if (g.c >= 16) {
      rc |= run_variant<128, 128, 32, 2, 4, 3, 1>("NHWC 128x128x32 w2x4 s3", sh, x, w, wt, bias,
                                                  out, ref, worst, flush, flush_bytes, xt);
      rc |= run_variant<128, 64, 32, 4, 2, 3, 1>("NHWC 128x64x32 w4x2 s3", sh, x, w, wt, bias, out,
                                                 ref, worst, flush, flush_bytes, xt);
      rc |= run_variant<128, 128, 32, 2, 4, 4, 1>("NHWC 128x128x32 w2x4 s4", sh, x, w, wt, bias,
                                                  out, ref, worst, flush, flush_bytes, xt);
      rc |= run_variant<128, 64, 32, 4, 2, 3>("128x64x32 w4x2 s3", sh, x, w, wt, bias, out, ref,
                                              worst, flush, flush_bytes);
      rc |= run_variant<128, 128, 32, 2, 4, 3>("128x128x32 w2x4 s3", sh, x, w, wt, bias, out, ref,
                                               worst, flush, flush_bytes);
      rc |= run_variant<128, 128, 16, 2, 4, 4>("128x128x16 w2x4 s4", sh, x, w, wt, bias, out, ref,
                                               worst, flush, flush_bytes);
      rc |= run_variant<64, 64, 32, 2, 2, 4>("64x64x32 w2x2 s4", sh, x, w, wt, bias, out, ref,
                                             worst, flush, flush_bytes);
      rc |= run_variant<128, 64, 16, 4, 2, 4>("128x64x16 w4x2 s4", sh, x, w, wt, bias, out, ref,
                                              worst, flush, flush_bytes);
    } else {
      rc |= run_variant<128, 64, 8, 4, 2, 4>("128x64x8 w4x2 s4", sh, x, w, wt, bias, out, ref,
                                             worst, flush, flush_bytes);
      rc |= run_variant<128, 64, 8, 2, 2, 4>("128x64x8 w2x2 s4", sh, x, w, wt, bias, out, ref,
                                             worst, flush, flush_bytes);
    }
    if (rc) return rc;
    CK(cudaFree(x));
    CK(cudaFree(w));
    CK(cudaFree(wt));
    CK(cudaFree(bias));
    CK(cudaFree(out));
    CK(cudaFree(ref));
    CK(cudaFree(xt));
    if (one || rounding) break;
  }
  return 0;
}
