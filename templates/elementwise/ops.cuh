// Device helpers of EGG's element-wise kernels: every op computes in float, matching PyTorch's
// formulas (ATen's CUDA kernels) so results agree within fp32 tolerance.
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cfloat>
#include <climits>
#include <math_constants.h>

// Element helpers compile for the host too: a test runs a kernel's per-element program on the CPU
// (EGG_HOST_EVAL, templates/elementwise/kernel.cuh.tmpl).
#ifndef EGG_HD
#define EGG_HD __host__ __device__ __forceinline__
#endif

EGG_HD float egg_to_float(float v) { return v; }
EGG_HD float egg_to_float(__half v) { return __half2float(v); }
EGG_HD float egg_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
EGG_HD float egg_to_float(bool v) { return v ? 1.0f : 0.0f; }
// Integers where PyTorch converts them to a floating type (a cast, int * 0.5): rounded to nearest.
EGG_HD float egg_to_float(std::int64_t v) { return static_cast<float>(v); }
EGG_HD float egg_to_float(std::int32_t v) { return static_cast<float>(v); }
// A read-only operand's element through the read-only data path (ld.global.nc). Kernels that reach
// their tensors through an args struct need it: nvcc ignores __restrict__ on a struct's pointers,
// so a plain load may not move past the kernel's stores, and an epilogue that loads a bias and
// stores an element in turn waits on every load. A read-only load may move.
template <typename T>
__device__ __forceinline__ float egg_ldg(const T* p) {
  return egg_to_float(__ldg(p));
}
__device__ __forceinline__ float egg_ldg(const bool* p) {
  return __ldg(reinterpret_cast<const unsigned char*>(p)) != 0 ? 1.0f : 0.0f;
}
// An int64 value of the fusion IR stored to an integer output, exactly.
template <typename T>
EGG_HD T egg_from_int(long long v) {
  return static_cast<T>(v);
}

template <typename T> EGG_HD T egg_from_float(float v);
template <> EGG_HD float egg_from_float<float>(float v) { return v; }
template <> EGG_HD __half egg_from_float<__half>(float v) { return __float2half_rn(v); }
template <> EGG_HD __nv_bfloat16 egg_from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
// A mask's value (1 or 0 in the fusion IR) stored to a bool output.
template <> EGG_HD bool egg_from_float<bool>(float v) { return v != 0.0f; }

