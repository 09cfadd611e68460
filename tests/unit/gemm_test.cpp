// GEMM family: pattern recognition, structures and their key lines (FileCheck-style).
#include "backend/builtin/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;

using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json node(const std::string& name, const std::string& op, json args, json attrs, json shape,
          const std::string& dtype, int line = 9) {
  return json{{"name", name},
              {"op", op},
              {"target", "torch." + op},
              {"args", as_list(args)},
              {"attrs", attrs},
              {"shape", shape},
              {"dtype", dtype},
              {"file", "/src/op.py"},
              {"line", line},
              {"code", "return torch.relu(self.fc(x))"}};
}

// x[M,K] → nn.Linear(K, N) (weight [N,K], bias [N]) → `act` (relu, gelu, ...; empty: none).
json linear_spec(const std::string& dtype = "float32", const std::string& act = "relu",
                 json act_attrs = json::object(), std::int64_t m = 256, std::int64_t k = 512,
                 std::int64_t n = 1024, bool bias = true) {
  json params = json::array(
      {{{"name", "fc.weight"}, {"shape", {n, k}}, {"dtype", dtype}, {"kind", "parameter"}}});
  if (bias)
    params.push_back(
        {{"name", "fc.bias"}, {"shape", {n}}, {"dtype", dtype}, {"kind", "parameter"}});
  json nodes = json::array({node("fc", "linear",
                                 {{{"node", "x"}},
                                  {{"node", "fc.weight"}},
                                  bias ? json{{"node", "fc.bias"}} : json{{"none", true}}},
                                 json::object(), {m, n}, dtype)});
  std::string last = "fc";
  if (!act.empty()) {
    nodes.push_back(node(act, act, {{{"node", "fc"}}}, act_attrs, {m, n}, dtype));
    last = act;
  }
  return json{
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs", {{{"name", "x"}, {"shape", {m, k}}, {"dtype", dtype}}}},
      {"params", as_list(params)},
      {"nodes", as_list(nodes)},
      {"outputs", {{{"name", "out0"}, {"node", last}, {"shape", {m, n}}, {"dtype", dtype}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

// a[B,M,K] @ b[B,K,N] (bmm) or a[M,K] @ b[K,N] (batch 0).
json matmul_spec(const std::string& dtype, std::int64_t batch, std::int64_t m, std::int64_t k,
                 std::int64_t n) {
  auto shp = [&](std::int64_t r, std::int64_t c) { return batch ? json{batch, r, c} : json{r, c}; };
  return json{
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs",
       {{{"name", "a"}, {"shape", shp(m, k)}, {"dtype", dtype}},
        {{"name", "b"}, {"shape", shp(k, n)}, {"dtype", dtype}}}},
      {"params", json::array()},
      {"nodes",
       {node("mm", batch ? "bmm" : "matmul", {{{"node", "a"}}, {{"node", "b"}}}, json::object(),
             shp(m, n), dtype)}},
      {"outputs", {{{"name", "out0"}, {"node", "mm"}, {"shape", shp(m, n)}, {"dtype", dtype}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

std::vector<Candidate> structures_of(const json& j, const std::string& name = "k") {
  GemmFamily family(kData);
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, name);
  return family.structures(s, c);
}

const Candidate* find(const std::vector<Candidate>& cands, const std::string& structure) {
  for (const auto& c : cands)
    if (c.params.value("structure", "") == structure) return &c;
  return nullptr;
}

TEST(Gemm, CanImplementLinearMatmulBmmAddmm) {
  GemmFamily family(kData);
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(linear_spec())).has_value());
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(matmul_spec("float16", 0, 128, 256, 64)))
                   .has_value());
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(matmul_spec("bfloat16", 4, 128, 256, 64)))
                   .has_value());
  auto j = matmul_spec("float32", 0, 64, 32, 16);
  j["inputs"].push_back({{"name", "c"}, {"shape", {16}}, {"dtype", "float32"}});
  j["nodes"][0] = node("mm", "addmm", {{{"node", "c"}}, {{"node", "a"}}, {{"node", "b"}}},
                       {{"beta", 1}, {"alpha", 2}}, {64, 16}, "float32");
  auto s = spec::parse_spec(j);
  ASSERT_FALSE(family.cannot_implement(s).has_value()) << family.cannot_implement(s)->describe();
  auto p = family.plan(s);
  EXPECT_EQ(p.bias, "c");
  EXPECT_EQ(p.alpha, 2.0);
}

TEST(Gemm, ProblemOfLinear) {
  GemmFamily family(kData);
  auto p = family.plan(spec::parse_spec(linear_spec()));
  EXPECT_TRUE(p.b_nk);
  EXPECT_EQ(p.m, 256);
  EXPECT_EQ(p.k, 512);
  EXPECT_EQ(p.n, 1024);
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.bias, "fc.bias");
  ASSERT_EQ(p.epilogue.size(), 1u);
}

TEST(Gemm, RejectsWithOpAndLine) {
  GemmFamily family(kData);
  // An integer GEMM.
  auto ints = matmul_spec("int32", 0, 64, 64, 64);
  auto why = family.cannot_implement(spec::parse_spec(ints));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 9);
  EXPECT_TRUE(has(why->describe(), "int32")) << why->describe();
  // A first operand transposed other than in its last two dims, before the GEMM.
  auto t = matmul_spec("float32", 8, 64, 64, 64);
  t["nodes"].insert(t["nodes"].begin(),
                    node("tr", "transpose", {{{"node", "a"}}}, {{"dim0", 0}, {"dim1", 1}},
                         {64, 8, 64}, "float32", 8));
  t["nodes"][1]["args"][0]["node"] = "tr";
  why = family.cannot_implement(spec::parse_spec(t));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 8);
  EXPECT_TRUE(has(why->describe(), "torch.transpose")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "transposed")) << why->describe();
  // An epilogue op the table does not know.
  auto u = linear_spec("float32", "cumsum");
  why = family.cannot_implement(spec::parse_spec(u));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "torch.cumsum")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "after the GEMM")) << why->describe();
  // No GEMM at all: no line, so the element-wise family's explanation wins.
  auto e = linear_spec();
  e["nodes"].erase(e["nodes"].begin());
  e["nodes"][0]["args"][0]["node"] = "x";
  why = family.cannot_implement(spec::parse_spec(e));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 0);
}

