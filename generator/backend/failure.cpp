#include "backend/failure.h"

#include <array>
#include <utility>

namespace egg::backend {

std::string_view failure_name(FailureClass c) {
  static constexpr std::array<std::pair<FailureClass, std::string_view>, 21> kNames{{
      {FailureClass::forbidden_api, "forbidden_api"},
      {FailureClass::compile_error, "compile_error"},
      {FailureClass::mismatch, "mismatch"},
      {FailureClass::nan_output, "nan_output"},
      {FailureClass::constant_output, "constant_output"},
      {FailureClass::cached_result, "cached_result"},
      {FailureClass::input_modified, "input_modified"},
      {FailureClass::out_of_bounds, "out_of_bounds"},
      {FailureClass::nondeterministic, "nondeterministic"},
      {FailureClass::side_stream, "side_stream"},
      {FailureClass::launch_error, "launch_error"},
      {FailureClass::sanitizer, "sanitizer"},
      {FailureClass::forbidden_source, "forbidden_source"},
      {FailureClass::load_error, "load_error"},
      {FailureClass::crash, "crash"},
      {FailureClass::timeout, "timeout"},
      {FailureClass::spec_error, "spec_error"},
      {FailureClass::no_gpu, "no_gpu"},
      {FailureClass::harness_error, "harness_error"},
      {FailureClass::gpu_busy, "gpu_busy"},
      {FailureClass::too_large, "too_large"},
  }};
  for (const auto& [cls, name] : kNames)
    if (cls == c) return name;
  return "unknown";
}

}  // namespace egg::backend
