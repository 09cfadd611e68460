// The builtin backend's fusion planner: partitions of chained anchors, sub-specs, the combined code
// (stream-ordered intermediates, segment calls in order), stage 2 and repair, and the error of a
// graph no plan covers.
#include "backend/builtin/planner.h"

#include <gtest/gtest.h>

#include <set>

#include "backend/builtin/builtin_backend.h"
#include "backend/builtin/families.h"
#include "backend/builtin/norm.h"
#include "backend/builtin/sinking.h"
#include "contract/contract.h"
#include "dump_candidates.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;

using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

// A param or input (kind "parameter", "buffer" or none), in float32.
json tensor(const std::string& name, json shape, const std::string& kind = "") {
  return egg::testing::tensor(name, shape, "float32", kind);
}

// A spec around the given nodes; the output is the last node.
spec::Spec make_spec(json inputs, json params, json nodes) {
  return spec::parse_spec(spec_around(inputs, params, nodes));
}

// gelu(LayerNorm(512)(Linear(256, 512)(x))) on 64 rows.
spec::Spec linear_layer_norm_gelu() {
  return make_spec(
      {tensor("x", {64, 256})},
      {tensor("fc.weight", {512, 256}, "parameter"), tensor("fc.bias", {512}, "parameter"),
       tensor("ln.weight", {512}, "parameter"), tensor("ln.bias", {512}, "parameter")},
      {node("fc", "linear", {ref("x"), ref("fc.weight"), ref("fc.bias")}, json::object(), {64, 512},
            10),
       node("ln", "layer_norm", {ref("fc"), ref("ln.weight"), ref("ln.bias")},
            {{"normalized_shape", {512}}, {"eps", 1e-5}}, {64, 512}, 11),
       node("gelu", "gelu", {ref("ln")}, {{"approximate", "none"}}, {64, 512}, 12)});
}

// softmax(bmm(q, k^T) * 0.125, -1) @ v for 4 heads of 64 tokens, head dim 32.
spec::Spec attention() {
  return make_spec(
      {tensor("q", {4, 64, 32}), tensor("k", {4, 64, 32}), tensor("v", {4, 64, 32})}, json::array(),
      {node("kt", "transpose", {ref("k")}, {{"dim0", 1}, {"dim1", 2}}, {4, 32, 64}, 10),
       node("scores", "bmm", {ref("q"), ref("kt")}, json::object(), {4, 64, 64}, 10),
       node("mul", "mul", {ref("scores"), json{{"scalar", 0.125}}}, json::object(), {4, 64, 64},
            10),
       node("softmax", "softmax", {ref("mul")}, {{"dim", -1}}, {4, 64, 64}, 11),
       node("out", "bmm", {ref("softmax"), ref("v")}, json::object(), {4, 64, 32}, 12)});
}

// The families and node names of a plan's segments, e.g. "gemm[fc] norm[ln,gelu]".
std::string layout(const Plan& plan) {
  std::string out;
  for (const auto& seg : plan.segments) {
    out += (out.empty() ? "" : " ") + seg.family->name() + "[";
    for (size_t i = 0; i < seg.nodes.size(); ++i) out += (i ? "," : "") + seg.nodes[i];
    out += "]";
  }
  return out;
}

StageRequest request(const spec::Spec& s, const contract::Contract& c, const std::string& stage) {
  StageRequest r;
  r.spec = &s;
  r.contract = &c;
  r.stage = stage;
  r.bottleneck = "memory";
  return r;
}

TEST(Planner, LinearLayerNormGelu) {
  BuiltinBackend backend(kData);
  const auto s = linear_layer_norm_gelu();
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[fc] norm[ln,gelu]");
  EXPECT_EQ(plan.segments[0].writes, std::vector<std::string>{"fc"});
  EXPECT_EQ(plan.segments[1].reads, std::vector<std::string>{"fc"});
  // The norm's sub-spec reads the GEMM's result as an input of its shape and writes the graph
  // output.
  const spec::Spec& sub = plan.segments[1].spec;
  ASSERT_EQ(sub.inputs.size(), 1u);
  EXPECT_EQ(sub.inputs[0].name, "fc");
  EXPECT_EQ(sub.inputs[0].shape, (spec::Shape{64, 512}));
  EXPECT_EQ(sub.params.size(), 2u);
  ASSERT_EQ(sub.outputs.size(), 1u);
  EXPECT_EQ(sub.outputs[0].name, "out0");
  EXPECT_EQ(sub.nodes[0].where.line, 11);
  EXPECT_EQ(plan.segments[0].spec.outputs[0].name, "fc");
  EXPECT_NO_THROW(backend.check_supported(s));
}

TEST(Planner, MatmulSoftmax) {
  BuiltinBackend backend(kData);
  const auto s =
      make_spec({tensor("a", {64, 128}), tensor("b", {128, 256})}, json::array(),
                {node("mm", "matmul", {ref("a"), ref("b")}, json::object(), {64, 256}, 5),
                 node("sm", "softmax", {ref("mm")}, {{"dim", -1}}, {64, 256}, 5)});
  EXPECT_EQ(layout(backend.plan(s)), "gemm[mm] reduction[sm]");
}

TEST(Planner, SumSoftmax) {
  BuiltinBackend backend(kData);
  const auto s =
      make_spec({tensor("x", {8, 16, 256})}, json::array(),
                {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {8, 256}, 5),
                 node("sm", "softmax", {ref("s")}, {{"dim", -1}}, {8, 256}, 6)});
  EXPECT_EQ(layout(backend.plan(s)), "reduction[s] reduction[sm]");
}

TEST(Planner, AttentionKeepsTheTransposeWithItsGemm) {
  BuiltinBackend backend(kData);
  const Plan plan = backend.plan(attention());
  EXPECT_EQ(layout(plan), "gemm[kt,scores,mul] reduction[softmax] gemm[out]");
  EXPECT_EQ(plan.segments[2].reads, std::vector<std::string>{"softmax"});
  EXPECT_EQ(plan.segments[2].spec.inputs.size(), 2u);  // v and softmax
}

TEST(Planner, PrologueBeforeAGemmBecomesItsOwnSegment) {
  BuiltinBackend backend(kData);
  const auto s = make_spec(
      {tensor("x", {64, 256})}, {tensor("fc.weight", {512, 256}, "parameter")},
      {node("scaled", "mul", {ref("x"), json{{"scalar", 2.0}}}, json::object(), {64, 256}, 5),
       node("fc", "linear", {ref("scaled"), ref("fc.weight"), json{{"none", true}}}, json::object(),
            {64, 512}, 6)});
  EXPECT_EQ(layout(backend.plan(s)), "elementwise[scaled] gemm[fc]");
}