// The analysis's other refusals, each at the op and line that breaks the rule (plan_gemm).
TEST(Gemm, AnalysisNamesTheOpThatBreaksEachRule) {
  const OpTable ops(kData);
  auto refusal = [&](const json& j) {
    auto r = plan_gemm(spec::parse_spec(j), ops);
    EXPECT_TRUE(std::holds_alternative<UserError>(r));
    return std::holds_alternative<UserError>(r) ? std::get<UserError>(r) : UserError("accepted");
  };
  // A second GEMM: its own line.
  auto two = matmul_spec("float32", 0, 64, 64, 64);
  two["nodes"].push_back(node("mm2", "matmul", {{{"node", "mm"}}, {{"node", "b"}}}, json::object(),
                              {64, 64}, "float32", 12));
  two["outputs"][0]["node"] = "mm2";
  auto e = refusal(two);
  EXPECT_EQ(e.where().line, 12);
  EXPECT_TRUE(has(e.describe(), "a second GEMM")) << e.describe();
  // Batch dims that broadcast: [4, 64, 64] x [2, 64, 64].
  auto bcast = matmul_spec("float32", 4, 64, 64, 64);
  bcast["inputs"][1]["shape"] = {2, 64, 64};
  bcast["nodes"][0]["op"] = "matmul";
  e = refusal(bcast);
  EXPECT_TRUE(has(e.describe(), "broadcast batch dimensions")) << e.describe();
  // Operands of two dtypes.
  auto mixed = matmul_spec("float32", 0, 64, 64, 64);
  mixed["inputs"][1]["dtype"] = "float16";
  e = refusal(mixed);
  EXPECT_TRUE(has(e.describe(), "mixes dtypes")) << e.describe();
  // An output that is not the end of the epilogue (the GEMM's own result beside relu's).
  auto early = linear_spec();
  early["outputs"][0]["node"] = "fc";
  e = refusal(early);
  EXPECT_TRUE(has(e.describe(), "not the end of the GEMM's epilogue")) << e.describe();
  // The plan of an accepted one (it points into the spec, which outlives it).
  const auto accepted = spec::parse_spec(linear_spec());
  auto ok = plan_gemm(accepted, ops);
  ASSERT_TRUE(std::holds_alternative<GemmProblem>(ok));
  const auto& p = std::get<GemmProblem>(ok);
  EXPECT_EQ(p.m, 256);
  EXPECT_EQ(p.n, 1024);
  EXPECT_EQ(p.k, 512);
  EXPECT_TRUE(p.b_nk);
  EXPECT_EQ(p.bias, "fc.bias");
  ASSERT_EQ(p.epilogue.size(), 1u);
  EXPECT_EQ(p.epilogue[0]->op, "relu");
}

TEST(Gemm, LinearReluUsesNativeEpilogueFirst) {
  auto cands = structures_of(linear_spec(), "lr");
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].params["structure"], "lt_native");
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "#include <cublasLt.h>"));
  EXPECT_TRUE(has(code, "cublasLtMatmulDescCreate(&s.op, CUBLAS_COMPUTE_32F, CUDA_R_32F)")) << code;
  EXPECT_FALSE(has(code, "TF32"));
  EXPECT_TRUE(has(code, "const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;"));
  EXPECT_TRUE(has(code, "CUBLASLT_MATMUL_DESC_BIAS_POINTER"));
  EXPECT_TRUE(
      has(code, "const cublasOperation_t trans_a = CUBLAS_OP_T"));  // weight [N,K] transposed
  EXPECT_TRUE(has(code, "cublasLtMatrixLayoutCreate(&s.la, CUDA_R_32F, 512, 1024, 512)"));
  EXPECT_TRUE(has(code, "cublasLtMatrixLayoutCreate(&s.lb, CUDA_R_32F, 512, 256, 512)"));
  EXPECT_TRUE(has(code, "cublasLtMatrixLayoutCreate(&s.ld, CUDA_R_32F, 1024, 256, 1024)"));
  EXPECT_TRUE(has(code, "std::lock_guard<std::mutex>"));  // made once, thread-safe
  EXPECT_TRUE(has(code, "cublasLtMatmulAlgoGetHeuristic"));
  EXPECT_FALSE(has(code, "epilogue_kernel"));  // nothing left to fuse
  EXPECT_FALSE(has(code, "exit(") || has(code, "abort("));
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_lr_gemm(x, fc_weight, fc_bias, out0, stream)"))
      << cands[0].code.launch_body;
  EXPECT_EQ(cands[0].params["link"], json::array({"cublasLt"}));
  // fp32: no own tensor-core candidate (it would need TF32).
  EXPECT_EQ(find(cands, "tc"), nullptr);
}

// PyTorch's own route for mm/bmm, cublasGemmEx, beside cuBLASLt: second for a plain GEMM of any
// dtype, after cuBLASLt's epilogue routes for one with an epilogue (a half-type one from cuBLAS's
// fp32 result, rounded once; none for a half-type bias alone, which cuBLASLt rounds once).
TEST(Gemm, CublasIsPyTorchsRouteBesideCublasLt) {
  auto plain = structures_of(matmul_spec("float16", 0, 128, 256, 64));
  ASSERT_GE(plain.size(), 2u);
  EXPECT_EQ(plain[1].id, "gemm.cublas");
  const auto& code = plain[1].code.device_code;
  EXPECT_TRUE(has(code, "#include <cublas_v2.h>"));
  // Row-major [128][64] = [128][256] x [256][64]: column-major out^T = B^T.A^T.
  EXPECT_TRUE(has(code,
                  "cublasGemmEx(s.handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 128, 256, &alpha, b, "
                  "CUDA_R_16F, 64, a,"))
      << code;
  EXPECT_TRUE(has(code, "CUBLAS_COMPUTE_32F,"));
  EXPECT_TRUE(has(code, "cublasSetWorkspace"));
  EXPECT_FALSE(has(code, "epilogue_kernel"));
  EXPECT_EQ(plain[1].params["link"], json::array({"cublas"}));
  EXPECT_TRUE(has(plain[1].code.launch_body, "egg_k_gemm(a, b, out0, stream)"))
      << plain[1].code.launch_body;

  auto batched = structures_of(matmul_spec("float32", 4, 128, 256, 64));
  const Candidate* b = find(batched, "cublas");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(has(b->code.device_code, "cublasGemmStridedBatchedEx("));
  EXPECT_TRUE(has(b->code.device_code, "16384LL, a, CUDA_R_32F, 256, 32768LL"))
      << b->code.device_code;

  // fp32 Linear + ReLU: cuBLASLt's native and epilogue routes first, then cuBLAS + the epilogue
  // kernel (the bias in it).
  auto fp32 = structures_of(linear_spec(), "lr");
  ASSERT_GE(fp32.size(), 3u);
  EXPECT_EQ(fp32[0].params["structure"], "lt_native");
  EXPECT_EQ(fp32[1].params["structure"], "lt_epilogue");
  EXPECT_EQ(fp32[2].id, "gemm.cublas:b256");
  EXPECT_TRUE(has(fp32[2].code.device_code, "const float l0 = egg_to_float(fc_bias[(i % 1024)]);"))
      << fp32[2].code.device_code;
  EXPECT_TRUE(has(fp32[2].code.launch_body, "egg_lr_epilogue_run(out0, fc_bias, stream)"))
      << fp32[2].code.launch_body;
  const auto half = structures_of(linear_spec("float16", "gelu"));
  const Candidate* wide = find(half, "cublas");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->id, "gemm.cublas:b256:f32");
  EXPECT_TRUE(has(wide->code.device_code, "&beta, out, CUDA_R_32F, 1024, CUBLAS_COMPUTE_32F"))
      << wide->code.device_code;
  EXPECT_TRUE(has(wide->code.launch_body, "cudaMallocAsync")) << wide->code.launch_body;
  EXPECT_EQ(find(structures_of(linear_spec("float16", "")), "cublas"), nullptr);

  // Stage 2 after a cuBLAS winner: its epilogue kernel's other block, then cuBLASLt's algos.
  GemmFamily family(kData);
  const auto s = spec::parse_spec(linear_spec());
  const auto c = contract::derive(s, "lr");
  const auto tuned = family.tunings(s, c, fp32[2], "latency");
  ASSERT_GE(tuned.size(), 2u);
  EXPECT_EQ(tuned[0].id, "gemm.cublas:b512");
  EXPECT_EQ(tuned[1].params["structure"], "lt_native");
}

