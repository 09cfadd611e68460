// Attention family: scaled_dot_product_attention planned with its mask's broadcast strides, the
// heads merged back as its output layout, what it refuses (with the reason), the backend proposing
// the flash kernel first beside the lowered math, and the kernel compiling with the real nvcc.
#include "backend/builtin/attention.h"

#include <gtest/gtest.h>

#include <set>

#include <fstream>

#include "backend/builtin/builtin_backend.h"
#include "backend/builtin/raising.h"
#include "contract/contract.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

// sdpa(q [2, 4, 100, 64], k/v [2, 4, 90, 64]) in `dtype`, with a bool mask [2, 1, 100, 90] when
// `mask`; then transpose(1, 2) and a reshape to [2, 100, 256] when `merge`.
json sdpa_spec(const char* dtype, bool mask, bool merge, bool causal = false) {
  json inputs = {tensor("q", {2, 4, 100, 64}, dtype), tensor("k", {2, 4, 90, 64}, dtype),
                 tensor("v", {2, 4, 90, 64}, dtype)};
  json args = {ref("q"), ref("k"), ref("v")};
  if (mask) {
    inputs.push_back(tensor("keep", {2, 1, 100, 90}, "bool"));
    args.push_back(ref("keep"));
  }
  json nodes = json::array({node("att", "scaled_dot_product_attention", args,
                                 {{"dropout_p", 0.0}, {"is_causal", causal}, {"scale", nullptr}},
                                 {2, 4, 100, 64}, 9, dtype)});
  if (merge) {
    nodes.push_back(node("tr", "transpose", {ref("att")}, {{"dim0", 1}, {"dim1", 2}},
                         {2, 100, 4, 64}, 10, dtype));
    nodes.push_back(node("merged", "reshape", {ref("tr")}, {{"shape", {2, 100, 256}}},
                         {2, 100, 256}, 10, dtype));
  }
  return spec_around(inputs, json::array(), nodes);
}

TEST(Attention, PlansTheMaskAsBroadcastStrides) {
  const auto s = spec::parse_spec(sdpa_spec("float16", true, false));
  const auto a = plan_attention(s);
  ASSERT_TRUE(std::holds_alternative<AttentionPlan>(a)) << std::get<UserError>(a).describe();
  const AttentionPlan& p = std::get<AttentionPlan>(a);
  EXPECT_EQ(p.batch(), 8);
  EXPECT_EQ(p.l, 100);
  EXPECT_EQ(p.s, 90);
  EXPECT_EQ(p.e, 64);
  EXPECT_EQ(p.mask, "keep");
  EXPECT_EQ(p.mask_stride_s, 1);
  EXPECT_EQ(p.mask_stride_l, 90);
  // The batch dim is the mask's own, the heads broadcast.
  EXPECT_EQ(p.mask_batch_strides, (std::vector<std::int64_t>{9000, 0}));
  EXPECT_EQ(p.out_heads, 0);
  EXPECT_DOUBLE_EQ(p.scale, 0.125);
}

TEST(Attention, WritesTheHeadsMergedBack) {
  const auto s = spec::parse_spec(sdpa_spec("bfloat16", false, true));
  const auto a = plan_attention(s);
  ASSERT_TRUE(std::holds_alternative<AttentionPlan>(a)) << std::get<UserError>(a).describe();
  EXPECT_EQ(std::get<AttentionPlan>(a).out_heads, 4);
}

// sdpa_spec without a mask, its head dim (q, k, v and the output's last dim) set to `e`.
json with_head_dim(const char* dtype, int e) {
  json j = sdpa_spec(dtype, false, false);
  for (auto& t : j["inputs"]) t["shape"][3] = e;
  j["nodes"][0]["shape"][3] = e;
  j["outputs"][0]["shape"][3] = e;
  return j;
}

