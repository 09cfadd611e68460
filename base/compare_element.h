// The tolerance rule for one element pair, shared by the host comparison (base/tolerance.cpp) and
// egg-harness's GPU comparison (harness/device_compare.cu), so both judge exactly alike:
//   NaN matches NaN; +-inf matches the same inf; NaN in out where ref is a number is bad (and
//   counted as NaN); otherwise bad unless |out-ref| <= atol + rtol*|ref| (a NaN error never
//   passes).
#pragma once

#if defined(__CUDACC__)
#define EGG_HD __host__ __device__
#else
#define EGG_HD
#endif

namespace egg {

struct ElementVerdict {
  bool bad = false;
  bool nan_in_out = false;  // out is NaN where ref is a number
  bool finite = false;      // both finite: err and rel count towards the maxima
  double err = 0;           // |out - ref| when finite
  double rel = 0;           // err / |ref| when finite and ref != 0, else 0
};

EGG_HD inline bool egg_isnan(double v) { return v != v; }
EGG_HD inline bool egg_isinf(double v) { return v - v != 0 && !egg_isnan(v); }
EGG_HD inline double egg_fabs(double v) { return v < 0 ? -v : v; }

EGG_HD inline ElementVerdict judge_element(double o, double r, double atol, double rtol) {
  ElementVerdict v;
  const bool on = egg_isnan(o), rn = egg_isnan(r);
  if (on || rn) {
    v.bad = on != rn;
    v.nan_in_out = on && !rn;
  } else if (egg_isinf(o) || egg_isinf(r)) {
    v.bad = o != r;
  } else {
    v.finite = true;
    v.err = egg_fabs(o - r);
    v.rel = r != 0 ? v.err / egg_fabs(r) : 0;
    v.bad = !(v.err <= atol + rtol * egg_fabs(r));
  }
  return v;
}

}  // namespace egg
