// A local cache entry's entry.json, as a crash, a full disk or another tool may have left it:
// lookup() must answer hit, miss or corrupt, fields() a value or nothing.
#include "cache/store.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string key(64, 'a');
  static const egg::cache::LocalStore store(egg::fuzz::scratch() / "cache");
  static const std::filesystem::path entry_json = [] {
    store.store(key, {{"spec", "x"}}, {{"kernel.cu", "// k\n"}, {"record.json", "{}"}}, true);
    for (const auto& f : std::filesystem::recursive_directory_iterator(store.root()))
      if (f.path().filename() == "entry.json") return f.path();
    return std::filesystem::path();
  }();
  std::ofstream(entry_json, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    (void)store.lookup(key);
    (void)store.fields(key);
    (void)store.stats();
  } catch (const std::exception&) {
  }
  return 0;
}