TEST(Attention, RefusesWhatTheFlashKernelDoesNotComputeWithTheReason) {
  const auto fp64 = spec::parse_spec(sdpa_spec("float64", false, false));
  const auto a = plan_attention(fp64);
  ASSERT_TRUE(std::holds_alternative<UserError>(a));
  EXPECT_TRUE(
      has(std::get<UserError>(a).what(), "float16 and bfloat16 on tensor cores and float32"))
      << std::get<UserError>(a).what();
  EXPECT_EQ(std::get<UserError>(a).where().line, 9);
  // fp32 keeps a row in registers: head dims up to 64.
  const auto w32 = plan_attention(spec::parse_spec(with_head_dim("float32", 96)));
  ASSERT_TRUE(std::holds_alternative<UserError>(w32));
  EXPECT_TRUE(has(std::get<UserError>(w32).what(), "head dim 96"))
      << std::get<UserError>(w32).what();
  EXPECT_TRUE(has(std::get<UserError>(w32).what(), "up to 64"));

  const auto b = plan_attention(spec::parse_spec(with_head_dim("float16", 192)));
  ASSERT_TRUE(std::holds_alternative<UserError>(b));
  EXPECT_TRUE(has(std::get<UserError>(b).what(), "head dim 192"));

  json more = sdpa_spec("float16", false, false);
  more["nodes"].push_back(
      node("r", "relu", {ref("att")}, json::object(), {2, 4, 100, 64}, 11, "float16"));
  more["outputs"][0]["node"] = "r";
  const auto c = plan_attention(spec::parse_spec(more));
  ASSERT_TRUE(std::holds_alternative<UserError>(c));
  EXPECT_EQ(std::get<UserError>(c).where().line, 11);
}