// A transposed input that the anchor cannot read as it is (softmax over the first dim of x, a
// GEMM reads it in place) is copied by an element-wise kernel first.
TEST(Planner, AnOperandViewTheAnchorCannotReadBecomesACopyBeforeIt) {
  BuiltinBackend backend(kData);
  const auto s =
      make_spec({tensor("x", {64, 128})}, json::array(),
                {node("t", "transpose", {ref("x")}, {{"dim0", 0}, {"dim1", 1}}, {128, 64}, 5),
                 node("sm", "softmax", {ref("t")}, {{"dim", -1}}, {128, 64}, 5)});
  EXPECT_EQ(layout(backend.plan(s)), "elementwise[t] reduction[sm]");
}

// torch.tensordot's operands: a leaf permuted other than as a transpose, then reshaped, read by a
// matmul. The GEMM reads neither view: the prologue copies both (a kernel each: they differ in
// element count) and the GEMM reads the copies.
TEST(Planner, PermutedOperandsAGemmCannotReadAreCopiedByThePrologue) {
  BuiltinBackend backend(kData);
  const auto s =
      make_spec({tensor("a", {64, 32, 16}), tensor("b", {24, 64})}, json::array(),
                {node("pa", "permute", {ref("a")}, {{"dims", {1, 2, 0}}}, {32, 16, 64}, 5),
                 node("va", "reshape", {ref("pa")}, {{"shape", {512, 64}}}, {512, 64}, 5),
                 node("pb", "permute", {ref("b")}, {{"dims", {1, 0}}}, {64, 24}, 5),
                 node("vb", "reshape", {ref("pb")}, {{"shape", {64, 24}}}, {64, 24}, 5),
                 node("mm", "matmul", {ref("va"), ref("vb")}, json::object(), {512, 24}, 5)});
  EXPECT_EQ(layout(backend.plan(s)), "elementwise[pa,va] elementwise[pb,vb] gemm[mm]");
}

TEST(Planner, RejectedEpilogueSplitsIntoAnElementwiseSegment) {
  BuiltinBackend backend(kData);
  // A row sum's epilogue sees one value per row: broadcasting it over a wider tensor is its own
  // kernel.
  const auto s =
      make_spec({tensor("x", {64, 128}), tensor("y", {64, 256})}, json::array(),
                {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", true}}, {64, 1}, 5),
                 node("r", "add", {ref("s"), ref("y")}, json::object(), {64, 256}, 6)});
  EXPECT_EQ(layout(backend.plan(s)), "reduction[s] elementwise[r]");
}

TEST(Planner, SingleAnchorSpecIsUnchanged) {
  BuiltinBackend backend(kData);
  NormFamily norm(kData);
  const auto s =
      make_spec({tensor("x", {64, 512})},
                {tensor("ln.weight", {512}, "parameter"), tensor("ln.bias", {512}, "parameter")},
                {node("ln", "layer_norm", {ref("x"), ref("ln.weight"), ref("ln.bias")},
                      {{"normalized_shape", {512}}, {"eps", 1e-5}}, {64, 512}, 8),
                 node("gelu", "gelu", {ref("ln")}, {{"approximate", "none"}}, {64, 512}, 9)});
  const auto c = contract::derive(s, "k");
  const auto planned = backend.propose(request(s, c, "stage1"));
  const auto direct = norm.structures(s, c);
  ASSERT_EQ(planned.size(), direct.size());
  EXPECT_EQ(planned[0].id, direct[0].id);
  EXPECT_EQ(planned[0].code.device_code, direct[0].code.device_code);
  EXPECT_EQ(planned[0].code.launch_body, direct[0].code.launch_body);
  EXPECT_FALSE(planned[0].params.contains("plan"));
}

