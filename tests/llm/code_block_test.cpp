#include "llm/code_block.h"

#include <gtest/gtest.h>

#include "llm/errors.h"

namespace egg::llm {
namespace {

ChatReply reply(std::string text, FinishReason finish = FinishReason::stop) {
  ChatReply r;
  r.text = std::move(text);
  r.finish = finish;
  r.finish_reason = finish == FinishReason::length ? "length" : "stop";
  return r;
}

LlmErrorKind kind_of(const ChatReply& r) {
  try {
    extract_code(r);
  } catch (const LlmError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error for: " << r.text;
  return LlmErrorKind::config;
}

TEST(CodeBlock, TakesTheLastTaggedBlock) {
  const auto text =
      "First "
      "try:\n```cuda\nold();\n```\nBetter:\n```python\nprint(1)\n```\n```cuda\nnew_kernel();\n```"
      "\nDone.";
  EXPECT_EQ(extract_code(reply(text)), "new_kernel();\n");
}

TEST(CodeBlock, AcceptsCppAndCxxTagsCaseInsensitive) {
  EXPECT_EQ(extract_code(reply("```cpp\na;\n```")), "a;\n");
  EXPECT_EQ(extract_code(reply("```c++\nb;\n```")), "b;\n");
  EXPECT_EQ(extract_code(reply("```CUDA\nc;\n```")), "c;\n");
  EXPECT_EQ(find_code_block("```cuda title=k.cu\nd;\n```").tag, "cuda");
}

TEST(CodeBlock, UntaggedBlockIsOnlyAFallback) {
  EXPECT_EQ(extract_code(reply("```\nplain;\n```")), "plain;\n");
  EXPECT_EQ(extract_code(reply("```cuda\ntagged;\n```\n```\nplain;\n```")), "tagged;\n");
}

TEST(CodeBlock, OtherLanguagesAreNeverTaken) {
  EXPECT_EQ(kind_of(reply("```python\nimport torch\n```")), LlmErrorKind::no_code);
}

TEST(CodeBlock, LongerFenceMayContainShortFences) {
  const auto text = "````cuda\n// doc:\n```\nx;\n````\n";
  EXPECT_EQ(extract_code(reply(text)), "// doc:\n```\nx;\n");
}

TEST(CodeBlock, HandlesCrlfAndIndentedFences) {
  EXPECT_EQ(extract_code(reply("  ```cuda\r\nk();\r\n  ```\r\n")), "k();\n");
}

TEST(CodeBlock, UnterminatedFenceIsTruncated) {
  EXPECT_EQ(find_code_block("```cuda\n__global__ void k() {\n").scan, CodeScan::unterminated);
  EXPECT_EQ(kind_of(reply("```cuda\nok();\n```\nRevised:\n```cuda\n__global__ void k(",
                          FinishReason::length)),
            LlmErrorKind::truncated);
}

TEST(CodeBlock, LengthStopWithoutCodeIsTruncated) {
  EXPECT_EQ(kind_of(reply("Let me think about the tiling first...", FinishReason::length)),
            LlmErrorKind::truncated);
}

TEST(CodeBlock, LengthStopAfterAClosedBlockKeepsTheCode) {
  EXPECT_EQ(extract_code(reply("```cuda\nk();\n```\nThis kernel uses", FinishReason::length)),
            "k();\n");
}

TEST(CodeBlock, NoCodeAndRefusal) {
  EXPECT_EQ(kind_of(reply("The kernel should use shared memory.")), LlmErrorKind::no_code);
  EXPECT_EQ(kind_of(reply("I'm sorry, but I can't help with that request.")),
            LlmErrorKind::refusal);
  EXPECT_EQ(kind_of(reply("")), LlmErrorKind::no_code);
  ChatReply r = reply("```cuda\nk();\n```");
  r.finish = FinishReason::refusal;
  EXPECT_EQ(kind_of(r), LlmErrorKind::refusal);
}

TEST(CodeBlock, EmptyBlockIsNoCode) {
  EXPECT_EQ(kind_of(reply("```cuda\n```")), LlmErrorKind::no_code);
}

}  // namespace
}  // namespace egg::llm