TEST(Attention, RendersTheTilesTheMaskAndTheMergedLayout) {
  AttentionFamily family(kData);
  const auto s = spec::parse_spec(sdpa_spec("float16", true, true));
  const auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  // FlashAttention-2's tile for head dim 64 first (128 x 128, Q's fragments from shared memory),
  // then Q in registers with 64-key tiles, then 64-row blocks.
  ASSERT_EQ(cands.size(), 4u);
  EXPECT_EQ(cands[0].id, "attention.flash:128x128:w4:qs");
  EXPECT_EQ(cands[1].id, "attention.flash:128x64:w4");
  EXPECT_EQ(cands[2].id, "attention.flash:64x64:w4");
  EXPECT_TRUE(has(cands[0].code.device_code, "constexpr bool Q_SMEM = true;"));
  EXPECT_TRUE(has(cands[1].code.device_code, "constexpr bool Q_SMEM = false;"));
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr long long OUT_HEADS = 4;")) << d;
  EXPECT_TRUE(has(d, "off += (b / 4LL) % 2LL * 9000LL;"));
  EXPECT_TRUE(has(d, "return m ? 0.0f : -INFINITY;"));
  EXPECT_TRUE(has(d, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
  EXPECT_TRUE(has(d, "constexpr float SCALE_LOG2 = static_cast<float>(0.18033688);"));
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_fa::run(q, k, v, keep, out0, stream);"))
      << cands[0].code.launch_body;
  // Stage 2: other key tiles (128 keys with Q in registers would spill: never proposed), each
  // with Q's fragments in shared memory and in registers, then the other block shapes.
  const auto tunings = family.tunings(s, c, cands[0], "compute");
  ASSERT_FALSE(tunings.empty());
  EXPECT_EQ(tunings[0].id, "attention.flash:128x64:w4:qs");
  for (const auto& t : tunings) {
    EXPECT_NE(t.id, cands[0].id);
    EXPECT_NE(t.id, "attention.flash:128x128:w4");
  }
  const auto from_registers = family.tunings(s, c, cands[1], "compute");
  ASSERT_FALSE(from_registers.empty());
  EXPECT_EQ(from_registers[0].id, "attention.flash:128x128:w4:qs");
}

// The backend plans the graph twice: the lowered math (GEMM, softmax, GEMM) and the attention kept
// whole; stage 1 proposes the flash kernel first, then the math.
TEST(Attention, TheBackendProposesTheFlashKernelBesideTheMath) {
  BuiltinBackend backend(kData);
  const auto s = spec::parse_spec(sdpa_spec("float16", false, true, true));
  const auto all = backend.plans(s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_GE(all[0].segments.size(), 3u);
  ASSERT_EQ(all[1].segments.size(), 1u);  // the heads merged back in the kernel, the reshape a view
  EXPECT_EQ(all[1].segments[0].family->name(), "attention");
  const auto c = contract::derive(s, "k");
  StageRequest r;
  r.spec = &s;
  r.contract = &c;
  r.stage = "stage1";
  r.bottleneck = "compute";
  const auto cands = backend.propose(r);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "plan:attention.flash:128x128:w4:qs");
  EXPECT_TRUE(has(cands[1].id, "gemm."));
  EXPECT_TRUE(has(cands[0].code.device_code, "constexpr bool CAUSAL = true;"));

  // fp32 attention: the fp32 kernel on CUDA cores beside the math.
  const auto f = spec::parse_spec(sdpa_spec("float32", false, true, true));
  EXPECT_EQ(backend.plans(f).size(), 2u);
  const auto cf = contract::derive(f, "k");
  auto rf = r;
  rf.spec = &f;
  rf.contract = &cf;
  const auto fcands = backend.propose(rf);
  ASSERT_GE(fcands.size(), 2u);
  // 8 batch entries x 128 rows, a thread each, would leave most SMs idle: 8 lanes a row.
  EXPECT_EQ(fcands[0].id, "plan:attention.simt:8x64:w2:s8");
  EXPECT_TRUE(has(fcands[1].id, "gemm.")) << fcands[1].id;
}

// Attention written out, softmax((q @ k^T) * c masked_fill(drop, -inf)) @ v, is raised to one
// attention node with the scale and a mask that keeps what masked_fill drops; a chain whose
// scores something else reads stays as written.
json written_spec(bool scores_returned) {
  const char* h = "float16";
  json nodes = {
      node("kt", "transpose", {ref("k")}, {{"dim0", -2}, {"dim1", -1}}, {2, 4, 64, 90}, 8, h),
      node("scores", "matmul", {ref("q"), ref("kt")}, json::object(), {2, 4, 100, 90}, 8, h),
      node("scaled", "mul", {ref("scores"), {{"scalar", 0.125}}}, json::object(), {2, 4, 100, 90},
           8, h),
      node("filled", "where", {ref("drop"), {{"scalar", -1.7976931348623157e308}}, ref("scaled")},
           json::object(), {2, 4, 100, 90}, 9, h),
      node("w", "softmax", {ref("filled")}, {{"dim", -1}, {"dtype", nullptr}}, {2, 4, 100, 90}, 10,
           h),
      node("y", "matmul", {ref("w"), ref("v")}, json::object(), {2, 4, 100, 64}, 11, h)};
  json j = spec_around({tensor("q", {2, 4, 100, 64}, h), tensor("k", {2, 4, 90, 64}, h),
                        tensor("v", {2, 4, 90, 64}, h), tensor("drop", {1, 1, 100, 90}, "bool")},
                       json::array(), nodes);
  if (scores_returned)
    j["outputs"].push_back(
        {{"name", "out1"}, {"node", "scores"}, {"shape", {2, 4, 100, 90}}, {"dtype", h}});
  return j;
}

TEST(Attention, RaisesTheWrittenOutSoftmaxAttention) {
  const auto s = spec::parse_spec(written_spec(false));
  const auto raised = raise_attention(s);
  ASSERT_TRUE(raised.has_value());
  ASSERT_EQ(raised->nodes.size(), 2u);
  const spec::Node& keep = raised->nodes[0];
  EXPECT_EQ(keep.op, "eq");  // keeps what the fill drops
  EXPECT_EQ(keep.args[0].node, "drop");
  EXPECT_EQ(keep.dtype, spec::DType::boolean);
  const spec::Node& att = raised->nodes[1];
  EXPECT_EQ(att.name, "y");
  EXPECT_EQ(att.op, "scaled_dot_product_attention");
  ASSERT_EQ(att.args.size(), 4u);
  EXPECT_EQ(att.args[1].node, "k");
  EXPECT_EQ(att.args[3].node, keep.name);
  EXPECT_DOUBLE_EQ(att.attrs["scale"].get<double>(), 0.125);
  EXPECT_EQ(att.where.line, 11);

  // The flash plan is proposed beside the math as written.
  BuiltinBackend backend(kData);
  const auto all = backend.plans(s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].segments.back().family->name(), "attention");

  EXPECT_FALSE(raise_attention(spec::parse_spec(written_spec(true))).has_value());
}

// Heads split off a fused QKV projection (reshape, permute, a slice and a squeeze per operand) are
// read in place: the attention reads the projection through each operand's strides and offset,
// and the views go.
TEST(Attention, ReadsHeadsSplitOffAFusedProjectionInPlace) {
  const char* h = "float16";
  json nodes = {
      node("view", "reshape", {ref("qkv")}, {{"shape", {2, 10, 3, 4, 8}}}, {2, 10, 3, 4, 8}, 5, h),
      node("perm", "permute", {ref("view")}, {{"dims", {2, 0, 3, 1, 4}}}, {3, 2, 4, 10, 8}, 5, h)};
  for (int k = 0; k < 3; ++k) {
    const std::string sl = "slice_" + std::to_string(k), sq = "squeeze_" + std::to_string(k);
    nodes.push_back(node(sl, "slice", {ref("perm")},
                         {{"dim", 0}, {"start", k}, {"end", k + 1}, {"step", 1}}, {1, 2, 4, 10, 8},
                         6, h));
    nodes.push_back(node(sq, "squeeze", {ref(sl)}, {{"dim", 0}}, {2, 4, 10, 8}, 6, h));
  }
  nodes.push_back(node(
      "att", "scaled_dot_product_attention", {ref("squeeze_0"), ref("squeeze_1"), ref("squeeze_2")},
      {{"dropout_p", 0.0}, {"is_causal", true}, {"scale", nullptr}}, {2, 4, 10, 8}, 7, h));
  const auto s =
      spec::parse_spec(spec_around({tensor("qkv", {2, 10, 96}, h)}, json::array(), nodes));
  const spec::Spec folded = fold_attention_views(s);
  ASSERT_EQ(folded.nodes.size(), 1u);  // the views nothing else reads are gone
  const spec::Node& att = folded.nodes[0];
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(att.args[k].node, "qkv");
    const json& layout = att.attrs["layouts"][k];
    EXPECT_EQ(layout["shape"], json({2, 4, 10, 8}));
    EXPECT_EQ(layout["strides"], json({960, 8, 96, 1}));
    EXPECT_EQ(layout["offset"], 32 * static_cast<int>(k));
  }
  const auto a = plan_attention(folded);
  ASSERT_TRUE(std::holds_alternative<AttentionPlan>(a)) << std::get<UserError>(a).describe();
  EXPECT_EQ(std::get<AttentionPlan>(a).k.offset, 32);
  AttentionFamily family(kData);
  const auto c = contract::derive(folded, "k");
  const auto cands = family.structures(folded, c);
  ASSERT_FALSE(cands.empty());
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr long long Q_ROW = 96, K_ROW = 96, V_ROW = 96;")) << d;
  EXPECT_TRUE(has(d, "long long off = 64LL;"));
  EXPECT_TRUE(has(d, "off += (b / 4LL) % 2LL / 1LL * 960LL;"));
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_fa::run(qkv, qkv, qkv, out0, stream);"));

  // A view whose rows are not 16-byte aligned (columns 2..9 of rows of 12) stays a copy.
  json odd = spec_around(
      {tensor("x", {2, 4, 10, 12}, h), tensor("k", {2, 4, 10, 8}, h),
       tensor("v", {2, 4, 10, 8}, h)},
      json::array(),
      {node("q", "slice", {ref("x")}, {{"dim", 3}, {"start", 2}, {"end", 10}, {"step", 1}},
            {2, 4, 10, 8}, 5, h),
       node("att", "scaled_dot_product_attention", {ref("q"), ref("k"), ref("v")},
            {{"dropout_p", 0.0}, {"is_causal", false}, {"scale", nullptr}}, {2, 4, 10, 8}, 7, h)});
  const spec::Spec kept = fold_attention_views(spec::parse_spec(odd));
  EXPECT_EQ(kept.nodes.size(), 2u);
  EXPECT_FALSE(kept.nodes[1].attrs.contains("layouts"));
}

