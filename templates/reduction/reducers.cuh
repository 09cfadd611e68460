// Reduction states of EGG's reduction family. Every state accumulates in float (as PyTorch's
// reductions accumulate fp16/bf16 in float) and has:
//   init()               the identity
//   push(x, i)           folds in element x at index i of the reduced dim (pushed in increasing i)
//   merge(o)             folds in another partial state; symmetric, so a butterfly (xor shuffle)
//                        leaves every lane with bit-identical results
//   shfl_merge(m)        merge with the state of lane (lane ^ m) of the warp
// NaN propagates as in PyTorch (max/min/argmax/argmin select NaN; sums and products carry it).
#include <climits>

__device__ __forceinline__ float egg_shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ long long egg_shfl_xor(long long v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ int egg_shfl_xor(int v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

// Scan combines beyond + and * (anchors.json scan_op), for float and the double carry alike.
// cummax/cummin as ATen computes them: a NaN, once seen, stays (b replaces the running a when b
// is NaN or not below it, and nothing replaces a NaN).
template <typename T>
__device__ __forceinline__ T egg_scan_max(T a, T b) {
  return (b != b || b >= a) ? b : a;
}
template <typename T>
__device__ __forceinline__ T egg_scan_min(T a, T b) {
  return (b != b || b <= a) ? b : a;
}
// logcumsumexp: log(exp(a) + exp(b)) as ATen's _log_add_exp_helper (two equal infinities: a).
__device__ __forceinline__ float egg_log_add_exp(float a, float b) {
  const float lo = fminf(a, b), hi = fmaxf(a, b);
  return (lo != hi || isfinite(lo)) ? hi + log1pf(expf(lo - hi)) : a;
}
__device__ __forceinline__ double egg_log_add_exp(double a, double b) {
  const double lo = fmin(a, b), hi = fmax(a, b);
  return (lo != hi || isfinite(lo)) ? hi + log1p(exp(lo - hi)) : a;
}

struct EggRedSum {
  float v;
  __device__ __forceinline__ void init() { v = 0.0f; }
  __device__ __forceinline__ void push(float x, long long) { v += x; }
  __device__ __forceinline__ void merge(const EggRedSum& o) { v += o.v; }
  __device__ __forceinline__ void shfl_merge(int m) { v += egg_shfl_xor(v, m); }
};

struct EggRedProd {
  float v;
  __device__ __forceinline__ void init() { v = 1.0f; }
  __device__ __forceinline__ void push(float x, long long) { v *= x; }
  __device__ __forceinline__ void merge(const EggRedProd& o) { v *= o.v; }
  __device__ __forceinline__ void shfl_merge(int m) { v *= egg_shfl_xor(v, m); }
};

struct EggRedMax {
  float v;
  __device__ __forceinline__ void init() { v = -INFINITY; }
  // Bitwise |, not ||: a short-circuit becomes a branch between the unrolled loads.
  __device__ __forceinline__ void push(float x, long long) { v = ((x != x) | (x > v)) ? x : v; }
  __device__ __forceinline__ void merge(const EggRedMax& o) { push(o.v, 0); }
  __device__ __forceinline__ void shfl_merge(int m) { push(egg_shfl_xor(v, m), 0); }
};

struct EggRedMin {
  float v;
  __device__ __forceinline__ void init() { v = INFINITY; }
  __device__ __forceinline__ void push(float x, long long) { v = ((x != x) | (x < v)) ? x : v; }
  __device__ __forceinline__ void merge(const EggRedMin& o) { push(o.v, 0); }
  __device__ __forceinline__ void shfl_merge(int m) { push(egg_shfl_xor(v, m), 0); }
};

// Value and index of the maximum (GREATER) or minimum; NaN wins, ties go to the smaller index
// (PyTorch returns the first occurrence). I holds the index: int where the reduced dim has fewer
// than 2^31 elements (EggRedArgMax32), else long long.
template <bool GREATER, typename I = long long>
struct EggRedArg {
  static constexpr I kNone = sizeof(I) == 8 ? I(LLONG_MAX) : I(INT_MAX);  // no element yet
  float v;
  I i;
  __device__ __forceinline__ static bool better(float a, I ia, float b, I ib) {
    const bool an = a != a, bn = b != b;
    if (an || bn) return an && (!bn || ia < ib);
    if (GREATER ? (a > b) : (a < b)) return true;
    return a == b && ia < ib;
  }
  __device__ __forceinline__ void init() {
    v = GREATER ? -INFINITY : INFINITY;
    i = kNone;
  }
  // ix comes after every index folded in so far, so a tie keeps the held element and the index
  // comparison of better() is not needed: the first element, a strictly better one, or the first
  // NaN takes the place. Bitwise, without a branch: short-circuit operators become branches
  // between the unrolled loads, and each load then waits for the compare before it.
  __device__ __forceinline__ void push(float x, long long ix) {
    const bool take = (GREATER ? (x > v) : (x < v)) | ((x != x) & (v == v)) | (i == kNone);
    v = take ? x : v;
    i = take ? I(ix) : i;
  }
  __device__ __forceinline__ void take_if_better(float ov, I oi) {
    if (better(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
  __device__ __forceinline__ void merge(const EggRedArg& o) { take_if_better(o.v, o.i); }
  __device__ __forceinline__ void shfl_merge(int m) {
    const float ov = egg_shfl_xor(v, m);
    const I oi = egg_shfl_xor(i, m);
    take_if_better(ov, oi);
  }
};
using EggRedArgMax = EggRedArg<true>;
using EggRedArgMin = EggRedArg<false>;
using EggRedArgMax32 = EggRedArg<true, int>;
using EggRedArgMin32 = EggRedArg<false, int>;

// Online softmax state: running maximum m and sum s of exp(x - m) (one pass for both).
struct EggRedSoftmax {
  float m;
  float s;
  __device__ __forceinline__ void init() { m = -INFINITY; s = 0.0f; }
  // Without a branch (see EggRedArg::push): the sum rescaled to the new maximum plus the new
  // term; the same bits as adding exp(x - m) when x <= m, or rescaling and adding 1 when x > m.
  // `base` is 0 while every element so far is -inf, so -inf - -inf never makes a NaN; a NaN x
  // leaves m and makes s NaN (as PyTorch's softmax of a row with a NaN).
  __device__ __forceinline__ void push(float x, long long) {
    const float nm = fmaxf(m, x);
    const float base = nm == -INFINITY ? 0.0f : nm;
    s = s * expf(m - base) + expf(x - base);
    m = nm;
  }
  __device__ __forceinline__ void merge(const EggRedSoftmax& o) {
    const float nm = fmaxf(m, o.m);
    const float a = (m == -INFINITY) ? 0.0f : s * expf(m - nm);
    const float b = (o.m == -INFINITY) ? 0.0f : o.s * expf(o.m - nm);
    m = nm;
    s = a + b;
  }
  __device__ __forceinline__ void shfl_merge(int k) {
    EggRedSoftmax o;
    o.m = egg_shfl_xor(m, k);
    o.s = egg_shfl_xor(s, k);
    merge(o);
  }
};
