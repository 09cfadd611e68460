// Why a candidate failed: one typed class that travels from the harness (its VerifyStatus) and
// the compile checks through the pipeline to the debug agent, the manifest and the bench table.
// Names (failure_name) are the strings manifests, prompts and tables show.
#pragma once

#include <string>
#include <string_view>

namespace egg::backend {

enum class FailureClass {
  forbidden_api,  // the candidate's code calls PyTorch (source scan before compiling)
  compile_error,  // nvcc rejected it
  mismatch,       // from here on: egg-harness's statuses (harness/verify_result.h)
  nan_output,
  constant_output,
  cached_result,
  input_modified,
  out_of_bounds,
  nondeterministic,
  side_stream,
  launch_error,
  sanitizer,
  forbidden_source,
  load_error,
  crash,
  timeout,
  spec_error,
  no_gpu,
  harness_error,
  gpu_busy,
  too_large,  // the candidate keeps so much GPU memory that its references cannot be computed
};

std::string_view failure_name(FailureClass c);

struct Failure {
  FailureClass cls = FailureClass::compile_error;
  std::string report;  // what failed, for the debug agent and the user
  // "<class>: <report>".
  std::string text() const { return std::string(failure_name(cls)) + ": " + report; }
  // The report's first line (for one-line summaries).
  std::string first_line() const { return report.substr(0, report.find('\n')); }
};

}  // namespace egg::backend