// After a cuBLAS or skinny incumbent, stage 2 ranks cuBLASLt's algos on cuBLASLt's own route:
// the native epilogue for a bf16 Linear + ReLU (no fp32 product there: it has no epilogue kernel
// to read one), the epilogue kernel from the fp32 product for a bf16 Linear + SiLU.
TEST(Gemm, CublasLtAfterAnotherIncumbentTakesItsOwnRoute) {
  GemmFamily family(kData);
  for (const std::string act : {"relu", "silu"}) {
    const json j = linear_spec("bfloat16", act);
    const auto cands = structures_of(j);
    const Candidate* blas = find(cands, "cublas");
    ASSERT_NE(blas, nullptr) << act;
    const auto s = spec::parse_spec(j);
    const auto tunings = family.tunings(s, contract::derive(s, "k"), *blas, "compute");
    const auto lt = std::find_if(tunings.begin(), tunings.end(),
                                 [](const Candidate& t) { return has(t.id, "gemm.lt_"); });
    ASSERT_NE(lt, tunings.end()) << act;
    EXPECT_EQ(lt->id, act == "relu" ? "gemm.lt_native:a1" : "gemm.lt_epilogue:a1:b256:f32");
  }
}

TEST(Gemm, PlainGemmPlusFusedEpilogueKernel) {
  auto cands = structures_of(linear_spec(), "lr");
  const Candidate* b = find(cands, "lt_epilogue");
  ASSERT_NE(b, nullptr);
  const auto& code = b->code.device_code;
  EXPECT_TRUE(has(code, "CUBLASLT_EPILOGUE_DEFAULT"));
  EXPECT_TRUE(has(code, "const float l0 = egg_to_float(fc_bias[(i % 1024)]);")) << code;
  EXPECT_TRUE(has(code, "const float g = acc + l0;"));
  EXPECT_TRUE(has(code, "const float t1 = egg_relu(g);"));
  EXPECT_TRUE(has(code, "egg_lr_epilogue_kernel<4>"));
  EXPECT_TRUE(has(code, "using IndexT = int;"));  // 256x1024 elements: 32-bit indexing
  EXPECT_TRUE(has(b->code.launch_body, "egg_lr_gemm(x, fc_weight, out0, stream)"))
      << b->code.launch_body;
  EXPECT_TRUE(has(b->code.launch_body, "return egg_lr_epilogue_run(out0, fc_bias, stream);"));
}

TEST(Gemm, GeluOnlyNativeWithTanhApproximation) {
  auto tanh = structures_of(linear_spec("float16", "gelu", {{"approximate", "tanh"}}));
  EXPECT_EQ(tanh[0].params["structure"], "lt_native");
  EXPECT_TRUE(has(tanh[0].code.device_code, "CUBLASLT_EPILOGUE_GELU_BIAS"));
  EXPECT_TRUE(has(tanh[0].code.device_code, "CUDA_R_16F"));
  auto erf = structures_of(linear_spec("float16", "gelu", {{"approximate", "none"}}));
  EXPECT_EQ(find(erf, "lt_native"), nullptr);
  const Candidate* b = find(erf, "lt_epilogue");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(has(b->code.device_code, "egg_gelu_erf(g)"));
  EXPECT_TRUE(has(b->code.device_code, "egg_k_epilogue_kernel<8>"));  // 8 halves per 16 bytes
}

TEST(Gemm, HalfGetsOwnTensorCoreKernelWithFusedEpilogue) {
  auto cands = structures_of(linear_spec("bfloat16", "silu"));
  const Candidate* tc = find(cands, "tc");
  ASSERT_NE(tc, nullptr);
  const auto& code = tc->code.device_code;
  EXPECT_TRUE(has(code, "#include <mma.h>"));
  EXPECT_TRUE(has(code, "using T = __nv_bfloat16;"));
  EXPECT_TRUE(has(code, "constexpr bool B_NK = true;"));
  EXPECT_TRUE(has(code, "cp.async.cg.shared.global"));
  EXPECT_TRUE(has(code, "wmma::mma_sync"));
  EXPECT_TRUE(has(code, "const float t1 = egg_silu(g);")) << code;
  EXPECT_TRUE(has(code, "egg_k_epilogue<long long>(Cs["));
  EXPECT_TRUE(has(tc->code.launch_body, "egg_k_tc::run(x, fc_weight, out0, fc_bias, stream)"))
      << tc->code.launch_body;
  EXPECT_FALSE(tc->params.contains("link"));
  EXPECT_TRUE(has(code, "__launch_bounds__(THREADS, 1)"));
  GemmFamily family(kData);
  auto s = spec::parse_spec(linear_spec("bfloat16", "silu"));
  auto tunings = family.tunings(s, contract::derive(s, "k"), *tc, "compute");
  ASSERT_GE(tunings.size(), 3u);
  for (const auto& t : tunings) EXPECT_EQ(t.params["structure"], "tc");
  EXPECT_TRUE(std::any_of(tunings.begin(), tunings.end(),
                          [](const Candidate& t) { return t.params["min_blocks"] == 2; }));
}

TEST(Gemm, BmmIsStridedBatched) {
  auto cands = structures_of(matmul_spec("float16", 32, 1024, 512, 256));
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].params["structure"], "lt_native");  // no epilogue: one cuBLASLt structure
  EXPECT_EQ(find(cands, "lt_epilogue"), nullptr);
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "const cublasOperation_t trans_a = CUBLAS_OP_N"));
  EXPECT_TRUE(has(code, "const std::int32_t batch = 32;"));
  EXPECT_TRUE(has(code, "stride_la = 131072, stride_lb = 524288, stride_ld = 262144")) << code;
  const Candidate* tc = find(cands, "tc");
  ASSERT_NE(tc, nullptr);
  EXPECT_TRUE(has(tc->code.device_code, "constexpr bool B_NK = false;"));
  EXPECT_TRUE(has(tc->code.device_code, "STRIDE_A = 524288, STRIDE_B = 131072"));
}

TEST(Gemm, TransposedSecondOperandIsReadTransposed) {
  // x[64,128] @ w.t() with w [256,128] (the frontend writes .t() as transpose(0, 1)), then bmm with
  // k.transpose(1, 2).
  auto j = matmul_spec("float32", 0, 64, 128, 256);
  j["inputs"][1]["shape"] = {256, 128};
  j["nodes"].insert(j["nodes"].begin(), node("t", "transpose", {{{"node", "b"}}},
                                             {{"dim0", 0}, {"dim1", 1}}, {128, 256}, "float32", 7));
  j["nodes"][0]["target"] = "aten.t.default";
  j["nodes"][1]["args"][1]["node"] = "t";
  GemmFamily family(kData);
  auto s = spec::parse_spec(j);
  ASSERT_FALSE(family.cannot_implement(s).has_value()) << family.cannot_implement(s)->describe();
  auto p = family.plan(s);
  EXPECT_TRUE(p.b_nk);
  EXPECT_EQ(p.n, 256);
  EXPECT_EQ(p.k, 128);
  auto cands = family.structures(s, contract::derive(s, "k"));
  EXPECT_TRUE(has(cands[0].code.device_code, "const cublasOperation_t trans_a = CUBLAS_OP_T"));
  EXPECT_TRUE(has(cands[0].code.device_code,
                  "cublasLtMatrixLayoutCreate(&s.la, CUDA_R_32F, 128, 256, 128)"));

  auto b = matmul_spec("float16", 8, 128, 64, 128);
  b["inputs"][1]["shape"] = {8, 128, 64};
  b["nodes"].insert(b["nodes"].begin(),
                    node("kt", "transpose", {{{"node", "b"}}}, {{"dim0", 1}, {"dim1", 2}},
                         {8, 64, 128}, "float16", 7));
  b["nodes"][1]["args"][1]["node"] = "kt";
  auto sb = spec::parse_spec(b);
  ASSERT_FALSE(family.cannot_implement(sb).has_value()) << family.cannot_implement(sb)->describe();
  auto cb = family.structures(sb, contract::derive(sb, "k"));
  const Candidate* tc = find(cb, "tc");
  ASSERT_NE(tc, nullptr);
  EXPECT_TRUE(has(tc->code.device_code, "constexpr bool B_NK = true;"));
  EXPECT_TRUE(has(tc->code.device_code, "STRIDE_A = 8192, STRIDE_B = 8192"));
}

