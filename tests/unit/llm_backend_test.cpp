// The LLM backend's agents without a network: golden checks of the rendered prompts (the lines that
// matter) and how answers become candidates.
#include "backend/llm/llm_backend.h"

#include <gtest/gtest.h>

#include <deque>

#include "llm/errors.h"
#include "spec_fixtures.h"

namespace egg::backend::llm_backend {
namespace {

using egg::testing::has;

// Answers from a script and keeps the requests.
class ScriptedClient : public llm::ChatClient {
 public:
  std::deque<std::string> answers;
  std::vector<llm::ChatRequest> requests;
  llm::ChatReply complete(const llm::ChatRequest& r) override {
    requests.push_back(r);
    llm::ChatReply reply;
    reply.text = answers.front();
    answers.pop_front();
    reply.tokens_in = 10;
    reply.tokens_out = 5;
    return reply;
  }
};

class LlmBackendTest : public ::testing::Test {
 protected:
  spec::Spec s = spec::parse_spec(testing::gelu_bias_spec());
  contract::Contract c = contract::derive(s, "gelu_bias");
  ScriptedClient* client = nullptr;
  std::unique_ptr<LlmBackend> backend;

  void SetUp() override {
    BackendConfig config;
    config.name = "openai";
    config.model = "m";
    config.data_dir = EGG_TEST_DATA_DIR;
    config.op_source =
        "import torch\n# a comment that must not reach the model\n\nclass Model: pass\n";
    auto scripted = std::make_unique<ScriptedClient>();
    client = scripted.get();
    backend = std::make_unique<LlmBackend>(config, std::move(scripted), nullptr);
  }

  StageRequest request(const std::string& stage) {
    return StageRequest{&s,       &c, stage, "Stage objective line.\nmore", {"sm_90"}, std::nullopt,
                        "memory", "", {}};
  }
};

TEST_F(LlmBackendTest, CodePromptCarriesContractArchSourceAndFormat) {
  auto [system, user] = backend->code_prompt(request("stage1"));
  EXPECT_TRUE(has(system, "code agent"));
  EXPECT_TRUE(has(user, "Stage objective line."));
  EXPECT_TRUE(
      has(user,
          "static cudaError_t egg_launch_impl(const float* x, const float* bias, float* out0, "
          "cudaStream_t stream)"))
      << user;
  EXPECT_TRUE(has(user, "132 SMs"));                    // prompts/arch/sm_90.md
  EXPECT_TRUE(has(user, "class Model: pass"));          // the reference source...
  EXPECT_FALSE(has(user, "must not reach the model"));  // ...without comment lines
  EXPECT_TRUE(has(user, "0.0001 + 0.0001 * |ref|"));
  EXPECT_TRUE(has(user, "```cuda"));
  EXPECT_TRUE(has(user, "bottleneck: memory"));
  EXPECT_FALSE(has(user, "# Incumbent"));
}

TEST_F(LlmBackendTest, StageTwoPromptShowsTheIncumbentAndRecentAttempts) {
  auto r = request("stage2");
  Candidate incumbent;
  incumbent.code.device_code = "__global__ void incumbent_kernel() {}";
  r.incumbent = incumbent;
  r.recent = {{"llm:stage2:code1", "wider vectors", "mismatch"}};
  auto [system, user] = backend->code_prompt(r);
  EXPECT_TRUE(has(user, "# Incumbent"));
  EXPECT_TRUE(has(user, "incumbent_kernel"));
  EXPECT_TRUE(has(user, "- llm:stage2:code1: wider vectors -> mismatch"));
}

TEST_F(LlmBackendTest, AnswerBecomesACandidateWhoseLaunchCallsTheImpl) {
  client->answers = {
      "plan\n```cuda\nstatic cudaError_t egg_launch_impl() { return cudaSuccess; }\n```\n"};
  auto candidates = backend->propose(request("stage1"));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_TRUE(has(candidates[0].code.device_code, "egg_launch_impl"));
  EXPECT_TRUE(
      has(candidates[0].code.launch_body, "return egg_launch_impl(x, bias, out0, stream);"));
  EXPECT_EQ(candidates[0].id, "llm:stage1:code1");
  EXPECT_EQ(backend->usage()["stage1"]["code"]["tokens_in"], 10);
}

TEST_F(LlmBackendTest, CodelessAnswersAreFailedAttemptsThenNothing) {
  client->answers = {"I would rather not.", "Still no code here."};
  EXPECT_TRUE(backend->propose(request("stage1")).empty());
  EXPECT_EQ(client->requests.size(), 2u);
  EXPECT_EQ(backend->usage()["stage1"]["code"]["failures"]["no_code"], 2);
}

TEST_F(LlmBackendTest, DebugAgentSeesTheFailureAndTheCode) {
  client->answers = {"```cuda\nfixed\n```"};
  Candidate failed;
  failed.code.device_code = "broken_kernel_code";
  auto fixed = backend->repair(request("stage1"), failed,
                               Failure{FailureClass::compile_error, "identifier undefined"});
  ASSERT_TRUE(fixed.has_value());
  const std::string& sent = client->requests.back().messages.back().content;
  EXPECT_TRUE(has(sent, "broken_kernel_code"));
  EXPECT_TRUE(has(sent, "Failure (compile_error)"));
  EXPECT_TRUE(has(sent, "identifier undefined"));
  EXPECT_TRUE(has(client->requests.back().system, "debug agent"));
}

TEST(StripCommentLines, DropsBlankAndCommentOnlyLines) {
  EXPECT_EQ(strip_comment_lines("a = 1  # keep\n\n   # drop\nb = 2   \n"),
            "a = 1  # keep\nb = 2\n");
}

}  // namespace
}  // namespace egg::backend::llm_backend