// NaN-propagating relu/min/max, as PyTorch's.
EGG_HD float egg_relu(float x) { return (x != x) ? x : fmaxf(x, 0.0f); }
EGG_HD float egg_minimum(float a, float b) { return (a != a || b != b) ? a + b : fminf(a, b); }
EGG_HD float egg_maximum(float a, float b) { return (a != a || b != b) ? a + b : fmaxf(a, b); }
EGG_HD float egg_clamp(float x, float lo, float hi) {
  return (x != x) ? x : fminf(fmaxf(x, lo), hi);
}
// torch.sign: 0 for 0 and NaN, as ATen's (0 < x) - (x < 0).
EGG_HD float egg_sign(float x) { return (x > 0.0f ? 1.0f : 0.0f) - (x < 0.0f ? 1.0f : 0.0f); }
// torch.remainder: Python's modulo, the sign of the divisor (ATen's fmod, then shifted by b).
EGG_HD float egg_remainder(float a, float b) {
  const float mod = fmodf(a, b);
  return (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) ? mod + b : mod;
}
// torch.div(a, b, rounding_mode="floor") on floats, as ATen's div_floor_floating: the quotient of
// a - fmod(a, b), one less where the remainder's sign differs from b's, rounded to the nearest
// integer below; a / b where b is 0.
EGG_HD float egg_floor_divide(float a, float b) {
  if (b == 0.0f) return a / b;
  const float mod = fmodf(a, b);
  float div = (a - mod) / b;
  if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
  if (div == 0.0f) return copysignf(0.0f, a / b);
  const float floored = floorf(div);
  return div - floored > 0.5f ? floored + 1.0f : floored;
}
// Integer arithmetic (int64 values of the fusion IR): Python's floor division and remainder, as
// PyTorch computes them for integer tensors (b == 0 is undefined there too).
EGG_HD long long egg_ifloor_divide(long long a, long long b) {
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
EGG_HD long long egg_iremainder(long long a, long long b) {
  const long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
EGG_HD long long egg_iabs(long long a) { return a < 0 ? -a : a; }
// Shifts as ATen's: a shift past the width (or negative) gives 0 to the left, the sign to the right.
EGG_HD long long egg_ishl(long long a, long long b) {
  return (b < 0 || b >= 64) ? 0LL : static_cast<long long>(static_cast<unsigned long long>(a) << b);
}
EGG_HD long long egg_ishr(long long a, long long b) { return (b < 0 || b >= 64) ? (a >> 63) : (a >> b); }
EGG_HD long long egg_imin(long long a, long long b) { return a < b ? a : b; }
EGG_HD long long egg_imax(long long a, long long b) { return a < b ? b : a; }
EGG_HD float egg_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
EGG_HD float egg_silu(float x) { return x / (1.0f + expf(-x)); }
EGG_HD float egg_gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }
EGG_HD float egg_gelu_tanh(float x) {
  const float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
EGG_HD float egg_softplus(float x, float beta, float threshold) {
  return (x * beta > threshold) ? x : log1pf(expf(x * beta)) / beta;
}
// mish(x) = x tanh(log(1 + e^x)) = x n / (n + 2) with n = e^x (e^x + 2), since tanh(log u) =
// (u^2 - 1) / (u^2 + 1): one exponential where exp, log1p and tanh took three. Past 20 (softplus's
// threshold, where PyTorch returns x) it is x; n stays below 2.4e17 up to there.
EGG_HD float egg_mish(float x) {
  if (x > 20.0f) return x;
  const float e = expf(x);
  const float n = e * (e + 2.0f);
  return x * (n / (n + 2.0f));
}
EGG_HD float egg_elu(float x, float alpha) { return x > 0.0f ? x : alpha * expm1f(x); }
EGG_HD float egg_selu(float x) {
  const float alpha = 1.6732632423543772848170429916717f;
  const float scale = 1.0507009873554804934193349852946f;
  return scale * (x > 0.0f ? x : alpha * expm1f(x));
}
EGG_HD float egg_hardsigmoid(float x) { return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
EGG_HD float egg_hardswish(float x) { return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }

// The cubic convolution weights of bicubic upsampling (A = -0.75, ATen's): a tap at distance x
// below 1 (near) and between 1 and 2 (far).
EGG_HD float egg_cubic_near(float x) {
  const float A = -0.75f;
  return ((A + 2.0f) * x - (A + 3.0f)) * x * x + 1.0f;
}
EGG_HD float egg_cubic_far(float x) {
  const float A = -0.75f;
  return ((A * x - 5.0f * A) * x + 8.0f * A) * x - 4.0f * A;
}

// torch.logaddexp / logaddexp2: log(e^a + e^b) without overflow (equal infinities stay).
EGG_HD float egg_logaddexp(float a, float b) {
  if (isinf(a) && a == b) return a;
  const float m = fmaxf(a, b);
  return m + log1pf(expf(-fabsf(a - b)));
}
EGG_HD float egg_logaddexp2(float a, float b) {
  if (isinf(a) && a == b) return a;
  const float m = fmaxf(a, b);
  return m + log1pf(exp2f(-fabsf(a - b))) * 1.44269504088896340736f;
}
// torch.xlogy: 0 where x is 0 (y not NaN), NaN where y is NaN, else x * log(y).
EGG_HD float egg_xlogy(float x, float y) {
  if (y != y) return y;
  return x == 0.0f ? 0.0f : x * logf(y);
}
// torch.nan_to_num with its replacements.
EGG_HD float egg_nan_to_num(float x, float nan, float posinf, float neginf) {
  return x != x ? nan : x == INFINITY ? posinf : x == -INFINITY ? neginf : x;
}

// Word `word` (0..3) of Philox4x32-10 (Salmon et al., SC'11) at counter c, key k.
EGG_HD std::uint32_t egg_philox_word(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                                     std::uint32_t c3, std::uint32_t k0, std::uint32_t k1,
                                     int word) {
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(0xD2511F53u) * c0;
    const std::uint64_t p1 = static_cast<std::uint64_t>(0xCD9E8D57u) * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
  }
  return word == 0 ? c0 : word == 1 ? c1 : word == 2 ? c2 : c3;
}
// Dropout in training mode, element n of dropout call `stream`: x / (1 - p) where kept, else 0.
// rng = [seed, offset] (the kernel's egg_rng input); kept where the top 24 bits of Philox word
// n & 3 at counter [n >> 2, offset], key seed + (stream << 32), are below `threshold` =
// round((1 - p) * 2^24). python/egg_frontend/rng.py computes the same draws in PyTorch.
EGG_HD float egg_dropout(float x, const std::int64_t* rng, std::uint32_t stream, std::int64_t n,
                         std::uint32_t threshold, float scale) {
  const auto seed = static_cast<std::uint64_t>(rng[0]);
  const auto offset = static_cast<std::uint64_t>(rng[1]);
  const auto c = static_cast<std::uint64_t>(n) >> 2;
  const std::uint32_t w = egg_philox_word(
      static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32),
      static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(offset >> 32),
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32) + stream,
      static_cast<int>(n & 3));
  return (w >> 8) < threshold ? x * scale : 0.0f;
}