// torch.export writes `A.T` as permute(A, [1, 0]): either operand may be a transposed leaf, read
// by cuBLASLt as stored (its B is our A, its A our B); the own tensor-core kernel reads A as
// stored only.
TEST(Gemm, PermutedOperandsAreReadTransposedByCublasLt) {
  auto permuted = [](bool ta, bool tb) {
    auto j = matmul_spec("float16", 0, 2048, 8192, 4096);
    if (ta) j["inputs"][0]["shape"] = {8192, 2048};
    if (tb) j["inputs"][1]["shape"] = {4096, 8192};
    if (tb) {
      j["nodes"].insert(j["nodes"].begin(), node("pb", "permute", {{{"node", "b"}}},
                                                 {{"dims", {1, 0}}}, {8192, 4096}, "float16", 7));
      j["nodes"].back()["args"][1]["node"] = "pb";
    }
    if (ta) {
      j["nodes"].insert(j["nodes"].begin(), node("pa", "permute", {{{"node", "a"}}},
                                                 {{"dims", {1, 0}}}, {2048, 8192}, "float16", 7));
      j["nodes"].back()["args"][0]["node"] = "pa";
    }
    return j;
  };
  GemmFamily family(kData);
  for (const auto& [ta, tb] :
       {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
    auto s = spec::parse_spec(permuted(ta, tb));
    ASSERT_FALSE(family.cannot_implement(s).has_value()) << family.cannot_implement(s)->describe();
    const auto p = family.plan(s);
    EXPECT_EQ(p.a_km, ta);
    EXPECT_EQ(p.b_nk, tb);
    EXPECT_EQ(p.m, 2048);
    EXPECT_EQ(p.k, 8192);
    EXPECT_EQ(p.n, 4096);
    const auto cands = family.structures(s, contract::derive(s, "k"));
    ASSERT_FALSE(cands.empty());
    const auto& d = cands[0].code.device_code;
    EXPECT_TRUE(has(d, std::string("trans_a = ") + (tb ? "CUBLAS_OP_T" : "CUBLAS_OP_N") +
                           ", trans_b = " + (ta ? "CUBLAS_OP_T" : "CUBLAS_OP_N")))
        << d;
    EXPECT_TRUE(has(d, ta ? "cublasLtMatrixLayoutCreate(&s.lb, CUDA_R_16F, 2048, 8192, 2048)"
                          : "cublasLtMatrixLayoutCreate(&s.lb, CUDA_R_16F, 8192, 2048, 8192)"))
        << d;
    // The own WMMA kernel reads A as stored: not offered for A.T.
    EXPECT_EQ(find(cands, "tc") == nullptr, ta);
  }
  // A permute that is not the last two dims swapped stays refused.
  auto other = matmul_spec("float32", 8, 64, 64, 64);
  other["nodes"].insert(
      other["nodes"].begin(),
      node("pa", "permute", {{{"node", "a"}}}, {{"dims", {1, 0, 2}}}, {64, 8, 64}, "float32", 7));
  other["nodes"][1]["args"][0]["node"] = "pa";
  EXPECT_TRUE(family.cannot_implement(spec::parse_spec(other)).has_value());
}

// x + linear(h) (a residual after the bias, nothing after it): cuBLASLt adds the residual as C
// with beta 1 in the GEMM's epilogue, no pass of its own. Not when an op cuBLASLt lacks follows
// (ResidualAddAndScaleFuse below), nor for a residual that broadcasts.
TEST(Gemm, AResidualIsCublasLtsC) {
  auto j = linear_spec("float32", "");
  j["inputs"].push_back({{"name", "res"}, {"shape", {256, 1024}}, {"dtype", "float32"}});
  j["nodes"].push_back(node("add", "add", {{{"node", "res"}}, {{"node", "fc"}}}, {{"alpha", 1}},
                            {256, 1024}, "float32"));
  j["outputs"][0]["node"] = "add";
  auto cands = structures_of(j, "rs");
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].params["structure"], "lt_native");
  if (const auto nvcc = egg::testing::real_nvcc()) {
    const auto spec = spec::parse_spec(j);
    EXPECT_EQ(
        egg::testing::nvcc_compile_error(*nvcc, kData, contract::derive(spec, "rs"), cands[0]), "");
  }
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "const float alpha = 1.0f, beta = 1.0f;")) << code;
  EXPECT_TRUE(has(code, "const void* c = residual;"));
  EXPECT_TRUE(has(code, "CUBLASLT_EPILOGUE_BIAS;"));
  EXPECT_TRUE(
      has(cands[0].code.launch_body, "egg_rs_gemm(x, fc_weight, fc_bias, res, out0, stream)"))
      << cands[0].code.launch_body;
  EXPECT_TRUE(has(cands[0].summary, "residual (C)")) << cands[0].summary;
  // A residual of one row (broadcast over M): not C.
  auto row = j;
  row["inputs"].back()["shape"] = {1, 1024};
  EXPECT_EQ(find(structures_of(row), "lt_native"), nullptr);
}

TEST(Gemm, ResidualAddAndScaleFuse) {
  auto j = linear_spec("float32", "");
  j["inputs"].push_back({{"name", "res"}, {"shape", {256, 1024}}, {"dtype", "float32"}});
  j["nodes"].push_back(node("mul", "mul", {{{"node", "fc"}}, {{"scalar", 0.5}}}, json::object(),
                            {256, 1024}, "float32"));
  j["nodes"].push_back(node("add", "add", {{{"node", "mul"}}, {{"node", "res"}}}, {{"alpha", 1}},
                            {256, 1024}, "float32"));
  j["nodes"].push_back(
      node("sigmoid", "sigmoid", {{{"node", "add"}}}, json::object(), {256, 1024}, "float32"));
  j["outputs"][0]["node"] = "sigmoid";
  auto cands = structures_of(j);
  EXPECT_EQ(find(cands, "lt_native"), nullptr);
  const Candidate* b = find(cands, "lt_epilogue");
  ASSERT_NE(b, nullptr);
  const auto& code = b->code.device_code;
  EXPECT_TRUE(has(code, "const float l1 = egg_to_float(res[i]);")) << code;
  EXPECT_TRUE(has(code, "const float t1 = (g * 0.5f);"));
  EXPECT_TRUE(has(code, "const float t2 = (t1 + 1.0f * l1);"));
  EXPECT_TRUE(has(code, "const float t3 = egg_sigmoid(t2);"));
  EXPECT_TRUE(has(b->code.launch_body, "egg_k_epilogue_run(out0, x, fc_bias, res, stream)") ||
              has(b->code.launch_body, "egg_k_epilogue_run(out0, res, fc_bias, stream)") ||
              has(b->code.launch_body, "egg_k_epilogue_run(out0, fc_bias, res, stream)") ||
              has(b->code.launch_body, "egg_k_epilogue_run(out0, res, fc_bias, stream)"))
      << b->code.launch_body;
}

