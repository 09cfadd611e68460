// The previous manifest.json in --out, which generate reads to say why the cache missed: whatever
// it holds, changed_fields() answers (it is called outside any try, so it must not throw).
#include <cstdio>
#include <cstdlib>

#include "cache/key.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto m = egg::fuzz::json(data, size);
  if (m.is_discarded() || !m.is_object() || !m.contains("cache_fields")) return 0;
  static const nlohmann::json now = {
      {"spec", {{"sha256", "ab"}, {"bytes", 2}, {"preview", "x"}}},
      {"arches", {{"sha256", "cd"}, {"bytes", 5}, {"preview", "y"}}}};
  try {
    (void)egg::cache::changed_fields(m["cache_fields"], now);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "changed_fields threw on a manifest: %s\n", e.what());
    std::abort();
  }
  return 0;
}