// A deep network's stage 1 tries its library floor early: every convolution on cuDNN at once
// (PyTorch's own route), not only the first segment's alternatives. Channel-rich convolutions
// start on cuDNN, so the floor is the first candidate (channels-last where a ReLU pass follows the
// convolution, NCHW for the last), and the second varies the first segment: the implicit GEMM.
TEST(Planner, StageOneTriesEverySegmentOnItsLibraryRouteFirst) {
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const json attrs = {{"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}, {"groups", 1}};
  const json none = {{"none", true}};
  const auto s = make_spec(
      {tensor("x", {8, 64, 28, 28})},
      {tensor("c1.weight", {64, 64, 3, 3}, "parameter"),
       tensor("c2.weight", {64, 64, 3, 3}, "parameter"),
       tensor("c3.weight", {64, 64, 3, 3}, "parameter")},
      {node("c1", "conv2d", {ref("x"), ref("c1.weight"), none}, attrs, {8, 64, 28, 28}, 5),
       node("r1", "relu", {ref("c1")}, json::object(), {8, 64, 28, 28}, 6),
       node("c2", "conv2d", {ref("r1"), ref("c2.weight"), none}, attrs, {8, 64, 28, 28}, 7),
       node("r2", "relu", {ref("c2")}, json::object(), {8, 64, 28, 28}, 8),
       node("c3", "conv2d", {ref("r2"), ref("c3.weight"), none}, attrs, {8, 64, 28, 28}, 9)});
  const auto c = contract::derive(s, "k");
  const auto cands = backend.propose(request(s, c, "stage1"));
  ASSERT_GE(cands.size(), 2u);
  auto on_cudnn = [](const Candidate& cand) {
    int n = 0;
    for (const auto& part : cand.params.at("plan"))
      n += part.at("params").value("structure", std::string()) == "cudnn";
    return n;
  };
  ASSERT_EQ(cands[0].params.at("plan").size(), 3u);
  EXPECT_EQ(on_cudnn(cands[0]), 3) << cands[0].id;
  EXPECT_EQ(cands[0].id,
            "plan:conv.cudnn.fwd.nhwc:a0:p256:v+conv.cudnn.fwd.nhwc:a0:p256:v+conv.cudnn.fwd:a0");
  EXPECT_EQ(on_cudnn(cands[1]), 2) << cands[1].id;
  EXPECT_EQ(cands[1].params.at("plan")[0].at("params").value("structure", ""), "igemm")
      << cands[1].id;
  std::set<std::string> ids;
  for (const auto& cand : cands) EXPECT_TRUE(ids.insert(cand.id).second) << "twice: " << cand.id;
}

TEST(Planner, ImpossibleGraphNamesTheOpAndLine) {
  BuiltinBackend backend(kData);
  auto s = make_spec({tensor("x", {64, 256})}, {tensor("fc.weight", {512, 256}, "parameter")},
                     {node("fc", "linear", {ref("x"), ref("fc.weight"), json{{"none", true}}},
                           json::object(), {64, 512}, 5),
                      node("flip", "torch.flip", {ref("fc")}, {{"dims", {1}}}, {64, 512}, 11)});
  try {
    backend.check_supported(s);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 11) << e.describe();
    EXPECT_TRUE(has(e.describe(), "torch.flip")) << e.describe();
    EXPECT_TRUE(has(e.hint(), "one kernel per anchor")) << e.hint();
  }
  const auto c = contract::derive(s, "k");
  EXPECT_THROW(backend.propose(request(s, c, "stage1")), UserError);
}

// A group no cut places is explained by the piece that no family takes, with that piece's line:
// here the bool mask `tril(full(...))`, read by an op of the next group, is cut off after a scan
// whose epilogue (an outer difference) grows the element count, and no kernel writes a bool
// tensor; the whole group's reasons ("no matmul in the op") name no line.
TEST(Planner, TheRejectedPieceIsExplainedWithItsLine) {
  BuiltinBackend backend(kData);
  json not_mask =
      node("not", "aten.bitwise_not.default", {ref("mask")}, json::object(), {64, 64}, 33, "bool");
  not_mask["target"] = "aten.bitwise_not.default";
  auto s = make_spec(
      {tensor("x", {4, 64})}, json::array(),
      {node("cs", "cumsum", {ref("x")}, {{"dim", -1}}, {4, 64}, 30),
       node("a", "unsqueeze", {ref("cs")}, {{"dim", -1}}, {4, 64, 1}, 31),
       node("b", "unsqueeze", {ref("cs")}, {{"dim", -2}}, {4, 1, 64}, 31),
       node("d", "sub", {ref("a"), ref("b")}, json::object(), {4, 64, 64}, 31),
       node("full", "full", json::array(), {{"size", {64, 64}}, {"fill_value", true}}, {64, 64}, 32,
            "bool"),
       node("mask", "tril", {ref("full")}, {{"diagonal", 0}}, {64, 64}, 32, "bool"), not_mask,
       node("out", "where", {ref("not"), json{{"scalar", -1e30}}, ref("d")}, json::object(),
            {4, 64, 64}, 34)});
  try {
    backend.check_supported(s);
    const auto c = contract::derive(s, "k");
    backend.propose(request(s, c, "stage1"));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_GT(e.where().line, 0) << e.describe();
    EXPECT_FALSE(has(e.describe(), "no linear, matmul")) << e.describe();
  }
}

// When no family's reason names a line (each says its anchor is missing, the element-wise family
// that the outputs differ in size), the part's first op is where the error points, naming its ops.
TEST(Planner, APartNoReasonLocatesPointsAtItsFirstOp) {
  auto j = spec_around(
      {tensor("x", {8, 16})}, json::array(),
      {node("a", "relu", {ref("x")}, json::object(), {8, 16}, 3),
       node("b", "slice", {ref("a")}, {{"dim", 1}, {"start", 0}, {"end", 4}}, {8, 4}, 4)});
  j["outputs"].push_back(
      {{"name", "out1"}, {"node", "a"}, {"shape", {8, 16}}, {"dtype", "float32"}});
  const auto families = make_families(kData);
  const UserError e = explain_rejection(spec::parse_spec(j), families);
  EXPECT_EQ(e.where().line, 3) << e.describe();
  EXPECT_TRUE(has(e.describe(), "`torch.relu`")) << e.describe();
  EXPECT_TRUE(has(e.describe(), "`torch.slice`")) << e.describe();
  EXPECT_TRUE(has(e.describe(), "different element counts")) << e.describe();
}

// A bool mask built in forward is a bool buffer: the kernel masking the GEMM's operand writes it,
// and the GEMM's epilogue masks its result with it (two kernels, not three).
TEST(Planner, AMaskBuiltInForwardIsABoolBufferTheGemmEpilogueReads) {
  BuiltinBackend backend(kData);
  auto s = make_spec({tensor("x", {64, 64})}, {tensor("w", {64, 64}, "parameter")},
                     {node("ones", "full", json::array(),
                           {{"size", {64, 64}}, {"fill_value", true}}, {64, 64}, 3, "bool"),
                      node("mask", "tril", {ref("ones")}, {{"diagonal", 0}}, {64, 64}, 3, "bool"),
                      node("xm", "where", {ref("mask"), ref("x"), json{{"scalar", 0.0}}},
                           json::object(), {64, 64}, 4),
                      node("mm", "matmul", {ref("xm"), ref("w")}, json::object(), {64, 64}, 5),
                      node("out", "where", {ref("mask"), ref("mm"), json{{"scalar", 0.0}}},
                           json::object(), {64, 64}, 6)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "elementwise[ones,mask,xm] gemm[mm,out]");
  ASSERT_EQ(plan.segments.size(), 2u);
  EXPECT_EQ(plan.segments[0].writes, (std::vector<std::string>{"mask", "xm"}));
  EXPECT_EQ(plan.segments[1].reads, (std::vector<std::string>{"mask", "xm"}));
}

// An input mask cast to float and read by two reductions of different sizes (a masked mean):
// materialized, the cast would need a kernel writing two sizes; each reduction computes it itself.
TEST(Planner, AnInputCastThatTwoReductionsReadIsComputedByEach) {
  BuiltinBackend backend(kData);
  auto s = make_spec(
      {tensor("x", {8, 16, 32}), egg::testing::tensor("mask", {8, 16}, "bool", "")}, json::array(),
      {node("m3", "unsqueeze", {ref("mask")}, {{"dim", -1}}, {8, 16, 1}, 3, "bool"),
       node("m", "cast", {ref("m3")}, {{"dtype", "float32"}}, {8, 16, 1}, 3),
       node("xm", "mul", {ref("x"), ref("m")}, json::object(), {8, 16, 32}, 4),
       node("total", "sum", {ref("xm")}, {{"dim", 1}, {"keepdim", false}}, {8, 32}, 4),
       node("count", "sum", {ref("m")}, {{"dim", 1}, {"keepdim", false}}, {8, 1}, 5),
       node("out", "div", {ref("total"), ref("count")}, json::object(), {8, 32}, 6)});
  const Plan plan = backend.plan(s);
  for (const auto& seg : plan.segments)
    for (const auto& w : seg.writes) EXPECT_TRUE(w != "m" && w != "xm") << layout(plan);
  EXPECT_EQ(layout(plan), "reduction[m,xm,total] reduction[m,count] elementwise[out]");
}

// An op outside EGG's op set (kept by its ATen name) is named, with its line, even when another
// family's reason about the same part comes first (a GEMM's "no matmul in the op").
TEST(Planner, AnOpOutsideTheOpSetIsTheReasonGiven) {
  BuiltinBackend backend(kData);
  json gather = node("g", "aten.index.Tensor", {ref("fc")}, json::object(), {64, 512}, 11);
  gather["target"] = "aten.index.Tensor";
  auto s = make_spec({tensor("x", {64, 256})}, {tensor("fc.weight", {512, 256}, "parameter")},
                     {node("fc", "linear", {ref("x"), ref("fc.weight"), json{{"none", true}}},
                           json::object(), {64, 512}, 5),
                      gather, node("r", "relu", {ref("g")}, json::object(), {64, 512}, 12)});
  try {
    backend.check_supported(s);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 11) << e.describe();
    EXPECT_TRUE(has(e.describe(), "`aten.index.Tensor`")) << e.describe();
    EXPECT_TRUE(has(e.describe(), "outside EGG's op set")) << e.describe();
  }
}

TEST(Planner, RendersIntermediatesAndSegmentCallsInOrder) {
  BuiltinBackend backend(kData);
  const auto s = linear_layer_norm_gelu();
  const auto c = contract::derive(s, "k");
  const auto cands = backend.propose(request(s, c, "stage1"));
  ASSERT_FALSE(cands.empty());
  const Candidate& first = cands.front();
  const std::string& body = first.code.launch_body;
  const std::string& code = first.code.device_code;
  // Each segment behind a static launch with its sub-contract, in its own namespace.
  EXPECT_TRUE(has(code, "namespace egg_plan_k_s0 {")) << code.substr(0, 2000);
  EXPECT_TRUE(has(code,
                  "static cudaError_t k_s0_launch(const float* x, const float* fc_weight, const "
                  "float* fc_bias, "
                  "float* fc, cudaStream_t stream)"));
  EXPECT_TRUE(has(code,
                  "static cudaError_t k_s1_launch(const float* fc, const float* ln_weight, "
                  "const float* ln_bias, float* out0, cudaStream_t stream)"));
  EXPECT_TRUE(has(code, "egg_k_s0_"));  // the families' functions carry the segment's name
  EXPECT_TRUE(has(code, "egg_k_s1_"));
  // The includes are hoisted above the namespaces, once.
  EXPECT_LT(code.find("#include <cublasLt.h>"), code.find("namespace egg_plan_k_s0"));
  EXPECT_EQ(code.find("#include <cuda_fp16.h>"), code.rfind("#include <cuda_fp16.h>"));
  // The launch body: allocate, run in order, free after the last reader, return the first error.
  const size_t alloc = body.find(
      "cudaMallocAsync(reinterpret_cast<void**>(&egg_tmp_fc), std::size_t(131072), stream)");
  const size_t s0 =
      body.find("egg_plan_k_s0::k_s0_launch(x, fc_weight, fc_bias, egg_tmp_fc, stream)");
  const size_t s1 =
      body.find("egg_plan_k_s1::k_s1_launch(egg_tmp_fc, ln_weight, ln_bias, out0, stream)");
  const size_t free = body.find("cudaFreeAsync(egg_tmp_fc, stream)");
  ASSERT_NE(alloc, std::string::npos) << body;
  ASSERT_NE(s0, std::string::npos) << body;
  ASSERT_NE(s1, std::string::npos) << body;
  ASSERT_NE(free, std::string::npos) << body;
  EXPECT_LT(alloc, s0);
  EXPECT_LT(s0, s1);
  EXPECT_LT(s1, free);
  EXPECT_TRUE(has(body, "return egg_err;"));
  EXPECT_FALSE(has(body, "Synchronize"));
  // Before the first allocation, the default pool keeps the intermediates' bytes between calls
  // (its release threshold raised), defined once after the segments' namespaces.
  const size_t keep = body.find("egg_keep_pool(std::size_t(131072));");
  ASSERT_NE(keep, std::string::npos) << body;
  EXPECT_LT(keep, alloc);
  EXPECT_EQ(code.find("inline void egg_keep_pool(std::size_t bytes)"),
            code.rfind("inline void egg_keep_pool(std::size_t bytes)"));
  EXPECT_GT(code.find("inline void egg_keep_pool(std::size_t bytes)"),
            code.rfind("namespace egg_plan_k_s1"));
  EXPECT_TRUE(has(code, "cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold"));
  if (const auto nvcc = egg::testing::real_nvcc()) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, first), "");
  }
  // The params record the plan; the id is deterministic.
  ASSERT_TRUE(first.params.contains("plan"));
  EXPECT_EQ(first.params["plan"].size(), 2u);
  EXPECT_EQ(first.params["plan"][0]["family"], "gemm");
  EXPECT_EQ(first.params["plan"][1]["family"], "norm");
  EXPECT_EQ(first.params["plan"][1]["nodes"], json({"ln", "gelu"}));
  EXPECT_EQ(first.params["link"], json::array({"cublasLt"}));
  EXPECT_TRUE(has(first.id, "plan:gemm."));
  EXPECT_EQ(BuiltinBackend(kData).propose(request(s, c, "stage1")).front().id, first.id);
}