// VEC elements of T loaded and stored as 16-byte transactions (needs 16-byte aligned pointers).
template <typename T, int VEC>
struct alignas(16) EggVec {
  T v[VEC];
};
// How a vector is read: through the read-only cache (__ldg), once (ld.global.cs: evict-first in L1
// and L2, so a streaming read does not push other lines, e.g. results still waiting to be written
// back, out of L2), or with plain loads (shared memory: __ldg and __ldcs read global memory only,
// and on a shared address fail with cudaErrorInvalidAddressSpace).
enum class EggRead { cached, once, plain };
template <typename T, int VEC, EggRead HOW>
__device__ __forceinline__ EggVec<T, VEC> egg_read_vec(const T* __restrict__ p) {
  static_assert((VEC * sizeof(T)) % 16 == 0 || VEC == 1, "vector must be whole 16-byte words");
  EggVec<T, VEC> r;
  if constexpr (VEC == 1) {
    r.v[0] = p[0];
  } else {
    const uint4* src = reinterpret_cast<const uint4*>(p);
    uint4* dst = reinterpret_cast<uint4*>(r.v);
#pragma unroll
    for (int k = 0; k < int(VEC * sizeof(T) / 16); ++k) {
      if constexpr (HOW == EggRead::once)
        dst[k] = __ldcs(src + k);
      else if constexpr (HOW == EggRead::cached)
        dst[k] = __ldg(src + k);
      else
        dst[k] = src[k];
    }
  }
  return r;
}
template <typename T, int VEC, bool ONCE = false>
__device__ __forceinline__ EggVec<T, VEC> egg_load_vec(const T* __restrict__ p) {
  return egg_read_vec<T, VEC, ONCE ? EggRead::once : EggRead::cached>(p);
}
template <typename T, int VEC>
__device__ __forceinline__ EggVec<T, VEC> egg_load_vec_once(const T* __restrict__ p) {
  return egg_read_vec<T, VEC, EggRead::once>(p);
}
template <typename T, int VEC>
__device__ __forceinline__ EggVec<T, VEC> egg_load_vec_shared(const T* __restrict__ p) {
  return egg_read_vec<T, VEC, EggRead::plain>(p);
}
template <typename T, int VEC>
__device__ __forceinline__ void egg_store_vec(T* __restrict__ p, const EggVec<T, VEC>& r) {
  if constexpr (VEC == 1) {
    p[0] = r.v[0];
  } else {
    const uint4* src = reinterpret_cast<const uint4*>(r.v);
    uint4* dst = reinterpret_cast<uint4*>(p);
#pragma unroll
    for (int k = 0; k < int(VEC * sizeof(T) / 16); ++k) dst[k] = src[k];
  }
}