TEST(Gemm, ScaleThenBiasIsNativeAlpha) {
  auto j = matmul_spec("float16", 0, 128, 64, 256);
  j["inputs"].push_back({{"name", "bias"}, {"shape", {256}}, {"dtype", "float16"}});
  j["nodes"].push_back(node("mul", "mul", {{{"node", "mm"}}, {{"scalar", 0.25}}}, json::object(),
                            {128, 256}, "float16"));
  j["nodes"].push_back(node("add", "add", {{{"node", "mul"}}, {{"node", "bias"}}}, {{"alpha", 1}},
                            {128, 256}, "float16"));
  j["nodes"].push_back(
      node("relu", "relu", {{{"node", "add"}}}, json::object(), {128, 256}, "float16"));
  j["outputs"][0]["node"] = "relu";
  auto cands = structures_of(j);
  ASSERT_EQ(cands[0].params["structure"], "lt_native");
  EXPECT_TRUE(has(cands[0].code.device_code, "const float alpha = 0.25f, beta = 0.0f;"))
      << cands[0].code.device_code;
  EXPECT_TRUE(has(cands[0].code.device_code, "CUBLASLT_EPILOGUE_RELU_BIAS"));
}

TEST(Gemm, Tf32OnlyWhenAsked) {
  GemmFamily family(kData);
  auto s = spec::parse_spec(linear_spec());
  auto c = contract::derive(s, "k");
  GemmParams q;
  q.tf32 = true;
  EXPECT_TRUE(
      has(family.render(s, c, family.plan(s), q).code.device_code, "CUBLAS_COMPUTE_32F_FAST_TF32"));
  q.tf32 = false;
  EXPECT_FALSE(has(family.render(s, c, family.plan(s), q).code.device_code, "TF32"));
}

TEST(Gemm, TuningsAndFallback) {
  GemmFamily family(kData);
  auto s = spec::parse_spec(linear_spec());
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  auto tunings = family.tunings(s, c, cands[0], "compute");
  // The heuristic's ranked algos 1..7 (stage 1 measured #0): the top 8 between the two stages.
  ASSERT_EQ(tunings.size(), static_cast<size_t>(kLtAlgoTuned - 1));
  EXPECT_EQ(tunings[2].params["algo"], 3);
  EXPECT_EQ(tunings[2].id, "gemm.lt_native:a3");
  const auto& d = tunings[2].code.device_code;
  EXPECT_TRUE(has(d, "if (returned <= 3) return cudaErrorNotSupported;")) << d;
  EXPECT_TRUE(has(d, "const cublasLtMatmulHeuristicResult_t& h = s.algos[cls][3];"));
  EXPECT_TRUE(has(d, "constexpr int egg_k_kAlgos = 16;"));
  EXPECT_FALSE(has(d, "SPLITK"));  // 256x1024 tiles fill the GPU: no forced split-K
  // A ranked algo the heuristic does not offer fails at run time; the incumbent stands.
  EXPECT_FALSE(family.fallback(s, c, tunings[2]).has_value());
  auto fb = family.fallback(s, c, cands[0]);
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->params["structure"], "lt_epilogue");
  EXPECT_EQ(fb->params["algo"], 0);
  EXPECT_FALSE(family.fallback(s, c, *fb).has_value());
}

TEST(Gemm, LongKWithFewTilesAlsoSplitsK) {
  GemmFamily family(kData);
  auto s = spec::parse_spec(matmul_spec("float32", 0, 256, 16384, 256));  // 4 output tiles
  auto c = contract::derive(s, "k");
  auto tunings = family.tunings(s, c, family.structures(s, c)[0], "compute");
  std::vector<std::string> ids;
  for (const auto& t : tunings) ids.push_back(t.id);
  const std::vector<std::string> want = {
      "gemm.lt_native:a1",     "gemm.lt_native:a2",     "gemm.lt_native:a0:sk2",
      "gemm.lt_native:a0:sk4", "gemm.lt_native:a0:sk8", "gemm.lt_native:a0:sk16",
      "gemm.lt_native:a3",     "gemm.lt_native:a4",     "gemm.lt_native:a5",
      "gemm.lt_native:a6",     "gemm.lt_native:a7"};
  EXPECT_EQ(ids, want);
  const auto& d = tunings[3].code.device_code;
  EXPECT_TRUE(has(d, "const std::uint32_t splits = 4;")) << d;
  EXPECT_TRUE(has(d, "CUBLASLT_ALGO_CONFIG_SPLITK_NUM"));
  EXPECT_TRUE(has(d, "cublasLtMatmulAlgoCheck("));
  EXPECT_TRUE(has(tunings[3].summary, "K split 4 ways")) << tunings[3].summary;
  EXPECT_EQ(tunings[3].params["splitk"], 4);
  EXPECT_EQ(GemmParams::from_json(tunings[3].params).splitk, 4);
}

// Every kind of cuBLASLt candidate stage 2 measures compiles with the real nvcc: a ranked algo with
// cuBLASLt's epilogue, and a forced split-K with the fused epilogue kernel.
TEST(Gemm, CublasLtCandidatesCompileWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  GemmFamily family(kData);
  auto native = spec::parse_spec(linear_spec());
  auto nc = contract::derive(native, "k");
  const auto ranked = family.tunings(native, nc, family.structures(native, nc)[0], "compute");
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, nc, ranked.back()), "");
  auto j = matmul_spec("float32", 0, 256, 16384, 256);
  j["nodes"].push_back(
      node("g", "gelu", {{{"node", "mm"}}}, json::object(), {256, 256}, "float32"));
  j["outputs"][0]["node"] = "g";
  auto split = spec::parse_spec(j);
  auto sc = contract::derive(split, "k");
  const auto base = family.structures(split, sc)[0];
  ASSERT_EQ(base.params["structure"], "lt_epilogue");
  const auto tunings = family.tunings(split, sc, base, "compute");
  const auto forced = std::find_if(tunings.begin(), tunings.end(), [](const Candidate& t) {
    return t.params.value("splitk", 0) > 0;
  });
  ASSERT_NE(forced, tunings.end());
  EXPECT_TRUE(has(forced->code.device_code, "_epilogue_kernel"));  // split-K and the fused pass
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, sc, *forced), "");
}