// Grouped-query attention: enable_gqa reads each key/value head for its group of query heads;
// repeat_interleave written out (unsqueeze, expand, clone, reshape) folds into the same reads; in
// fp32 the math repeats the heads by index.
TEST(Attention, GroupsQueryHeadsOverSharedKeyValueHeads) {
  const char* h = "float16";
  json gqa = spec_around(
      {tensor("q", {2, 8, 64, 32}, h), tensor("k", {2, 2, 64, 32}, h),
       tensor("v", {2, 2, 64, 32}, h)},
      json::array(),
      {node("att", "scaled_dot_product_attention", {ref("q"), ref("k"), ref("v")},
            {{"dropout_p", 0.0}, {"is_causal", false}, {"scale", nullptr}, {"enable_gqa", true}},
            {2, 8, 64, 32}, 7, h)});
  const auto s = spec::parse_spec(gqa);
  const auto a = plan_attention(s);
  ASSERT_TRUE(std::holds_alternative<AttentionPlan>(a)) << std::get<UserError>(a).describe();
  EXPECT_EQ(std::get<AttentionPlan>(a).k.group, 4);
  AttentionFamily family(kData);
  const auto c = contract::derive(s, "k");
  const std::string d = family.structures(s, c)[0].code.device_code;
  EXPECT_TRUE(has(d, "off += (b / 1LL) % 8LL / 4LL * 2048LL;")) << d;  // key head h / 4
  EXPECT_TRUE(has(d, "off += (b / 8LL) % 2LL / 1LL * 4096LL;"));

  // The same in fp32: the math, with key and value repeated per head, and the fp32 kernel.
  json f = gqa;
  for (auto& t : f["inputs"]) t["dtype"] = "float32";
  f["nodes"][0]["dtype"] = "float32";
  f["outputs"][0]["dtype"] = "float32";
  BuiltinBackend backend(kData);
  const auto all = backend.plans(spec::parse_spec(f));
  ASSERT_EQ(all.size(), 2u);  // the math and the fp32 kernel
  EXPECT_GE(all[0].segments.size(), 3u);
  EXPECT_EQ(all[1].segments.size(), 1u);

  // repeat_interleave(k, 4, dim=1) as torch.export writes it.
  json nodes = json::array();
  for (const char* kv : {"k", "v"}) {
    const std::string n = kv;
    nodes.push_back(
        node(n + "_u", "unsqueeze", {egg::testing::ref(n)}, {{"dim", 2}}, {2, 2, 1, 64, 32}, 5, h));
    nodes.push_back(node(n + "_e", "expand", {egg::testing::ref(n + "_u")},
                         {{"size", {2, 2, 4, 64, 32}}}, {2, 2, 4, 64, 32}, 5, h));
    nodes.push_back(node(n + "_c", "clone", {egg::testing::ref(n + "_e")}, json::object(),
                         {2, 2, 4, 64, 32}, 5, h));
    nodes.push_back(node(n + "_r", "reshape", {egg::testing::ref(n + "_c")},
                         {{"shape", {2, 8, 64, 32}}}, {2, 8, 64, 32}, 5, h));
  }
  nodes.push_back(node("att", "scaled_dot_product_attention", {ref("q"), ref("k_r"), ref("v_r")},
                       {{"dropout_p", 0.0}, {"is_causal", true}, {"scale", nullptr}},
                       {2, 8, 64, 32}, 7, h));
  const auto rep = spec::parse_spec(spec_around(gqa["inputs"], json::array(), nodes));
  const spec::Spec folded = fold_attention_views(rep);
  ASSERT_EQ(folded.nodes.size(), 1u);
  EXPECT_EQ(folded.nodes[0].args[1].node, "k");
  EXPECT_EQ(folded.nodes[0].attrs["layouts"][1]["batch"], json({{2, 4096}, {2, 2048}, {4, 0}}));
  const auto rc = contract::derive(folded, "k");
  const std::string rd = family.structures(folded, rc)[0].code.device_code;
  EXPECT_TRUE(has(rd, "off += (b / 4LL) % 2LL / 1LL * 2048LL;")) << rd;
  EXPECT_TRUE(has(rd, "off += (b / 8LL) % 2LL / 1LL * 4096LL;"));
}

