// spec.json (the frontend's output, or a hand-edited --override-dir copy) through the generator's
// reader and what is derived from it first: the cache key's normalized spec and the contract.
#include "contract/contract.h"
#include "fuzz_input.h"
#include "spec/spec.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = egg::fuzz::json(data, size);
  if (j.is_discarded()) return 0;
  try {
    const egg::spec::Spec s = egg::spec::parse_spec(j);
    (void)egg::spec::normalized(s).dump();
    (void)egg::contract::derive(s, "fuzzed");
  } catch (const std::exception&) {
    // A clear error is the right answer to a bad spec; a crash, UB or a leak is not.
  }
  return 0;
}
