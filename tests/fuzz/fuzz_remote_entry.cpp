// A shared-cache server's answer to GET <url>/ac/<key> (cache/remote.h): any body must be a hit,
// or a miss with a reason. The signature is checked after the entry is parsed, so every body
// reaches the parser.
#include "cache/remote.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body = egg::fuzz::text(data, size);
  const egg::cache::RemoteStore remote(
      "http://cache.invalid", true,
      [&](const std::string&, const std::string&, const std::string&) {
        return egg::cache::HttpExchange{200, body, ""};
      },
      egg::cache::EntrySigner("fuzz-team-key-0123456789"));
  try {
    (void)remote.get(std::string(64, 'a'));
  } catch (const std::exception&) {
  }
  return 0;
}