// fp16/bf16 with element-wise ops after the GEMM: cuBLASLt's product kept in fp32 for the
// epilogue pass (rounded once) comes before the plain route (rounded to bf16 first); fp32 and an
// epilogue-free half GEMM have no such variant. It compiles with the real nvcc.
TEST(Gemm, HalfEpilogueKeepsTheProductInFp32First) {
  GemmFamily family(kData);
  auto s = spec::parse_spec(linear_spec("bfloat16", "silu"));
  auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "gemm.lt_epilogue:a0:b256:f32");
  EXPECT_EQ(cands[1].id, "gemm.lt_epilogue:a0:b256");
  EXPECT_EQ(cands[0].params["wide"], true);
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "cublasLtMatrixLayoutCreate(&s.ld, CUDA_R_32F")) << code;
  EXPECT_TRUE(has(code, "const float* __restrict__ src, __nv_bfloat16* __restrict__ out"));
  EXPECT_TRUE(has(cands[0].code.launch_body, "cudaMallocAsync")) << cands[0].code.launch_body;
  // The fp32 result's memory stays in the default pool between calls.
  EXPECT_LT(cands[0].code.launch_body.find("egg_keep_pool(sizeof(float) * std::size_t("),
            cands[0].code.launch_body.find("cudaMallocAsync"));
  EXPECT_TRUE(has(code, "inline void egg_keep_pool(std::size_t bytes)"));
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_epilogue_run(wide, out0, fc_bias, stream)"))
      << cands[0].code.launch_body;
  EXPECT_FALSE(has(cands[1].code.device_code, "CUDA_R_32F, 1024"));
  // A tuning of the wide route stays wide.
  for (const auto& t : family.tunings(s, c, cands[0], "compute")) {
    if (t.params["structure"] == "lt_epilogue") {
      EXPECT_EQ(t.params.value("wide", false), true) << t.id;
    }
  }
  auto fp32 = spec::parse_spec(linear_spec("float32", "silu"));
  for (const auto& cand : family.structures(fp32, contract::derive(fp32, "k")))
    EXPECT_FALSE(cand.params.value("wide", false)) << cand.id;
  auto plain = spec::parse_spec(linear_spec("bfloat16", ""));
  for (const auto& cand : family.structures(plain, contract::derive(plain, "k")))
    EXPECT_FALSE(cand.params.value("wide", false)) << cand.id;
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
}

// A few rows through nn.Linear's weight (a recurrent step, decoding): the own skinny kernel
// first, with the bias and the activation in registers, and cuBLASLt's route second, the library
// floor stage 1 measures beside it. Its default is the first split in the order measured on the
// H100 that gives every SM a block (K over 8 warps, one column each: 256 blocks, where 4 warps of
// two columns give 64); stage 2 tries the other splits in that order, then cuBLASLt's ranked
// algos. Past 16 rows, or with B stored [K][N], there is none.
TEST(Gemm, FewRowsGetTheSkinnyKernelFirstThenTheLibraryFloor) {
  const json j = linear_spec("float32", "tanh", json::object(), 8, 1280, 256);
  auto cands = structures_of(j, "rnn");
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "gemm.skinny:w8:c1");
  EXPECT_FALSE(library_route(cands[0]));
  EXPECT_TRUE(library_route(cands[1])) << cands[1].id;
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "constexpr int M = 8, KWARPS = 8, COLS = 1;")) << code;
  EXPECT_TRUE(has(code, "constexpr long long N = 256, K = 1280, BATCH = 1;"));
  EXPECT_TRUE(has(code, "const float t1 = tanhf(g);")) << code;
  EXPECT_TRUE(has(code, "egg_rnn_epilogue<long long>(v, i, fc_bias)"));
  EXPECT_TRUE(
      has(cands[0].code.launch_body, "egg_rnn_skinny::run(x, fc_weight, out0, fc_bias, stream)"))
      << cands[0].code.launch_body;
  EXPECT_EQ(cands[0].params,
            json({{"structure", "skinny"}, {"tf32", false}, {"kwarps", 8}, {"cols", 1}}));

  GemmFamily family(kData);
  const auto s = spec::parse_spec(j);
  const auto c = contract::derive(s, "rnn");
  const auto tunings = family.tunings(s, c, cands[0], "memory");
  ASSERT_GE(tunings.size(), 3u);
  EXPECT_EQ(tunings[0].id, "gemm.skinny:w4:c2");  // the measured order's first
  EXPECT_TRUE(std::any_of(tunings.begin(), tunings.end(),
                          [](const Candidate& t) { return library_route(t); }));
  // Four columns a warp lost everywhere it was measured: never proposed.
  for (const auto& t : tunings) {
    if (t.params.value("structure", "") == "skinny") {
      EXPECT_LE(t.params["cols"].get<int>(), 2) << t.id;
    }
  }
  // cuBLASLt ahead after stage 1: the skinny shapes come after its algos.
  const Candidate* lt = &cands[1];
  const auto after_lt = family.tunings(s, c, *lt, "memory");
  ASSERT_FALSE(after_lt.empty());
  EXPECT_TRUE(library_route(after_lt.front()));
  EXPECT_EQ(after_lt.back().params.value("structure", ""), "skinny");

  // 4096 columns: 4 warps a column pair's K (1024 blocks); from 12 rows on, one warp a column
  // pair (each A load serves two columns); K = 64 splits over at most 2 warps (a quarter of 8
  // warps' steps would find work).
  EXPECT_EQ(structures_of(linear_spec("float32", "tanh", json::object(), 8, 2048, 4096))[0].id,
            "gemm.skinny:w4:c2");
  EXPECT_EQ(structures_of(linear_spec("float32", "tanh", json::object(), 16, 4096, 4096))[0].id,
            "gemm.skinny:w1:c2");
  for (const auto& c : structures_of(linear_spec("float32", "", json::object(), 4, 64, 4096)))
    EXPECT_FALSE(has(c.id, "skinny:w4") || has(c.id, "skinny:w8")) << c.id;
  EXPECT_EQ(
      find(structures_of(linear_spec("float32", "tanh", json::object(), 17, 1280, 256)), "skinny"),
      nullptr);
  EXPECT_EQ(find(structures_of(matmul_spec("float32", 0, 8, 1280, 256)), "skinny"), nullptr);
  GemmProblem p;
  p.m = 8, p.n = 256, p.k = 1280, p.b_nk = true;
  GemmParams q;
  q.structure = "skinny";
  q.kwarps = 3;
  EXPECT_EQ(GemmFamily::skinny_unsupported(p, q).value_or(""), "K split over 1, 2, 4 or 8 warps");
  p.m = 17;
  q.kwarps = 1;
  EXPECT_NE(GemmFamily::skinny_unsupported(p, q).value_or("").find("16 rows"), std::string::npos);
  EXPECT_FALSE(gemm_skinny_default(p).has_value());
}

// The skinny kernel compiles with the real nvcc: fp32 with a bias and tanh, and fp16 with 4 rows,
// no bias and an odd K (its element-load path only).
TEST(Gemm, SkinnyCandidatesCompileWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  const auto s = spec::parse_spec(linear_spec("float32", "tanh", json::object(), 8, 1280, 256));
  const auto c = contract::derive(s, "sk");
  GemmFamily family(kData);
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, family.structures(s, c)[0]), "");
  const auto h = spec::parse_spec(linear_spec("float16", "", json::object(), 4, 1001, 512, false));
  const auto hc = contract::derive(h, "hk");
  const auto hs = family.structures(h, hc);
  ASSERT_EQ(hs[0].params.value("structure", ""), "skinny");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, hc, hs[0]), "");
}

TEST(Gemm, BuiltinBackendPicksGemmFamily) {
  BuiltinBackend backend(kData);
  auto s = spec::parse_spec(linear_spec());
  EXPECT_NO_THROW(backend.check_supported(s));
  auto c = contract::derive(s, "k");
  StageRequest r;
  r.spec = &s;
  r.contract = &c;
  r.stage = "stage1";
  auto cands = backend.propose(r);
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].id.rfind("gemm.", 0), 0u) << cands[0].id;
}

}  // namespace
}  // namespace egg::backend::builtin

