// egg-harness's result.json, which the candidate's process could have written (runner.h reads it).
#include "fuzz_input.h"
#include "verify_result.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = egg::fuzz::json(data, size);
  if (j.is_discarded()) return 0;
  try {
    (void)egg::harness::to_json(egg::harness::result_from_json(j)).dump();
  } catch (const std::exception&) {
  }
  return 0;
}