// GPT-2's attention as its code writes it, as the frontend captured it
// (examples/suite/att_written_causal_bf16.py): the raised attention reads q, k and v in place in
// the fused projection's output, the mask (a buffer's slice compared with 0, then kept where it is
// not 0) is a kernel of its own beside nothing else, and the heads merge back in the attention's
// output layout: GEMM, mask, attention, GEMM, where the math is eight kernels.
TEST(Attention, PlansGpt2AttentionAsWrittenInFourKernels) {
  const spec::Spec s = spec::read_spec(kData / "tests/unit/data/gpt2_attention_bf16.spec.json");
  BuiltinBackend backend(kData);
  const auto all = backend.plans(s);
  ASSERT_EQ(all.size(), 2u);
  std::string math, flash;
  for (const auto& seg : all[0].segments) math += seg.family->name() + " ";
  for (const auto& seg : all[1].segments) flash += seg.family->name() + " ";
  EXPECT_EQ(flash, "gemm elementwise attention gemm ") << math;
  EXPECT_GT(all[0].segments.size(), all[1].segments.size());
  const auto& att = all[1].segments[2];
  EXPECT_EQ(att.reads, (std::vector<std::string>{"linear", "matmul_1__keep"}));

  // Query, key and value computed (each times 2 before the attention) are no views to read in
  // place: their kernel (the split of the projection) and the mask's are independent parts of
  // what follows the projection, one kernel each.
  std::ifstream in(kData / "tests/unit/data/gpt2_attention_bf16.spec.json");
  json j = json::parse(in);
  json& nodes = j["nodes"];
  const std::pair<const char*, const char*> scaled[] = {
      {"transpose_1", "matmul"}, {"transpose", "transpose_3"}, {"transpose_2", "matmul_1"}};
  for (const auto& [value, reader] : scaled)
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i]["name"] == reader) {
        const std::string twice = std::string(value) + "_x2";
        for (auto& a : nodes[i]["args"])
          if (a.contains("node") && a["node"] == value) a["node"] = twice;
        nodes.insert(nodes.begin() + static_cast<std::ptrdiff_t>(i),
                     node(twice, "mul", {ref(value), {{"scalar", 2.0}}}, json::object(),
                          {4, 12, 512, 64}, 26, "bfloat16"));
        break;
      }
  const auto computed = backend.plans(spec::parse_spec(j));
  ASSERT_EQ(computed.size(), 2u);
  std::string parts;
  for (const auto& seg : computed[1].segments) parts += seg.family->name() + " ";
  EXPECT_EQ(parts, "gemm elementwise elementwise attention gemm ");
}