namespace egg::backend::builtin {
namespace {

// PRECISION fp32x3: the own 3xTF32 kernel first (its epilogue fused), the cuBLASLt SGEMM floor
// second; never without the opt-in, never for half types or an A read transposed.
TEST(Gemm, SplitPrecisionKernelOnlyWhenAskedAndFirst) {
  GemmFamily x3(kData, "fp32x3");
  GemmFamily plain(kData);
  auto s = spec::parse_spec(linear_spec("float32", "silu"));
  auto c = contract::derive(s, "k");
  auto cands = x3.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "gemm.x3:128x128x32:w2x4:s3:f4");
  EXPECT_EQ(cands[0].params["fold"], 4);
  EXPECT_EQ(cands[1].params["structure"], "lt_epilogue");
  EXPECT_EQ(cands[1].params["tf32"], false);
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "cvt.rna.tf32.f32")) << code;
  EXPECT_TRUE(has(code, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
  EXPECT_TRUE(has(code, "constexpr bool B_NK = true;"));
  EXPECT_TRUE(has(code, "const float t1 = egg_silu(g);")) << code;
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_x3::run(x, fc_weight, out0, fc_bias, stream)"))
      << cands[0].code.launch_body;
  EXPECT_TRUE(has(cands[0].summary, "3xTF32"));
  auto tunings = x3.tunings(s, c, cands[0], "compute");
  ASSERT_GE(tunings.size(), 3u);
  for (const auto& t : tunings) EXPECT_EQ(t.params["structure"], "x3") << t.id;
  auto fb = x3.fallback(s, c, tunings.front());
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->params["structure"], "lt_epilogue");
  // cuBLASLt ahead after stage 1: stage 2 still measures the split-precision tiles, first.
  auto after_lt = x3.tunings(s, c, cands[1], "compute");
  ASSERT_GT(after_lt.size(), tunings.size());
  for (size_t i = 0; i < tunings.size(); ++i) EXPECT_EQ(after_lt[i].id, tunings[i].id);
  EXPECT_EQ(after_lt[tunings.size()].params["structure"], "lt_epilogue");
  EXPECT_EQ(plain.tunings(s, c, cands[1], "compute").front().params["structure"], "lt_epilogue");

  EXPECT_EQ(find(plain.structures(s, c), "x3"), nullptr);
  auto h = spec::parse_spec(linear_spec("float16", "silu"));
  EXPECT_EQ(find(x3.structures(h, contract::derive(h, "k")), "x3"), nullptr);

  // K not a multiple of 4: cp.async's 16-byte chunks do not tile a row.
  GemmProblem p = x3.plan(s);
  p.k = 510;
  EXPECT_TRUE(GemmFamily::x3_unsupported(p, gemm_x3_default()).has_value());
  p.k = 512;
  p.a_km = true;
  EXPECT_TRUE(GemmFamily::x3_unsupported(p, gemm_x3_default()).has_value());
}

// The 3xTF32 kernel compiles with the real nvcc: B as nn.Linear's [N][K] with a bias and
// activation, and a [K][N] B in two blocks an SM with ragged M and N edges.
TEST(Gemm, SplitPrecisionCandidatesCompileWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  GemmFamily family(kData, "fp32x3");
  auto linear = spec::parse_spec(linear_spec("float32", "gelu"));
  auto lc = contract::derive(linear, "k");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, lc, family.structures(linear, lc)[0]),
            "");
  auto mm = spec::parse_spec(matmul_spec("float32", 2, 1000, 256, 4092));
  auto mc = contract::derive(mm, "k");
  const auto base = family.structures(mm, mc)[0];
  ASSERT_EQ(base.params["structure"], "x3");
  const auto tunings = family.tunings(mm, mc, base, "compute");
  const auto two = std::find_if(tunings.begin(), tunings.end(),
                                [](const Candidate& t) { return t.params["min_blocks"] == 2; });
  ASSERT_NE(two, tunings.end());
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, mc, *two), "");
}

// Where every target arch is sm_90a, PRECISION fp32x3 proposes the split on wgmma in place of
// mma.sync: first in stage 1, its tiles first in stage 2 whichever structure led; elsewhere x3.
TEST(Gemm, SplitPrecisionRunsOnWgmmaWhereEveryArchIsSm90a) {
  GemmFamily hopper(kData, "fp32x3", true);
  auto s = spec::parse_spec(linear_spec("float32", "silu"));
  auto c = contract::derive(s, "k");
  auto cands = hopper.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  // 16 tiles of 128x128 on 132 SMs: K in two slices of 8 k-tiles.
  EXPECT_EQ(cands[0].id, "gemm.wgx3:128x128x32:s3:sk2");
  EXPECT_EQ(cands[1].params["structure"], "lt_epilogue");
  EXPECT_EQ(find(cands, "x3"), nullptr);
  const auto& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32")) << code;
  EXPECT_TRUE(has(code, "fence.proxy.async.shared::cta"));
  EXPECT_TRUE(has(code, "constexpr int WGS = 2, BM = 64 * WGS, BN = 128"));
  EXPECT_TRUE(has(code, "const float t1 = egg_silu(g);"));
  EXPECT_TRUE(has(code, "constexpr int SPLITS = 2;"));
  EXPECT_TRUE(has(code, "finish<<<blocks, 256, 0, stream>>>(partial, out, fc_bias)")) << code;
  EXPECT_TRUE(
      has(cands[0].code.launch_body, "egg_k_wgx3::run(x, fc_weight, out0, fc_bias, stream)"))
      << cands[0].code.launch_body;
  auto tunings = hopper.tunings(s, c, cands[0], "compute");
  ASSERT_GE(tunings.size(), 3u);
  for (const auto& t : tunings) EXPECT_EQ(t.params["structure"], "wgx3") << t.id;
  auto after_lt = hopper.tunings(s, c, cands[1], "compute");
  ASSERT_GT(after_lt.size(), tunings.size());
  for (size_t i = 0; i < tunings.size(); ++i) EXPECT_EQ(after_lt[i].id, tunings[i].id);
  auto fb = hopper.fallback(s, c, tunings.front());
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->params["structure"], "lt_epilogue");
  // Without the opt-in no split at all; half types never.
  EXPECT_EQ(find(GemmFamily(kData, "default", true).structures(s, c), "wgx3"), nullptr);
  auto h = spec::parse_spec(linear_spec("float16", "silu"));
  EXPECT_EQ(find(hopper.structures(h, contract::derive(h, "k")), "wgx3"), nullptr);

  GemmProblem p = hopper.plan(s);
  EXPECT_FALSE(GemmFamily::wgx3_unsupported(p, gemm_wgx3_default()).has_value());
  GemmParams big = gemm_wgx3_default();
  big.bm = 256;  // four warpgroups: not a shape the kernel has
  EXPECT_TRUE(GemmFamily::wgx3_unsupported(p, big).has_value());
  GemmParams deep = gemm_wgx3_default();
  deep.stages = 4;  // 128x128 with four raw stages: above 227 KiB of shared memory
  EXPECT_TRUE(GemmFamily::wgx3_unsupported(p, deep).has_value());
  p.a_km = true;
  EXPECT_TRUE(GemmFamily::wgx3_unsupported(p, gemm_wgx3_default()).has_value());
}