TEST(Planner, AttentionFreesEachBufferAfterItsLastReader) {
  BuiltinBackend backend(kData);
  const auto s = attention();
  const auto c = contract::derive(s, "att");
  // The math's plan (the fp32 attention kernel is proposed first, in one kernel).
  std::string body;
  for (const auto& cand : backend.propose(request(s, c, "stage1")))
    if (has(cand.code.launch_body, "att_s0_launch(q, k, egg_tmp_mul, stream)"))
      body = cand.code.launch_body;
  const size_t s0 = body.find("att_s0_launch(q, k, egg_tmp_mul, stream)");
  const size_t free_mul = body.find("cudaFreeAsync(egg_tmp_mul, stream)");
  const size_t s1 = body.find("att_s1_launch(egg_tmp_mul, egg_tmp_softmax, stream)");
  const size_t s2 = body.find("att_s2_launch(v, egg_tmp_softmax, out0, stream)");
  const size_t free_softmax = body.find("cudaFreeAsync(egg_tmp_softmax, stream)");
  for (size_t at : {s0, free_mul, s1, s2, free_softmax}) ASSERT_NE(at, std::string::npos) << body;
  EXPECT_LT(s0, s1);
  EXPECT_LT(s1, free_mul);
  EXPECT_LT(free_mul, s2);
  EXPECT_LT(s2, free_softmax);
}

// A view that keeps the elements' order (unsqueeze, squeeze, reshape, flatten) between kernels is
// no kernel: its readers get its source's pointer under the view's shape.
spec::Spec linear_pool_sum() {
  return make_spec(
      {tensor("x", {64, 256})},
      {tensor("fc.weight", {512, 256}, "parameter"), tensor("fc.bias", {512}, "parameter")},
      {node("fc", "linear", {ref("x"), ref("fc.weight"), ref("fc.bias")}, json::object(), {64, 512},
            10),
       node("up", "unsqueeze", {ref("fc")}, {{"dim", 1}}, {64, 1, 512}, 11),
       node("pool", "max_pool1d", {ref("up")},
            {{"kernel_size", 2},
             {"stride", nullptr},
             {"padding", 0},
             {"dilation", 1},
             {"ceil_mode", false},
             {"return_indices", false}},
            {64, 1, 256}, 11),
       node("down", "squeeze", {ref("pool")}, {{"dim", 1}}, {64, 256}, 11),
       node("s", "sum", {ref("down")}, {{"dim", 1}, {"keepdim", false}}, {64}, 12),
       node("scaled", "mul", {ref("s"), json{{"scalar", 0.5}}}, json::object(), {64}, 13)});
}