// The kernel compiles with the real nvcc: bf16, a bool mask, causal, the merged output.
TEST(Attention, CompilesWithTheRealNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "nvcc is not installed";
  AttentionFamily family(kData);
  for (const char* dtype : {"bfloat16", "float32"}) {
    // Masked, causal, the heads merged back: every branch of the template.
    const auto s = spec::parse_spec(sdpa_spec(dtype, true, true, true));
    const auto c = contract::derive(s, "k");
    const auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty());
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "") << cands[0].id;
    // fp32: lanes splitting a row's keys (the first) and a thread a row.
    if (std::string(dtype) == "float32") {
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands.back()), "")
          << cands.back().id;
    }
  }
}

// FlashAttention-2's tile (128 queries x 128 keys, Q's fragments from shared memory) fits ptxas's
// 255 registers without spills: a thread's tile copies are one base address at constant offsets,
// the row test only on a partial tile (the copy loop with a division per chunk spilled 24 bytes).
TEST(Attention, TheWideFlashTileCompilesWithoutSpills) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "nvcc is not installed";
  AttentionFamily family(kData);
  const auto s = spec::parse_spec(sdpa_spec("float16", false, false));
  const auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_FALSE(cands.empty());
  ASSERT_EQ(cands[0].id, "attention.flash:128x128:w4:qs");
  EXPECT_TRUE(has(cands[0].code.device_code, "if (r0 + ROWS <= rows) {"));
  const auto r = egg::testing::nvcc_compile(*nvcc, kData, c, cands[0]);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_TRUE(has(r.log, "0 bytes spill stores")) << r.log;
}

