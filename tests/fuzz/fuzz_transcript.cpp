// A transcript.jsonl given to the replay backend (llm/transcript.h).
#include "fuzz_input.h"
#include "llm/transcript.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = egg::fuzz::file("transcript.jsonl", data, size);
  try {
    for (const auto& e : egg::llm::read_transcript(path.string()))
      (void)egg::llm::exchange_to_json(e);
  } catch (const std::exception&) {
  }
  return 0;
}
