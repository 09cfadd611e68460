// spec.json through egg-harness's reader (harness/harness_spec.h).
#include "fuzz_input.h"
#include "harness_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = egg::fuzz::file("spec.json", data, size);
  try {
    const auto s = egg::harness::load_harness_spec(path);
    for (const auto& t : s.inputs) (void)t.bytes();
    for (const auto& t : s.outputs) (void)t.bytes();
  } catch (const std::exception&) {
  }
  return 0;
}