TEST(Attention, ProposesTheWgmmaKernelFirstOnlyWhereEveryArchIsSm90a) {
  const auto s = spec::parse_spec(sdpa_spec("float16", true, true, true));
  const auto c = contract::derive(s, "k");
  // sm_90: the mma.sync kernel alone.
  for (const auto& cand : AttentionFamily(kData).structures(s, c))
    EXPECT_FALSE(has(cand.id, "attention.wg:")) << cand.id;
  // sm_90a: 128 rows against 128 keys pipelined and not, then 64 keys pipelined, before
  // mma.sync's.
  AttentionFamily family(kData, true);
  const auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 4u);
  EXPECT_EQ(cands[0].id, "attention.wg:128x128:p");
  EXPECT_EQ(cands[1].id, "attention.wg:128x128");
  EXPECT_EQ(cands[2].id, "attention.wg:128x64:p");
  EXPECT_EQ(cands[3].id, "attention.flash:128x128:w4:qs");
  EXPECT_EQ(cands[0].params, json({{"wgs", 2}, {"bk", 128}, {"pipe", true}}));
  EXPECT_TRUE(AttentionParams::from_json(cands[0].params).pipe);
  EXPECT_EQ(AttentionParams::from_json(cands[1].params).wgs, 2);
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int WGS = 2;")) << d;
  EXPECT_TRUE(has(d, "constexpr int BK = 128;"));
  // Pipelined: a tile's V is read one iteration later, so four stages keep two tiles ahead.
  EXPECT_TRUE(has(d, "constexpr bool PIPE = true;"));
  EXPECT_TRUE(has(d, "constexpr int STAGES = 4;"));
  EXPECT_TRUE(has(cands[1].code.device_code, "constexpr int STAGES = 3;"));
  EXPECT_TRUE(has(d, "constexpr bool CAUSAL = true;"));
  EXPECT_TRUE(has(d, "mask_value(mrow[e >> 1][c * MASK_COL])"));
  EXPECT_TRUE(has(d, "constexpr long long OUT_HEADS = 4;"));
  EXPECT_TRUE(has(d, ".m64n128k16.f32.f16.f16"));
  // Two warpgroups of about 160 registers fit once an SM; one warpgroup of 64-key tiles (about
  // 110 registers, 57 KiB) four times.
  EXPECT_TRUE(has(d, "constexpr int MIN_BLOCKS = 1;"));
  const auto tunings = family.tunings(s, c, cands[2], "compute");
  std::set<std::string> ids;
  for (const auto& t : tunings) ids.insert(t.id);
  EXPECT_TRUE(ids.count("attention.wg:192x64:p")) << tunings.size();
  EXPECT_TRUE(ids.count("attention.wg:128x64"));
  EXPECT_TRUE(ids.count("attention.wg:64x64"));
  EXPECT_FALSE(ids.count("attention.wg:128x64:p"));  // the incumbent
  for (const auto& t : tunings) {
    EXPECT_TRUE(has(t.id, "attention.wg:")) << t.id;
    if (t.id == "attention.wg:64x64") {
      EXPECT_TRUE(has(t.code.device_code, "constexpr int MIN_BLOCKS = 4;"));
    }
  }
  // fp32, and a head dim other than 64 or 128: no wgmma kernel.
  const auto fp32 = spec::parse_spec(sdpa_spec("float32", false, false));
  for (const auto& cand : family.structures(fp32, contract::derive(fp32, "k")))
    EXPECT_FALSE(has(cand.id, "attention.wg:")) << cand.id;
  json narrow = sdpa_spec("bfloat16", false, false);
  for (auto& in : narrow["inputs"]) in["shape"][3] = 32;
  narrow["nodes"][0]["shape"][3] = 32;
  const auto ns = spec::parse_spec(narrow);
  for (const auto& cand : family.structures(ns, contract::derive(ns, "k")))
    EXPECT_FALSE(has(cand.id, "attention.wg:")) << cand.id;
}

