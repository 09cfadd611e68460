#include "llm/code_block.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "llm/errors.h"

namespace egg::llm {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_code_tag(const std::string& tag) {
  static constexpr std::array<std::string_view, 6> kTags = {"cuda", "cu",  "cuh",
                                                            "cpp",  "c++", "cxx"};
  return std::find(kTags.begin(), kTags.end(), tag) != kTags.end();
}

// A fence line: indent <= 3, then >= 3 backticks; `ticks` and `info` describe it.
bool parse_fence(std::string_view line, size_t& ticks, std::string_view& info) {
  size_t i = 0;
  while (i < line.size() && i < 4 && line[i] == ' ') ++i;
  if (i > 3) return false;
  size_t j = i;
  while (j < line.size() && line[j] == '`') ++j;
  if (j - i < 3) return false;
  ticks = j - i;
  info = line.substr(j);
  while (!info.empty() && std::isspace(static_cast<unsigned char>(info.front())))
    info.remove_prefix(1);
  while (!info.empty() && std::isspace(static_cast<unsigned char>(info.back())))
    info.remove_suffix(1);
  return true;
}

}  // namespace

CodeBlock find_code_block(std::string_view text) {
  CodeBlock result;
  std::string last_tagged, last_untagged, tagged_name;
  bool have_tagged = false, have_untagged = false;

  bool open = false;
  size_t open_ticks = 0;
  std::string open_tag, body;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool last_line = end == std::string_view::npos;
    if (last_line) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = last_line ? text.size() : end + 1;

    size_t ticks = 0;
    std::string_view info;
    const bool fence = parse_fence(line, ticks, info);
    if (!open) {
      if (fence && info.find('`') == std::string_view::npos) {
        open = true;
        open_ticks = ticks;
        // The tag is the info string's first word ("cuda title=x" -> "cuda").
        open_tag = lower(info.substr(0, info.find_first_of(" \t{")));
        body.clear();
      }
      continue;
    }
    if (fence && info.empty() && ticks >= open_ticks) {
      open = false;
      ++result.blocks_seen;
      if (is_code_tag(open_tag)) {
        last_tagged = body;
        tagged_name = open_tag;
        have_tagged = true;
      } else if (open_tag.empty()) {
        last_untagged = body;
        have_untagged = true;
      }
      continue;
    }
    body.append(line);
    body.push_back('\n');
  }

  if (open) {
    result.scan = CodeScan::unterminated;
  } else if (have_tagged) {
    result.scan = CodeScan::found;
    result.code = std::move(last_tagged);
    result.tag = std::move(tagged_name);
  } else if (have_untagged) {
    result.scan = CodeScan::found;
    result.code = std::move(last_untagged);
  }
  return result;
}

bool looks_like_refusal(std::string_view text) {
  const std::string start = lower(text.substr(0, 400));
  static constexpr std::array<std::string_view, 12> kPhrases = {
      "i can't help",  "i cannot help",  "i can't assist",  "i cannot assist",
      "i won't",       "i will not",     "i'm sorry, but",  "i am sorry, but",
      "i'm unable to", "i am unable to", "i can't provide", "i cannot provide"};
  for (const auto phrase : kPhrases) {
    if (start.find(phrase) != std::string::npos) return true;
  }
  return false;
}

std::string extract_code(const ChatReply& reply) {
  CodeBlock block = find_code_block(reply.text);
  // A refusal stop can cut the answer anywhere; even a closed block is not trusted then.
  if (reply.finish == FinishReason::refusal) {
    throw LlmError(LlmErrorKind::refusal,
                   "the model declined to answer: '" + reply.text.substr(0, 200) + "'");
  }
  if (block.scan == CodeScan::found && !block.code.empty()) return std::move(block.code);
  if (block.scan == CodeScan::unterminated) {
    throw LlmError(LlmErrorKind::truncated,
                   "the answer ends inside a code block (finish_reason '" + reply.finish_reason +
                       "'); the code is incomplete; raise max_tokens or ask for a shorter kernel");
  }
  if (looks_like_refusal(reply.text)) {
    throw LlmError(LlmErrorKind::refusal,
                   "the model declined to answer: '" + reply.text.substr(0, 200) + "'");
  }
  if (reply.finish == FinishReason::length) {
    throw LlmError(LlmErrorKind::truncated,
                   "the answer was cut at max_tokens before any code block; raise max_tokens");
  }
  throw LlmError(LlmErrorKind::no_code,
                 "the answer has no ```cuda, ```cpp or ```c++ code block (" +
                     std::to_string(block.blocks_seen) +
                     " other fenced blocks); answer with the whole kernel in one fenced block");
}

}  // namespace egg::llm