TEST(Planner, OrderKeepingViewsBetweenKernelsAliasTheirSource) {
  BuiltinBackend backend(kData);
  const auto s = linear_pool_sum();
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[fc] pool[pool] reduction[s,scaled]");
  ASSERT_EQ(plan.aliases.size(), 2u);
  EXPECT_EQ(plan.aliases[0].value, "up");
  EXPECT_EQ(plan.aliases[0].source, "fc");
  EXPECT_EQ(plan.aliases[1].value, "down");
  EXPECT_EQ(plan.aliases[1].source, "pool");
  // The pool reads the view under its own shape; the GEMM writes its source for it.
  const spec::Spec& pool = plan.segments[1].spec;
  ASSERT_EQ(pool.inputs.size(), 1u);
  EXPECT_EQ(pool.inputs[0].name, "up");
  EXPECT_EQ(pool.inputs[0].shape, (spec::Shape{64, 1, 512}));
  EXPECT_EQ(plan.segments[0].spec.outputs.at(0).name, "fc");

  const auto c = contract::derive(s, "k");
  const Candidate first = backend.propose(request(s, c, "stage1")).front();
  const std::string& body = first.code.launch_body;
  const size_t s0 = body.find("k_s0_launch(x, fc_weight, fc_bias, egg_tmp_fc, stream)");
  const size_t s1 = body.find("k_s1_launch(egg_tmp_fc, egg_tmp_pool, stream)");
  const size_t free_fc = body.find("cudaFreeAsync(egg_tmp_fc, stream)");
  const size_t s2 = body.find("k_s2_launch(egg_tmp_pool, out0, stream)");
  for (size_t at : {s0, s1, free_fc, s2}) ASSERT_NE(at, std::string::npos) << body;
  EXPECT_LT(s0, s1);
  EXPECT_LT(s1, free_fc);  // the GEMM's buffer lives until the view's reader ran
  EXPECT_LT(free_fc, s2);
  EXPECT_FALSE(has(body, "egg_tmp_up"));  // no buffer, no copy for the views
  EXPECT_FALSE(has(body, "egg_tmp_down"));
  EXPECT_EQ(first.params["views"], json::array({{{"value", "up"}, {"source", "fc"}},
                                                {{"value", "down"}, {"source", "pool"}}}));
}