TEST(Attention, TheWgmmaKernelCompilesForSm90aWithoutSpills) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "nvcc is not installed";
  // Head dim 64 with a mask and causality; head dim 128 in bf16 (two panels, 128-wide outputs).
  json wide = sdpa_spec("bfloat16", false, false);
  for (auto& in : wide["inputs"]) in["shape"][3] = 128;
  wide["nodes"][0]["shape"][3] = 128;
  AttentionFamily family(kData, true);
  for (const json& j : {sdpa_spec("float16", true, true, true), wide}) {
    const auto s = spec::parse_spec(j);
    const auto c = contract::derive(s, "k");
    const auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty());
    ASSERT_EQ(cands[0].id, "attention.wg:128x128:p");
    const auto r = egg::testing::nvcc_compile(*nvcc, kData, c, cands[0], "sm_90a");
    ASSERT_TRUE(r.ok) << r.log;
    EXPECT_TRUE(has(r.log, "0 bytes spill stores")) << r.log;
    // ptxas serializes the wgmmas (C7513, C7515) where an instruction defines their registers
    // while they run: the tile's scores would no longer overlap the last tile's P V.
    EXPECT_FALSE(has(r.log, "serialized")) << r.log;
  }
}

TEST(Attention, Fp32RunsOnCudaCoresWithLanesEnoughToFillTheGpu) {
  AttentionFamily family(kData);
  const auto s = spec::parse_spec(sdpa_spec("float32", true, false, true));
  const auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  // 8 batch entries x 128 rows: 8 lanes a row (2 and 4 warps a block, 64-key tiles: a lane's 8
  // keys a step x 8 lanes), then a thread a row (32 and 64 rows a block, 64- and 32-key tiles).
  ASSERT_EQ(cands.size(), 6u);
  EXPECT_EQ(cands[0].id, "attention.simt:8x64:w2:s8");
  EXPECT_EQ(cands[1].id, "attention.simt:16x64:w4:s8");
  EXPECT_EQ(cands[2].id, "attention.simt:32x64:w1");
  EXPECT_EQ(cands[5].id, "attention.simt:64x32:w2");
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int E = 64;")) << d;
  EXPECT_TRUE(has(d, "constexpr int SPLIT = 8;"));
  EXPECT_TRUE(has(d, "constexpr bool CAUSAL = true;"));
  EXPECT_TRUE(has(d, "mask_log2(mrow[key * MASK_COL])"));
  EXPECT_EQ(cands[0].params, json({{"simt", true}, {"warps", 2}, {"bk", 64}, {"split", 8}}));
  EXPECT_EQ(AttentionParams::from_json(cands[0].params).split, 8);
  EXPECT_EQ(cands[2].params, json({{"simt", true}, {"warps", 1}, {"bk", 64}}));
  EXPECT_TRUE(AttentionParams::from_json(cands[2].params).simt);
  EXPECT_TRUE(has(cands[2].code.device_code, "constexpr int SPLIT = 1;"));
  // Stage 2: other lanes a row, rows and key tiles, never a tensor-core configuration; a split
  // whose lanes' steps do not tile the keys (8 lanes x 8 keys against 32-key tiles) is not offered.
  const auto tunings = family.tunings(s, c, cands[0], "compute");
  ASSERT_FALSE(tunings.empty());
  std::set<std::string> ids;
  for (const auto& t : tunings) ids.insert(t.id);
  EXPECT_TRUE(ids.count("attention.simt:32x64:w4:s4"));
  EXPECT_TRUE(ids.count("attention.simt:16x32:w2:s4"));
  EXPECT_FALSE(ids.count("attention.simt:8x32:w2:s8"));
  EXPECT_FALSE(ids.count("attention.simt:2x64:w2:s16"));
  for (const auto& id : ids) EXPECT_EQ(id.rfind("attention.simt:", 0), 0u) << id;
  std::set<std::string> row_ids;  // a thread a row: two lanes a row are tried too
  for (const auto& t : family.tunings(s, c, cands[2], "compute")) row_ids.insert(t.id);
  EXPECT_TRUE(row_ids.count("attention.simt:16x64:w1:s2"));
  // A repair falls back to the smallest fp32 tiles.
  const auto fixed = family.fallback(s, c, cands[0]);
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->id, "attention.simt:32x32:w1");
}

}  // namespace
}  // namespace egg::backend::builtin
