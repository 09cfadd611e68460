// Per-element losses and per-row states of EGG's loss family, in float, with ATen's formulas
// (aten/src/ATen/native/Loss.cpp, PointwiseOps): x is the input, y the target.
__device__ __forceinline__ float egg_loss_mse(float x, float y) {
  const float d = x - y;
  return d * d;
}
__device__ __forceinline__ float egg_loss_l1(float x, float y) { return fabsf(x - y); }
__device__ __forceinline__ float egg_loss_huber(float x, float y, float delta) {
  const float z = fabsf(x - y);
  return z < delta ? 0.5f * z * z : delta * (z - 0.5f * delta);
}
// beta == 0 is the L1 loss (as ATen).
__device__ __forceinline__ float egg_loss_smooth_l1(float x, float y, float beta) {
  const float z = fabsf(x - y);
  if (beta == 0.0f) return z;
  return z < beta ? 0.5f * z * z / beta : z - 0.5f * beta;
}
// kl_div: xlogy(y, y) - y * x, or exp(y) * (y - x) with log_target.
__device__ __forceinline__ float egg_loss_kl_div(float x, float y) {
  const float ylogy = (y != y) ? y : (y == 0.0f ? 0.0f : y * logf(y));
  return ylogy - y * x;
}
__device__ __forceinline__ float egg_loss_kl_div_log_target(float x, float y) { return expf(y) * (y - x); }
// hinge_embedding_loss: where(y != 1, clamp_min(margin - x, 0), 0) + where(y != -1, x, 0).
__device__ __forceinline__ float egg_loss_hinge(float x, float y, float margin) {
  const float m = margin - x;
  const float clamped = (m != m) ? m : fmaxf(m, 0.0f);
  return (y != 1.0f ? clamped : 0.0f) + (y != -1.0f ? x : 0.0f);
}

// The state of a row loss that reads only its target's element (nll_loss): nothing.
struct EggLossNone {
  __device__ __forceinline__ void init() {}
  __device__ __forceinline__ void merge(const EggLossNone&) {}
  __device__ __forceinline__ void shfl_merge(int) {}
};

// A row's online softmax (max, sum of exp) and the sum of its logits (label smoothing).
struct EggLossCE {
  float m, s, sx;
  __device__ __forceinline__ void init() { m = -INFINITY; s = 0.0f; sx = 0.0f; }
  __device__ __forceinline__ void push(float x) {
    sx += x;
    if (x > m) {
      s = s * expf(m - x) + 1.0f;
      m = x;
    } else if (m != -INFINITY || x != x) {
      s += expf(x - m);
    }
  }
  __device__ __forceinline__ void merge(const EggLossCE& o) {
    const float nm = fmaxf(m, o.m);
    const float a = (m == -INFINITY) ? 0.0f : s * expf(m - nm);
    const float b = (o.m == -INFINITY) ? 0.0f : o.s * expf(o.m - nm);
    m = nm;
    s = a + b;
    sx += o.sx;
  }
  __device__ __forceinline__ void shfl_merge(int k) {
    EggLossCE o;
    o.m = __shfl_xor_sync(0xffffffffu, m, k);
    o.s = __shfl_xor_sync(0xffffffffu, s, k);
    o.sx = __shfl_xor_sync(0xffffffffu, sx, k);
    merge(o);
  }
};

// A row's squared distances |a - p + eps|^2, |a - n + eps|^2 and (swap) |p - n + eps|^2.
struct EggLossTriplet {
  float p, n, w;
  __device__ __forceinline__ void init() { p = 0.0f; n = 0.0f; w = 0.0f; }
  __device__ __forceinline__ void push(float a, float pos, float neg, float eps) {
    const float dp = a - pos + eps, dn = a - neg + eps, dw = pos - neg + eps;
    p += dp * dp;
    n += dn * dn;
    w += dw * dw;
  }
  __device__ __forceinline__ void merge(const EggLossTriplet& o) { p += o.p; n += o.n; w += o.w; }
  __device__ __forceinline__ void shfl_merge(int k) {
    p += __shfl_xor_sync(0xffffffffu, p, k);
    n += __shfl_xor_sync(0xffffffffu, n, k);
    w += __shfl_xor_sync(0xffffffffu, w, k);
  }
};