// `original = x.clone().detach()` kept for a residual add after a GEMM: the same bytes as x (the
// graph is functional), no copy kernel; the add reads x's pointer.
TEST(Planner, ACloneOfAnInputIsItsBytes) {
  BuiltinBackend backend(kData);
  auto s = make_spec({tensor("x", {64, 256})}, {tensor("fc.weight", {256, 256}, "parameter")},
                     {node("c", "clone", {ref("x")}, json::object(), {64, 256}, 5),
                      node("d", "detach", {ref("c")}, json::object(), {64, 256}, 5),
                      node("fc", "linear", {ref("x"), ref("fc.weight"), json{{"none", true}}},
                           json::object(), {64, 256}, 6),
                      node("sm", "softmax", {ref("fc")}, {{"dim", -1}}, {64, 256}, 7),
                      node("r", "add", {ref("sm"), ref("d")}, {{"alpha", 1}}, {64, 256}, 8)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[fc] reduction[sm,r]");
  ASSERT_EQ(plan.aliases.size(), 2u);
  EXPECT_EQ(plan.aliases[1].value, "d");
  EXPECT_EQ(plan.aliases[1].source, "x");
}

TEST(Planner, AViewReturnedByTheGraphIsWrittenByItsSourcesKernel) {
  BuiltinBackend backend(kData);
  auto s = make_spec({tensor("x", {64, 256})}, {tensor("fc.weight", {512, 256}, "parameter")},
                     {node("fc", "linear", {ref("x"), ref("fc.weight"), json{{"none", true}}},
                           json::object(), {64, 512}, 5),
                      node("sm", "softmax", {ref("fc")}, {{"dim", -1}}, {64, 512}, 6),
                      node("up", "unsqueeze", {ref("sm")}, {{"dim", 0}}, {1, 64, 512}, 7),
                      node("up2", "unsqueeze", {ref("up")}, {{"dim", 0}}, {1, 1, 64, 512}, 7)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[fc] reduction[sm]");
  ASSERT_EQ(plan.aliases.size(), 2u);
  EXPECT_EQ(plan.aliases[1].source, "sm");
  const auto c = contract::derive(s, "k");
  const std::string body = backend.propose(request(s, c, "stage1")).front().code.launch_body;
  EXPECT_TRUE(has(body, "k_s1_launch(egg_tmp_fc, out0, stream)"))
      << body;  // softmax writes the output
  EXPECT_FALSE(has(body, "egg_tmp_sm")) << body;
}

TEST(Planner, ViewsThatCannotAliasAreCopiedByIndex) {
  BuiltinBackend backend(kData);
  // A view of a graph input returned as the output needs a copy: an element-wise kernel by index.
  auto s = make_spec({tensor("x", {64, 256})}, json::array(),
                     {node("up", "unsqueeze", {ref("x")}, {{"dim", 0}}, {1, 64, 256}, 9)});
  EXPECT_EQ(node_roles(s, OpTable(kData))[0], NodeRole::follower);
  EXPECT_NO_THROW(backend.check_supported(s));
  // A view that changes the element count is no alias, nor a copy: the error names it and its line.
  auto grown = make_spec({tensor("x", {64, 256})}, json::array(),
                         {node("r", "reshape", {ref("x")}, {{"shape", {64, 512}}}, {64, 512}, 5),
                          node("e", "exp", {ref("r")}, json::object(), {64, 512}, 6)});
  EXPECT_EQ(node_roles(grown, OpTable(kData))[0], NodeRole::anchor);
  try {
    backend.check_supported(grown);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 5) << e.describe();
    EXPECT_TRUE(has(e.describe(), "element count")) << e.describe();
  }
}

TEST(Planner, CatOfTwoGemmsIsOneElementwiseKernel) {
  BuiltinBackend backend(kData);
  const auto s = make_spec(
      {tensor("x", {64, 256})},
      {tensor("a.weight", {128, 256}, "parameter"), tensor("b.weight", {64, 256}, "parameter")},
      {node("a", "linear", {ref("x"), ref("a.weight"), json{{"none", true}}}, json::object(),
            {64, 128}, 5),
       node("b", "linear", {ref("x"), ref("b.weight"), json{{"none", true}}}, json::object(),
            {64, 64}, 6),
       node("cat", "cat", json::array({json{{"list", {ref("a"), ref("b")}}}}), {{"dim", 1}},
            {64, 192}, 7),
       node("relu", "relu", {ref("cat")}, json::object(), {64, 192}, 8)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[a] gemm[b] elementwise[cat,relu]");
  EXPECT_EQ(plan.segments[2].reads, (std::vector<std::string>{"a", "b"}));
  const auto c = contract::derive(s, "k");
  const std::string code = backend.propose(request(s, c, "stage1")).front().code.device_code;
  // Each operand of the cat is read in its own range along dim 1, its loads guarded.
  EXPECT_TRUE(has(code, "(egg_i0 < 128) ? egg_to_float(a[egg_i1 * 128 + egg_i0]) : 0.0f")) << code;
  EXPECT_TRUE(has(code, "(egg_i0 >= 128) ? egg_to_float(b[egg_i1 * 64 + egg_i2]) : 0.0f")) << code;
}

TEST(Planner, HeadsSplitFromAProjectionAreOneCopyBeforeTheNextGemm) {
  BuiltinBackend backend(kData);
  // q, k = proj(x).split(128, 2); heads by view + transpose; q @ k^T (causal attention's start).
  const auto s = make_spec(
      {tensor("x", {4, 64, 128})}, {tensor("proj.weight", {256, 128}, "parameter")},
      {node("proj", "linear", {ref("x"), ref("proj.weight"), json{{"none", true}}}, json::object(),
            {4, 64, 256}, 5),
       node("split", "split", {ref("proj")}, {{"split_size", 128}, {"dim", 2}}, {4, 64, 128}, 6),
       node("q", "getitem", {ref("split"), json{{"scalar", 0}}}, json::object(), {4, 64, 128}, 6),
       node("k", "getitem", {ref("split"), json{{"scalar", 1}}}, json::object(), {4, 64, 128}, 6),
       node("qv", "reshape", {ref("q")}, {{"shape", {4, 64, 4, 32}}}, {4, 64, 4, 32}, 7),
       node("qh", "transpose", {ref("qv")}, {{"dim0", 1}, {"dim1", 2}}, {4, 4, 64, 32}, 7),
       node("kv", "reshape", {ref("k")}, {{"shape", {4, 64, 4, 32}}}, {4, 64, 4, 32}, 8),
       node("kh", "transpose", {ref("kv")}, {{"dim0", 1}, {"dim1", 2}}, {4, 4, 64, 32}, 8),
       node("kt", "transpose", {ref("kh")}, {{"dim0", -2}, {"dim1", -1}}, {4, 4, 32, 64}, 9),
       node("att", "matmul", {ref("qh"), ref("kt")}, json::object(), {4, 4, 64, 64}, 9)});
  const Plan plan = backend.plan(s);
  // The views of the pieces are computed in the copy that reads them (no alias of a value that
  // kernel itself writes), and the pieces themselves are never stored.
  EXPECT_EQ(layout(plan), "gemm[proj] elementwise[split,q,k,qv,qh,kv,kh,kt] gemm[att]");
  EXPECT_TRUE(plan.aliases.empty());
  EXPECT_EQ(plan.segments[1].writes, (std::vector<std::string>{"qh", "kt"}));
  const auto c = contract::derive(s, "k");
  const std::string code = backend.propose(request(s, c, "stage1")).front().code.device_code;
  // kt[b, h, d, t] = proj[b, t, 128 + h * 32 + d].
  EXPECT_TRUE(has(code, "+ 128)")) << code;
}

TEST(Planner, AnEpilogueWhoseOutputsDifferInSizeBecomesSeveralKernels) {
  BuiltinBackend backend(kData);
  // NetVLAD's residuals: a sum over dim 1 broadcast over 64 clusters, and the transposed input of
  // the next GEMM, both after the sum: no one kernel writes the two (33x and 1x the sum's size).
  const auto s =
      make_spec({tensor("x", {800, 32}), tensor("y", {8, 100, 64})}, {tensor("c", {1, 64, 32})},
                {node("v", "reshape", {ref("x")}, {{"shape", {8, 100, 32}}}, {8, 100, 32}, 4),
                 node("s", "sum", {ref("v")}, {{"dim", {1}}, {"keepdim", true}}, {8, 1, 32}, 5),
                 node("m", "mul", {ref("s"), ref("c")}, json::object(), {8, 64, 32}, 6),
                 node("t", "transpose", {ref("v")}, {{"dim0", 1}, {"dim1", 2}}, {8, 32, 100}, 7),
                 node("r", "matmul", {ref("t"), ref("y")}, json::object(), {8, 32, 64}, 8),
                 node("rt", "transpose", {ref("r")}, {{"dim0", 1}, {"dim1", 2}}, {8, 64, 32}, 9),
                 node("d", "sub", {ref("rt"), ref("m")}, json::object(), {8, 64, 32}, 9)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "reduction[s] elementwise[m] elementwise[t] gemm[r] elementwise[rt,d]");
  EXPECT_EQ(plan.segments[2].reads, std::vector<std::string>{"v"});
}

// Outputs that share no op and no anchor (a rolled tensor, and an unrelated scaled one): a kernel
// per part, each fused whole, not a cut in node order (which would copy the cat's first slice by
// itself).
TEST(Planner, IndependentPartsWithoutAnAnchorAreAKernelEach) {
  BuiltinBackend backend(kData);
  json j =
      spec_around({tensor("x", {8, 28, 96}), tensor("y", {4, 4})}, json::array(),
                  {node("a", "slice", {ref("x")},
                        {{"dim", 1}, {"start", 3}, {"end", nullptr}, {"step", 1}}, {8, 25, 96}, 5),
                   node("b", "slice", {ref("x")},
                        {{"dim", 1}, {"start", 0}, {"end", 3}, {"step", 1}}, {8, 3, 96}, 5),
                   node("c", "cat", json::array({json{{"list", {ref("a"), ref("b")}}}}),
                        {{"dim", 1}}, {8, 28, 96}, 5),
                   node("m", "mul", {ref("y"), json{{"scalar", 2.0}}}, json::object(), {4, 4}, 6)});
  j["outputs"] = {{{"name", "out0"}, {"node", "c"}, {"shape", {8, 28, 96}}, {"dtype", "float32"}},
                  {{"name", "out1"}, {"node", "m"}, {"shape", {4, 4}}, {"dtype", "float32"}}};
  const Plan plan = backend.plan(spec::parse_spec(j));
  EXPECT_EQ(layout(plan), "elementwise[a,b,c] elementwise[m]");
}

TEST(Planner, AChainOfViewsOfAValueTheSameKernelComputesIsComputedThere) {
  BuiltinBackend backend(kData);
  // Swin's window partition: a copy (clone of a transpose), then views of the copy read by the
  // next op of the same kernel: the views come into that kernel, never an alias of its own output.
  const auto s =
      make_spec({tensor("x", {4, 64, 128})}, {tensor("fc.weight", {128, 128}, "parameter")},
                {node("a", "linear", {ref("x"), ref("fc.weight"), json{{"none", true}}},
                      json::object(), {4, 64, 128}, 5),
                 node("t", "transpose", {ref("a")}, {{"dim0", 1}, {"dim1", 2}}, {4, 128, 64}, 6),
                 node("c", "clone", {ref("t")}, json::object(), {4, 128, 64}, 6),
                 node("v1", "reshape", {ref("c")}, {{"shape", {4, 128, 8, 8}}}, {4, 128, 8, 8}, 7),
                 node("v2", "reshape", {ref("v1")}, {{"shape", {4, 8192}}}, {4, 8192}, 7),
                 node("r", "relu", {ref("v2")}, json::object(), {4, 8192}, 8)});
  const Plan plan = backend.plan(s);
  EXPECT_EQ(layout(plan), "gemm[a] elementwise[t,c,v1,v2,r]");
  EXPECT_TRUE(plan.aliases.empty());
  const auto c = contract::derive(s, "k");
  EXPECT_NO_THROW(backend.propose(request(s, c, "stage1")));
}

// `widths.size()` layers relu(Linear(in, width)(...)) on 64 rows of 256, the last one the output.
spec::Spec linear_relu_layers(const std::vector<int>& widths) {
  json params = json::array(), nodes = json::array();
  std::string in = "x";
  int width_in = 256, line = 10;
  for (size_t l = 0; l < widths.size(); ++l) {
    const std::string fc = "fc" + std::to_string(l), relu = "relu" + std::to_string(l);
    params.push_back(tensor(fc + ".weight", {widths[l], width_in}, "parameter"));
    params.push_back(tensor(fc + ".bias", {widths[l]}, "parameter"));
    nodes.push_back(node(
        fc, "linear",
        {egg::testing::ref(in), egg::testing::ref(fc + ".weight"), egg::testing::ref(fc + ".bias")},
        json::object(), {64, widths[l]}, line++));
    nodes.push_back(
        node(relu, "relu", {egg::testing::ref(fc)}, json::object(), {64, widths[l]}, line++));
    in = relu;
    width_in = widths[l];
  }
  return make_spec({tensor("x", {64, 256})}, params, nodes);
}

TEST(Planner, SegmentsWithTheSameCodeShareOneCompiledCopy) {
  BuiltinBackend backend(kData);
  // Four layers of one width: the same code but for their tensors. The first reads `x`, which is
  // also a name inside the GEMM's epilogue helpers, so it keeps its own copy.
  const auto s = linear_relu_layers({256, 256, 256, 256});
  const auto c = contract::derive(s, "k");
  const auto cands = backend.propose(request(s, c, "stage1"));
  ASSERT_FALSE(cands.empty());
  const Candidate& first = cands.front();
  ASSERT_EQ(first.params["plan"].size(), 4u) << first.id;
  const std::string& code = first.code.device_code;
  const std::string& body = first.code.launch_body;
  EXPECT_TRUE(has(code, "4 kernels run in stream order,\n// 2 distinct")) << code.substr(0, 300);
  EXPECT_TRUE(has(code, "namespace egg_plan_k_s1 {"));
  for (const char* other : {"namespace egg_plan_k_s2 {", "namespace egg_plan_k_s3 {"})
    EXPECT_FALSE(has(code, other)) << other << ": the same code as segment 1";
  EXPECT_TRUE(has(code, "also segment 2: fc2, relu2"));
  // Every step calls its launch, each with its own tensors, in order.
  size_t at = 0;
  for (const char* call :
       {"egg_plan_k_s0::k_s0_launch(x, fc0_weight, fc0_bias, egg_tmp_relu0, stream)",
        "egg_plan_k_s1::k_s1_launch(egg_tmp_relu0, fc1_weight, fc1_bias, egg_tmp_relu1, stream)",
        "egg_plan_k_s1::k_s1_launch(egg_tmp_relu1, fc2_weight, fc2_bias, egg_tmp_relu2, stream)",
        "egg_plan_k_s1::k_s1_launch(egg_tmp_relu2, fc3_weight, fc3_bias, out0, stream)"}) {
    const size_t next = body.find(call, at);
    ASSERT_NE(next, std::string::npos) << call << " (in order) in\n" << body;
    at = next;
  }
  // The record still lists every segment, with its own nodes.
  EXPECT_EQ(first.params["plan"][2]["nodes"], json({"fc2", "relu2"}));

  // Other widths are other code: layer 2 (256 to 128) and layer 3 (128 to 256) keep their own.
  const auto s2 = linear_relu_layers({256, 256, 128, 256});
  const auto c2 = contract::derive(s2, "k");
  const std::string code2 = backend.propose(request(s2, c2, "stage1")).front().code.device_code;
  EXPECT_TRUE(has(code2, "4 kernels run in stream order,\n// 4 distinct")) << code2.substr(0, 300);
  EXPECT_TRUE(has(code2, "namespace egg_plan_k_s1 {"));
  EXPECT_TRUE(has(code2, "namespace egg_plan_k_s2 {"));
  EXPECT_TRUE(has(code2, "namespace egg_plan_k_s3 {"));
}

TEST(Planner, StageTwoTunesEverySegmentAndRepairFallsBack) {
  BuiltinBackend backend(kData);
  const auto s = linear_layer_norm_gelu();
  const auto c = contract::derive(s, "k");
  const Candidate winner = backend.propose(request(s, c, "stage1")).front();
  auto r2 = request(s, c, "stage2");
  r2.incumbent = winner;
  const auto tuned = backend.propose(r2);
  ASSERT_GE(tuned.size(), 2u);
  // Round-robin: both segments are tuned, each with the other at the incumbent's part.
  bool tuned0 = false, tuned1 = false;
  for (const auto& t : tuned) {
    const bool same0 = t.params["plan"][0]["id"] == winner.params["plan"][0]["id"];
    const bool same1 = t.params["plan"][1]["id"] == winner.params["plan"][1]["id"];
    tuned0 = tuned0 || (!same0 && same1);
    tuned1 = tuned1 || (same0 && !same1);
  }
  EXPECT_TRUE(tuned0);
  EXPECT_TRUE(tuned1);
  std::set<std::string> ids;
  for (const auto& t : tuned) EXPECT_TRUE(ids.insert(t.id).second) << t.id;
  // A fresh backend (no remembered parts) proposes the same.
  const auto again = BuiltinBackend(kData).propose(r2);
  ASSERT_EQ(again.size(), tuned.size());
  EXPECT_EQ(again.back().id, tuned.back().id);
  // Repair: the segment the report names takes its family's fallback; the other stays.
  const Candidate broken = winner;
  auto fixed = backend.repair(
      r2, broken, Failure{FailureClass::compile_error, "k_s1.cu(12): error in egg_k_s1_row"});
  ASSERT_TRUE(fixed.has_value());
  EXPECT_NE(fixed->id, broken.id);
  EXPECT_EQ(fixed->params["plan"][0]["id"], broken.params["plan"][0]["id"]);
  EXPECT_NE(fixed->params["plan"][1]["id"], broken.params["plan"][1]["id"]);
}

// silu(x W1^T) * (x W3^T), written with silu before the second projection: the graph's own
// order gives silu to the first GEMM's epilogue (a pass cuBLASLt has no native epilogue for),
// the sunk plan to the second's, beside the product it needs a pass for anyway.
spec::Spec gated_projections() {
  return make_spec({tensor("x", {64, 128})},
                   {tensor("w1", {256, 128}, "parameter"), tensor("w3", {256, 128}, "parameter")},
                   {node("a", "linear", {ref("x"), ref("w1")}, json::object(), {64, 256}, 10),
                    node("s", "silu", {ref("a")}, json::object(), {64, 256}, 10),
                    node("b", "linear", {ref("x"), ref("w3")}, json::object(), {64, 256}, 10),
                    node("out", "mul", {ref("s"), ref("b")}, json::object(), {64, 256}, 10)});
}

TEST(Planner, ElementwiseOpsSinkToTheirReadersKernelInAnotherPlan) {
  BuiltinBackend backend(kData);
  const auto s = gated_projections();
  const auto all = backend.plans(s);
  EXPECT_EQ(layout(all.front()), "gemm[a,s] gemm[b,out]");
  std::vector<std::string> layouts;
  for (const auto& p : all) layouts.push_back(layout(p));
  EXPECT_NE(std::find(layouts.begin(), layouts.end(), "gemm[a] gemm[b,s,out]"), layouts.end())
      << json(layouts).dump();
  // Stage 1 measures both; stage 2 tunes the plan its incumbent belongs to, told apart by the
  // segments' nodes (the families are the same).
  const auto c = contract::derive(s, "k");
  const auto first = backend.propose(request(s, c, "stage1"));
  std::set<std::string> plans_proposed;
  for (const auto& cand : first) plans_proposed.insert(cand.params["plan"][0]["nodes"].dump());
  EXPECT_EQ(plans_proposed, (std::set<std::string>{R"(["a","s"])", R"(["a"])"}));
  // The graph's own plan first (a build without a GPU keeps it), the sunk one right after.
  ASSERT_GE(first.size(), 2u);
  EXPECT_EQ(first[0].params["plan"][0]["nodes"], json({"a", "s"}));
  EXPECT_EQ(first[1].params["plan"][0]["nodes"], json({"a"}));
  for (const auto& nodes : {json{"a"}, json{"a", "s"}}) {
    const auto incumbent = std::find_if(first.begin(), first.end(), [&](const Candidate& cand) {
      return cand.params["plan"][0]["nodes"] == nodes;
    });
    ASSERT_NE(incumbent, first.end());
    auto r2 = request(s, c, "stage2");
    r2.incumbent = *incumbent;
    const auto tuned = backend.propose(r2);
    ASSERT_FALSE(tuned.empty());
    for (const auto& t : tuned) EXPECT_EQ(t.params["plan"][0]["nodes"], nodes) << t.id;
  }
}

TEST(Planner, SinkingStopsBeforeTheFirstReaderAndKeepsReturnedValues) {
  const OpTable ops(kData);
  // x -> relu -> (gemm reads it) : relu is read right after, nothing moves.
  const auto kept =
      make_spec({tensor("x", {64, 128})}, {tensor("w", {256, 128}, "parameter")},
                {node("r", "relu", {ref("x")}, json::object(), {64, 128}, 10),
                 node("out", "linear", {ref("r"), ref("w")}, json::object(), {64, 256}, 11)});
  EXPECT_FALSE(sink_elementwise(kept, ops).has_value());
  // A chain sinks whole, to just before its reader; where the graph returns it, it stays.
  const auto chain = make_spec(
      {tensor("x", {64, 128}), tensor("y", {64, 128})}, {tensor("w", {128, 128}, "parameter")},
      {node("t", "tanh", {ref("x")}, json::object(), {64, 128}, 10),
       node("u", "mul", {ref("t"), json{{"scalar", 2.0}}}, json::object(), {64, 128}, 11),
       node("g", "linear", {ref("y"), ref("w")}, json::object(), {64, 128}, 12),
       node("out", "add", {ref("u"), ref("g")}, json::object(), {64, 128}, 13)});
  const auto sunk = sink_elementwise(chain, ops);
  ASSERT_TRUE(sunk.has_value());
  std::vector<std::string> order;
  for (const auto& n : sunk->nodes) order.push_back(n.name);
  EXPECT_EQ(order, (std::vector<std::string>{"g", "t", "u", "out"}));
  spec::Spec returned = chain;
  returned.outputs.push_back(returned.outputs.front());
  returned.outputs.back().name = "out1";
  returned.outputs.back().node = "u";
  EXPECT_FALSE(sink_elementwise(returned, ops).has_value());  // u stays, and t before it
}

// A manual aid: every family's candidates (cuDNN structures included) for every spec.json under
// $EGG_FAMILY_SPEC_DIR that the family implements, written under $EGG_FAMILY_OUT_DIR/<family>/ (a
// refactor of the families compares two such trees). EGG_FAMILY_WGMMA=1: as for sm_90a targets
// (the wgmma kernels too).
TEST(Families, DumpEveryCandidateForNvcc) {
  const char* in = std::getenv("EGG_FAMILY_SPEC_DIR");
  const char* out = std::getenv("EGG_FAMILY_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_FAMILY_SPEC_DIR and EGG_FAMILY_OUT_DIR";
  const char* wgmma = std::getenv("EGG_FAMILY_WGMMA");
  for (const auto& f : make_families(kData, "default", Cudnn::any_engine,
                                     wgmma != nullptr && std::string(wgmma) == "1"))
    egg::testing::dump_every_candidate(*f, kData, in,
                                       (std::filesystem::path(out) / f->name()).c_str(), true);
}

}  // namespace
}  // namespace egg::backend::builtin
