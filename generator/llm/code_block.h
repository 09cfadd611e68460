// Taking the kernel out of a model's answer.
//
// The answer carries the code in a Markdown fenced block. Rules:
//   - a fence opens with a line of >= 3 backticks (up to 3 spaces indent) and an optional tag,
//     and closes with a line of at least as many backticks and nothing else;
//   - the LAST block tagged cuda, cu, cuh, cpp, c++ or cxx (any case) is taken;
//   - only when no such block exists, the last UNTAGGED block is taken: small local models often
//     drop the tag. Blocks tagged with anything else (python, bash, text, ...) are never taken;
//   - a fence left open at the end of the answer means the answer was cut: truncated, even when an
//     earlier block is complete, since the open block was the newer one;
//   - no usable block: refusal when the start of the answer reads like a refusal (or the server
//     said so), truncated when the server said it hit max_tokens, else no_code.
#pragma once

#include <string>
#include <string_view>

#include "llm/chat.h"

namespace egg::llm {

// The outcome of a scan for code.
enum class CodeScan {
  found,         // a usable block was found
  unterminated,  // a fence was left open at the end
  none,          // no usable block
};

// What find_code_block saw.
struct CodeBlock {
  CodeScan scan = CodeScan::none;  // outcome
  std::string code;                // the block's body (found only), ending in '\n'
  std::string tag;                 // its tag as written, lower-cased ("" when untagged)
  int blocks_seen = 0;             // all complete fenced blocks, whatever their tag
};

// Scans `text` by the rules above.
CodeBlock find_code_block(std::string_view text);

// True when the start of `text` reads like a refusal ("I can't help with ...").
bool looks_like_refusal(std::string_view text);

// The code of `reply`, or throws LlmError(truncated | refusal | no_code) with a message meant for
// the debug agent's log.
std::string extract_code(const ChatReply& reply);

}  // namespace egg::llm
