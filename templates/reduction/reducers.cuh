// Reduction states of EGG's reduction family. Every state accumulates in float (as PyTorch's
// reductions accumulate fp16/bf16 in float), or for integer and bool inputs in long long, exactly
// (the states whose name ends in I: integer sums and products wrap as PyTorch's int64 do), and has:
//   init()               the identity
//   push(x, i)           folds in element x at index i of the reduced dim (pushed in increasing i)
//   merge(o)             folds in another partial state; symmetric, so a butterfly (xor shuffle)
//                        leaves every lane with bit-identical results
//   shfl_merge(m)        merge with the state of lane (lane ^ m) of the warp
// (init, push and merge of the states integers take also compile for the host: EGG_HOST_EVAL.)
// NaN propagates as in PyTorch (max/min/argmax/argmin select NaN; sums and products carry it).
#include <climits>

__device__ __forceinline__ float egg_shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ long long egg_shfl_xor(long long v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ int egg_shfl_xor(int v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }

// Scan combines beyond + and * (anchors.json scan_op), for float and the double carry alike.
// cummax/cummin as ATen computes them: a NaN, once seen, stays (b replaces the running a when b
// is NaN or not below it, and nothing replaces a NaN).
template <typename T>
EGG_HD T egg_scan_max(T a, T b) {
  return (b != b || b >= a) ? b : a;
}
template <typename T>
EGG_HD T egg_scan_min(T a, T b) {
  return (b != b || b <= a) ? b : a;
}
// logcumsumexp: log(exp(a) + exp(b)) as ATen's _log_add_exp_helper (two equal infinities: a).
EGG_HD float egg_log_add_exp(float a, float b) {
  const float lo = fminf(a, b), hi = fmaxf(a, b);
  return (lo != hi || isfinite(lo)) ? hi + log1pf(expf(lo - hi)) : a;
}
EGG_HD double egg_log_add_exp(double a, double b) {
  const double lo = fmin(a, b), hi = fmax(a, b);
  return (lo != hi || isfinite(lo)) ? hi + log1p(exp(lo - hi)) : a;
}

// Integer sums and products wrap in two's complement as PyTorch's int64 arithmetic does (through
// unsigned arithmetic: C++ leaves signed overflow undefined); float ones are the plain operators.
EGG_HD float egg_red_add(float a, float b) { return a + b; }
EGG_HD float egg_red_mul(float a, float b) { return a * b; }
EGG_HD long long egg_red_add(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
}
EGG_HD long long egg_red_mul(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}
// The identities of max and min: -inf and inf, or the extreme integers.
template <typename T>
EGG_HD T egg_red_lowest() { return -INFINITY; }
template <>
EGG_HD long long egg_red_lowest<long long>() { return LLONG_MIN; }
template <typename T>
EGG_HD T egg_red_highest() { return INFINITY; }
template <>
EGG_HD long long egg_red_highest<long long>() { return LLONG_MAX; }

template <typename T>
struct EggRedSumT {
  T v;
  EGG_HD void init() { v = T(0); }
  EGG_HD void push(T x, long long) { v = egg_red_add(v, x); }
  EGG_HD void merge(const EggRedSumT& o) { v = egg_red_add(v, o.v); }
  __device__ __forceinline__ void shfl_merge(int m) { v = egg_red_add(v, egg_shfl_xor(v, m)); }
};

template <typename T>
struct EggRedProdT {
  T v;
  EGG_HD void init() { v = T(1); }
  EGG_HD void push(T x, long long) { v = egg_red_mul(v, x); }
  EGG_HD void merge(const EggRedProdT& o) { v = egg_red_mul(v, o.v); }
  __device__ __forceinline__ void shfl_merge(int m) { v = egg_red_mul(v, egg_shfl_xor(v, m)); }
};

template <typename T>
struct EggRedMaxT {
  T v;
  EGG_HD void init() { v = egg_red_lowest<T>(); }
  // Bitwise |, not ||: a short-circuit becomes a branch between the unrolled loads.
  EGG_HD void push(T x, long long) { v = ((x != x) | (x > v)) ? x : v; }
  EGG_HD void merge(const EggRedMaxT& o) { push(o.v, 0); }
  __device__ __forceinline__ void shfl_merge(int m) { push(egg_shfl_xor(v, m), 0); }
};

template <typename T>
struct EggRedMinT {
  T v;
  EGG_HD void init() { v = egg_red_highest<T>(); }
  EGG_HD void push(T x, long long) { v = ((x != x) | (x < v)) ? x : v; }
  EGG_HD void merge(const EggRedMinT& o) { push(o.v, 0); }
  __device__ __forceinline__ void shfl_merge(int m) { push(egg_shfl_xor(v, m), 0); }
};

using EggRedSum = EggRedSumT<float>;
using EggRedProd = EggRedProdT<float>;
using EggRedMax = EggRedMaxT<float>;
using EggRedMin = EggRedMinT<float>;
using EggRedSumI = EggRedSumT<long long>;
using EggRedProdI = EggRedProdT<long long>;
using EggRedMaxI = EggRedMaxT<long long>;
using EggRedMinI = EggRedMinT<long long>;

// Value and index of the maximum (GREATER) or minimum; NaN wins, ties go to the smaller index
// (PyTorch returns the first occurrence). I holds the index: int where the reduced dim has fewer
// than 2^31 elements (EggRedArgMax32), else long long; T the value (long long: EggRedArgMaxI).
template <bool GREATER, typename I = long long, typename T = float>
struct EggRedArg {
  static constexpr I kNone = sizeof(I) == 8 ? I(LLONG_MAX) : I(INT_MAX);  // no element yet
  T v;
  I i;
  EGG_HD static bool better(T a, I ia, T b, I ib) {
    const bool an = a != a, bn = b != b;
    if (an || bn) return an && (!bn || ia < ib);
    if (GREATER ? (a > b) : (a < b)) return true;
    return a == b && ia < ib;
  }
  EGG_HD void init() {
    v = GREATER ? egg_red_lowest<T>() : egg_red_highest<T>();
    i = kNone;
  }
  // ix comes after every index folded in so far, so a tie keeps the held element and the index
  // comparison of better() is not needed: the first element, a strictly better one, or the first
  // NaN takes the place. Bitwise, without a branch: short-circuit operators become branches
  // between the unrolled loads, and each load then waits for the compare before it.
  EGG_HD void push(T x, long long ix) {
    const bool take = (GREATER ? (x > v) : (x < v)) | ((x != x) & (v == v)) | (i == kNone);
    v = take ? x : v;
    i = take ? I(ix) : i;
  }
  EGG_HD void take_if_better(T ov, I oi) {
    if (better(ov, oi, v, i)) {
      v = ov;
      i = oi;
    }
  }
  EGG_HD void merge(const EggRedArg& o) { take_if_better(o.v, o.i); }
  __device__ __forceinline__ void shfl_merge(int m) {
    const T ov = egg_shfl_xor(v, m);
    const I oi = egg_shfl_xor(i, m);
    take_if_better(ov, oi);
  }
};
using EggRedArgMax = EggRedArg<true>;
using EggRedArgMin = EggRedArg<false>;
using EggRedArgMax32 = EggRedArg<true, int>;
using EggRedArgMin32 = EggRedArg<false, int>;
using EggRedArgMaxI = EggRedArg<true, long long, long long>;
using EggRedArgMinI = EggRedArg<false, long long, long long>;
using EggRedArgMax32I = EggRedArg<true, int, long long>;
using EggRedArgMin32I = EggRedArg<false, int, long long>;

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

// Welford's running count, mean and sum of squared deviations M2 of the pushed values (a norm's
// statistics: biased variance M2 / n), merged by Chan's formula in a symmetric form (a + b and
// b + a give the same bits, as a butterfly needs). An empty state merges as the identity.
struct EggRedWelford {
  float n;
  float mean;
  float m2;
  __device__ __forceinline__ void init() { n = 0.0f; mean = 0.0f; m2 = 0.0f; }
  __device__ __forceinline__ void push(float x, long long) {
    n += 1.0f;
    const float d = x - mean;
    mean += __fdividef(d, n);
    m2 += d * (x - mean);
  }
  __device__ __forceinline__ void merge(const EggRedWelford& o) {
    const float nab = n + o.n;
    if (nab == 0.0f) return;
    const float d = o.mean - mean;
    mean = (n * mean + o.n * o.mean) / nab;
    m2 = (m2 + o.m2) + d * d * (n * o.n / nab);
    n = nab;
  }
  __device__ __forceinline__ void shfl_merge(int k) {
    EggRedWelford o;
    o.n = egg_shfl_xor(n, k);
    o.mean = egg_shfl_xor(mean, k);
    o.m2 = egg_shfl_xor(m2, k);
    merge(o);
  }
};