// The wgmma kernel compiles with the real nvcc for sm_90a: nn.Linear's [N][K] B with an
// epilogue, and a batched [K][N] B with ragged edges in the smallest tile.
// K slices: a running sum of at most 256 k-tiles, blocks for idle SMs, the workspace at most 1 GiB.
TEST(Gemm, SplitPrecisionWgmmaSlicesLongKAndSmallOutputs) {
  auto problem = [](std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmProblem p;
    p.batch = batch, p.m = m, p.n = n, p.k = k;
    return p;
  };
  EXPECT_EQ(wgx3_splits(problem(1, 1024, 8192, 8192), 128, 128), 1);     // 512 tiles, 256 k-tiles
  EXPECT_EQ(wgx3_splits(problem(1, 256, 256, 524288), 128, 128), 64);    // 16384 k-tiles
  EXPECT_EQ(wgx3_splits(problem(1, 4096, 4096, 131072), 128, 128), 16);  // 1 GiB of partials
  EXPECT_EQ(wgx3_splits(problem(1, 8192, 8192, 65536), 128, 128), 4);    // 8 would need 2 GiB
  EXPECT_EQ(wgx3_splits(problem(1, 128, 128, 4096), 128, 128), 16);   // one tile: 16 of 8 k-tiles
  EXPECT_EQ(wgx3_splits(problem(1, 128, 128, 200), 128, 128), 1);     // 7 k-tiles: nothing to split
  EXPECT_EQ(wgx3_splits(problem(1, 64, 64, 96 * 32), 128, 128), 12);  // 12 slices of 8 k-tiles
  GemmParams q = gemm_wgx3_default();
  GemmProblem p = problem(1, 64, 64, 9 * 32);
  p.dtype = spec::DType::float32, p.b_nk = true;
  q.splitk = 4;  // 3 k-tiles a slice: the fourth would be empty
  EXPECT_TRUE(GemmFamily::wgx3_unsupported(p, q).has_value());
  q.splitk = 3;
  EXPECT_FALSE(GemmFamily::wgx3_unsupported(p, q).has_value());
}

TEST(Gemm, SplitPrecisionWgmmaCandidatesCompileForSm90a) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  GemmFamily family(kData, "fp32x3", true);
  auto linear = spec::parse_spec(linear_spec("float32", "gelu"));
  auto lc = contract::derive(linear, "k");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, lc, family.structures(linear, lc)[0],
                                             "sm_90a"),
            "");
  auto mm = spec::parse_spec(matmul_spec("float32", 2, 300, 252, 500));
  auto mc = contract::derive(mm, "k");
  const auto base = family.structures(mm, mc)[0];
  ASSERT_EQ(base.params["structure"], "wgx3");
  const auto tunings = family.tunings(mm, mc, base, "compute");
  ASSERT_FALSE(tunings.empty());
  EXPECT_EQ(tunings.back().id, "gemm.wgx3:64x64x32:s4");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, mc, tunings.back(), "sm_90a"), "");
  // Two groups in flight (a second set of partial sums), second in stage 2.
  EXPECT_EQ(tunings.at(1).id, "gemm.wgx3:128x128x32:s3:i2");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, mc, tunings.at(1), "sm_90a"), "");
  // For plain sm_90 the kernel refuses to compile, saying what to target.
  EXPECT_NE(egg::testing::nvcc_compile_error(*nvcc, kData, mc, tunings.back(), "sm_90")
                .find("compile it for sm_90a"),
            std::string::npos);
}

// Where every arch is sm_90a, an fp16/bf16 GEMM with nn.Linear's [N][K] weight is also proposed
// to the wgmma kernel, after the library routes (measured slower on the H100); its tiles come after
// cuBLASLt's algos in stage 2 where cuBLASLt led. It compiles for sm_90a with the real nvcc, with
// an epilogue and ragged edges.
TEST(Gemm, HalfPrecisionLinearRunsOnWgmmaWhereEveryArchIsSm90a) {
  GemmFamily hopper(kData, "default", true);
  auto s = spec::parse_spec(linear_spec("bfloat16", "silu"));
  auto c = contract::derive(s, "k");
  auto cands = hopper.structures(s, c);
  ASSERT_GE(cands.size(), 5u);
  EXPECT_EQ(cands[0].id, "gemm.lt_epilogue:a0:b256:f32");
  EXPECT_EQ(cands[1].id, "gemm.lt_epilogue:a0:b256");
  EXPECT_EQ(cands[2].id, "gemm.cublas:b256:f32");
  EXPECT_EQ(cands[3].id, "gemm.wg:128x256x64:s4");
  EXPECT_EQ(cands[4].params["structure"], "tc");
  const auto& code = cands[3].code.device_code;
  EXPECT_TRUE(has(code, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16")) << code;
  EXPECT_TRUE(has(code, "const float t1 = egg_silu(g);"));
  auto tunings = hopper.tunings(s, c, cands[3], "compute");
  ASSERT_GE(tunings.size(), 3u);
  for (const auto& t : tunings) EXPECT_EQ(t.params["structure"], "wg") << t.id;
  auto after_lt = hopper.tunings(s, c, cands[0], "compute");
  ASSERT_GT(after_lt.size(), tunings.size());
  EXPECT_EQ(after_lt.front().params["structure"], "lt_epilogue");
  for (size_t i = 0; i < tunings.size(); ++i)
    EXPECT_EQ(after_lt[after_lt.size() - tunings.size() + i].id, tunings[i].id);
  auto fb = hopper.fallback(s, c, cands[3]);
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->params["structure"], "lt_epilogue");
  // Not without sm_90a, not for fp32, not for a [K][N] B (matmul).
  EXPECT_EQ(find(GemmFamily(kData).structures(s, c), "wg"), nullptr);
  auto f = spec::parse_spec(linear_spec("float32", "silu"));
  EXPECT_EQ(find(hopper.structures(f, contract::derive(f, "k")), "wg"), nullptr);
  auto mm = spec::parse_spec(matmul_spec("float16", 0, 256, 512, 256));
  EXPECT_EQ(find(hopper.structures(mm, contract::derive(mm, "k")), "wg"), nullptr);

  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[3], "sm_90a"), "");
  auto h = spec::parse_spec(linear_spec("float16", "gelu"));
  auto hc = contract::derive(h, "k");
  const auto hs = hopper.structures(h, hc);
  const Candidate* hw = find(hs, "wg");
  ASSERT_NE(hw, nullptr);
  const auto ht = hopper.tunings(h, hc, *hw, "compute");
  ASSERT_FALSE(ht.empty());
  EXPECT_TRUE(has(ht.front().code.device_code, "m64n128k16.f32.f16.f16"));
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, hc, ht.front(), "sm_90a"), "");
}

TEST(Gemm, PrecisionOptInSelectsTheComputeTypeForFp32Only) {
  auto s = spec::parse_spec(matmul_spec("float32", 0, 64, 128, 256));
  auto c = contract::derive(s, "k");
  auto code_with = [&](const std::string& precision) {
    GemmFamily family(kData, precision);
    return family.structures(s, c).front().code.device_code;
  };
  EXPECT_TRUE(has(code_with("default"), "CUBLAS_COMPUTE_32F, CUDA_R_32F)"));
  EXPECT_TRUE(has(code_with("tf32"), "CUBLAS_COMPUTE_32F_FAST_TF32"));
  EXPECT_TRUE(has(code_with("bf16"), "CUBLAS_COMPUTE_32F_FAST_16BF"));
  auto h = spec::parse_spec(matmul_spec("float16", 0, 64, 128, 256));
  GemmFamily fast(kData, "tf32");
  EXPECT_FALSE(
      has(fast.structures(h, contract::derive(h, "k")).front().code.device_code, "FAST_TF32"));
}

}  // namespace
}  // namespace egg::backend::builtin
