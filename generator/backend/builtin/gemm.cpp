#include "backend/builtin/gemm.h"
#include "backend/builtin/gpu_target.h"
#include "backend/builtin/plan_util.h"

#include <algorithm>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// wgx3's K slices: the longest running sum of k-tiles, the workspace its partial sums may take,
// and the SMs of the sm_90 parts it targets (H100, H200).
constexpr std::int64_t kWgx3MaxRunTiles = 256;
constexpr std::int64_t kWgx3MaxWorkspace = std::int64_t(1) << 30;

// The output tiles of bm x bn a GEMM grid has, over its batch.
std::int64_t output_tiles(const GemmProblem& p, std::int64_t bm, std::int64_t bn) {
  return p.batch * ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
}

std::string cuda_data_type(spec::DType d) {
  switch (d) {
    case spec::DType::float16:
      return "CUDA_R_16F";
    case spec::DType::bfloat16:
      return "CUDA_R_16BF";
    default:
      return "CUDA_R_32F";
  }
}

// The scalar of a node argument, or nullopt when it is a tensor.
std::optional<double> scalar_of(const spec::Arg& a) {
  if (a.kind == spec::Arg::Kind::scalar) return a.scalar;
  return std::nullopt;
}

// The shared-memory pipeline and register budget of EGG's own GEMM kernels (tc, x3), how they
// differ: element size, the pitch pad of a [K][N] B tile (A and an [N][K] B pad by 8 elements,
// the fp32 staging tile by 4 floats), the n of one accumulator fragment and the most fragments a
// warp holds without spilling.
struct OwnKernelShape {
  int elem_bytes, b_kn_pad, frag_n, max_frags;
};

std::optional<std::string> own_kernel_limits(const GemmProblem& p, const GemmParams& q,
                                             const OwnKernelShape& k) {
  const int threads = q.warps_m * q.warps_n * 32;
  if (threads > 1024 || q.stages < 2) return "too many warps or too few stages";
  const std::int64_t b_stage =
      p.b_nk ? std::int64_t(q.bn) * (q.bk + 8) : std::int64_t(q.bk) * (q.bn + k.b_kn_pad);
  const std::int64_t pipe =
      std::int64_t(q.stages) * (std::int64_t(q.bm) * (q.bk + 8) + b_stage) * k.elem_bytes;
  const std::int64_t staging = std::int64_t(q.bm) * (q.bn + 4) * 4;
  if (q.min_blocks < 1 || q.min_blocks * std::max(pipe, staging) > 227 * 1024)
    return "shared memory above 227 KiB per SM";
  const std::int64_t frags = std::int64_t(q.bm / q.warps_m / 16) * (q.bn / q.warps_n / k.frag_n);
  if (frags > k.max_frags)
    return "more than " + std::to_string(k.max_frags) +
           " accumulator fragments per warp (register spills)";
  if ((p.m + q.bm - 1) / q.bm > 65535 || p.batch > 65535) return "grid too large";
  return std::nullopt;
}

// The skinny kernel's columns a block: 8 warps in groups of kwarps, `cols` columns a group.
std::int64_t skinny_block_cols(const GemmParams& q) { return 8 / q.kwarps * q.cols; }

}  // namespace

json GemmParams::to_json() const {
  json j = {{"structure", structure}, {"tf32", tf32}};
  if (structure == "tc" || structure == "x3" || structure == "wgx3" || structure == "wg") {
    j.update({{"bm", bm},
              {"bn", bn},
              {"bk", bk},
              {"warps_m", warps_m},
              {"warps_n", warps_n},
              {"stages", stages},
              {"min_blocks", min_blocks}});
    if (structure == "x3") j["fold"] = fold;
    if (structure == "wgx3") {
      j["inflight"] = inflight;
      if (splitk > 1) j["splitk"] = splitk;
    }
  } else if (structure == "skinny") {
    j.update({{"kwarps", kwarps}, {"cols", cols}});
  } else if (structure == "cublas") {
    j["link"] = json::array({"cublas"});
    j["epilogue_block"] = epilogue_block;
    if (wide) j["wide"] = true;
  } else {
    j["algo"] = algo;
    if (splitk > 0) j["splitk"] = splitk;
    j["link"] = json::array({"cublasLt"});
    if (structure == "lt_epilogue") j["epilogue_block"] = epilogue_block;
    if (structure == "lt_epilogue" && wide) j["wide"] = true;
  }
  return j;
}

GemmParams GemmParams::from_json(const json& j) {
  GemmParams p;
  p.structure = j.value("structure", p.structure);
  p.algo = j.value("algo", p.algo);
  p.splitk = j.value("splitk", p.splitk);
  p.epilogue_block = j.value("epilogue_block", p.epilogue_block);
  p.wide = j.value("wide", p.wide);
  p.tf32 = j.value("tf32", p.tf32);
  p.bm = j.value("bm", p.bm);
  p.bn = j.value("bn", p.bn);
  p.bk = j.value("bk", p.bk);
  p.warps_m = j.value("warps_m", p.warps_m);
  p.warps_n = j.value("warps_n", p.warps_n);
  p.stages = j.value("stages", p.stages);
  p.min_blocks = j.value("min_blocks", p.min_blocks);
  p.fold = j.value("fold", p.fold);
  p.inflight = j.value("inflight", p.inflight);
  p.kwarps = j.value("kwarps", p.kwarps);
  p.cols = j.value("cols", p.cols);
  return p;
}

GemmFamily::GemmFamily(const std::filesystem::path& data_dir, std::string precision, bool wgmma)
    : precision_(std::move(precision)),
      wgmma_(wgmma),
      ops_(data_dir),
      lt_(render::load_template(data_dir, "gemm/lt.cuh.tmpl")),
      lt_launch_(render::load_template(data_dir, "gemm/lt_launch.tmpl")),
      cublas_(render::load_template(data_dir, "gemm/cublas.cuh.tmpl")),
      epilogue_pass_(render::load_template(data_dir, "gemm/epilogue_pass.cuh.tmpl")),
      tc_(render::load_template(data_dir, "gemm/tc.cuh.tmpl")),
      tc_launch_(render::load_template(data_dir, "gemm/tc_launch.tmpl")),
      x3_(render::load_template(data_dir, "gemm/x3.cuh.tmpl")),
      wgx3_(render::load_template(data_dir, "gemm/wgx3.cuh.tmpl")),
      wg_(render::load_template(data_dir, "gemm/wg.cuh.tmpl")),
      skinny_(render::load_template(data_dir, "gemm/skinny.cuh.tmpl")),
      epilogue_(render::load_template(data_dir, "gemm/epilogue.cuh.tmpl")),
      keep_pool_(render::load_template(data_dir, "common/keep_pool.cuh")) {}

std::vector<std::pair<std::string, std::string>> GemmFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  for (const auto* t : {&lt_, &lt_launch_, &cublas_, &epilogue_pass_, &tc_, &tc_launch_, &x3_,
                        &wgx3_, &wg_, &skinny_, &epilogue_, &keep_pool_})
    inputs.push_back({t->name, t->text});
  return inputs;
}

std::variant<GemmProblem, UserError> GemmFamily::analyze(const spec::Spec& s) const {
  return plan_gemm(s, ops_);
}

std::optional<GemmNativeEpilogue> GemmFamily::native_epilogue(const spec::Spec& s,
                                                              const GemmProblem& p) {
  GemmNativeEpilogue ne;
  ne.alpha = p.alpha;
  auto bias_vector = [&](const std::string& name) {
    const spec::Tensor* t = s.find_tensor(name);
    return t && t->dtype == p.dtype && !t->shape.empty() && t->shape.back() == p.n &&
           spec::numel(t->shape) == p.n;
  };
  if (!p.bias.empty()) {
    if (p.beta != 1.0 || !bias_vector(p.bias)) return std::nullopt;
    ne.bias = p.bias;
  }
  std::string cur = p.anchor->name;
  size_t i = 0;
  const auto& ep = p.epilogue;
  auto operand_is = [](const spec::Arg& a, const std::string& name) {
    return a.kind == spec::Arg::Kind::node && a.node == name;
  };
  // alpha: a multiplication by a number right after the GEMM (before any bias).
  if (i < ep.size() && ep[i]->op == "mul" && ne.bias.empty() && ep[i]->args.size() == 2) {
    const auto& n = *ep[i];
    std::optional<double> factor;
    if (operand_is(n.args[0], cur))
      factor = scalar_of(n.args[1]);
    else if (operand_is(n.args[1], cur))
      factor = scalar_of(n.args[0]);
    if (factor) {
      ne.alpha *= *factor;
      cur = n.name;
      ++i;
    }
  }
  // An `add` (alpha 1) of the running value and another node `accepts` takes: that node, the
  // add consumed.
  auto take_add = [&](auto accepts) -> std::optional<std::string> {
    if (i >= ep.size() || ep[i]->op != "add" || ep[i]->args.size() != 2 ||
        attr_number(*ep[i], "alpha", 1.0) != 1.0)
      return std::nullopt;
    const auto& n = *ep[i];
    for (int k : {0, 1}) {
      const auto& self = n.args[k];
      const auto& other = n.args[1 - k];
      if (operand_is(self, cur) && other.kind == spec::Arg::Kind::node && accepts(other.node)) {
        cur = n.name;
        ++i;
        return other.node;
      }
    }
    return std::nullopt;
  };
  // bias: adding a [N] vector of the output dtype.
  if (ne.bias.empty())
    if (auto bias = take_add(bias_vector)) ne.bias = *bias;
  // residual: adding a tensor of the output's shape and dtype (cuBLASLt adds beta * C before the
  // bias and the activation: the same sum, rounded once).
  if (auto residual = take_add([&](const std::string& name) {
        const spec::Tensor* r = s.find_tensor(name);
        return r && r->dtype == p.dtype && r->shape == p.out_shape;
      }))
    ne.residual = *residual;
  // activation: relu, or gelu with the tanh approximation (cuBLASLt's GELU is the tanh form).
  if (i < ep.size() && !ep[i]->args.empty() && operand_is(ep[i]->args[0], cur)) {
    const auto& n = *ep[i];
    if (n.op == "relu") ne.activation = "relu";
    if (n.op == "gelu" && n.attrs.value("approximate", std::string("none")) == "tanh")
      ne.activation = "gelu_tanh";
    if (!ne.activation.empty()) ++i;
  }
  if (i != ep.size()) return std::nullopt;
  return ne;
}

std::optional<std::string> GemmFamily::tc_unsupported(const GemmProblem& p, const GemmParams& q) {
  if (p.dtype != spec::DType::float16 && p.dtype != spec::DType::bfloat16)
    return "the own tensor-core GEMM takes float16/bfloat16 (float32 stays on cuBLASLt without "
           "TF32)";
  if (p.a_km) return "the own tensor-core GEMM reads A as stored [M][K] (cuBLASLt takes A.T)";
  if (p.k % 8 != 0 || p.n % 8 != 0)
    return "K and N must be multiples of 8 (16-byte cp.async chunks)";
  if (q.bm % (q.warps_m * 16) != 0 || q.bn % (q.warps_n * 16) != 0 || q.bk % 16 != 0 || q.bk < 16)
    return "tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" +
           std::to_string(q.bk) + " does not split into 16x16 fragments over the warps";
  return own_kernel_limits(p, q, {2, 8, 16, 16});
}

std::optional<std::string> GemmFamily::x3_unsupported(const GemmProblem& p, const GemmParams& q) {
  if (p.dtype != spec::DType::float32) return "the own 3xTF32 GEMM takes float32";
  if (p.a_km) return "the own 3xTF32 GEMM reads A as stored [M][K] (cuBLASLt takes A.T)";
  if (p.k % 4 != 0 || (!p.b_nk && p.n % 4 != 0))
    return "K (and N for a [K][N] B) must be multiples of 4 (16-byte cp.async chunks)";
  if (q.bm % (q.warps_m * 16) != 0 || q.bn % (q.warps_n * 8) != 0 || q.bk % 8 != 0 || q.bk < 8)
    return "tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" +
           std::to_string(q.bk) + " does not split into m16n8k8 fragments over the warps";
  if (q.fold < 1 || (q.bk / 8) % q.fold != 0)
    return "a fold of " + std::to_string(q.fold) + " k-steps does not divide the k-tile";
  if (auto why = own_kernel_limits(p, q, {4, 4, 8, 32})) return why;
  constexpr std::int64_t int_max = 2147483647;
  if (p.m > int_max || p.n > int_max || p.k > int_max)
    return "a dimension past 2^31 (the kernel indexes within a matrix in int)";
  return std::nullopt;
}

std::optional<std::string> GemmFamily::wg_unsupported(const GemmProblem& p, const GemmParams& q) {
  if (p.dtype != spec::DType::float16 && p.dtype != spec::DType::bfloat16)
    return "the own wgmma GEMM takes float16/bfloat16";
  if (p.a_km || !p.b_nk)
    return "the own wgmma GEMM reads A as [M][K] and B as [N][K] (nn.Linear's weight), both "
           "K-major";
  if (p.k % 8 != 0 || p.n % 8 != 0)
    return "K and N must be multiples of 8 (16-byte cp.async chunks)";
  if ((q.bm != 64 && q.bm != 128) || (q.bn != 128 && q.bn != 256) || q.bk != 64)
    return "tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" +
           std::to_string(q.bk) + " is not one or two m64n128k16 / m64n256k16 warpgroups by 64";
  const std::int64_t stage = std::int64_t(q.bm + q.bn) * q.bk * 2;
  const std::int64_t staging = std::int64_t(q.bm) * (q.bn + 4) * 4;
  if (q.stages < 3 || std::max(q.stages * stage, staging) + 1024 > 227 * 1024)
    return "shared memory above 227 KiB per SM";
  if ((p.m + q.bm - 1) / q.bm > 65535 || p.batch > 65535) return "grid too large";
  constexpr std::int64_t int_max = 2147483647;
  if (p.m > int_max || p.n > int_max || p.k > int_max)
    return "a dimension past 2^31 (the kernel indexes within a matrix in int)";
  return std::nullopt;
}

std::optional<std::string> GemmFamily::wgx3_unsupported(const GemmProblem& p, const GemmParams& q) {
  if (p.dtype != spec::DType::float32) return "the own 3xTF32 GEMM takes float32";
  if (p.a_km) return "the own 3xTF32 GEMM reads A as stored [M][K] (cuBLASLt takes A.T)";
  if (p.k % 4 != 0 || (!p.b_nk && p.n % 4 != 0))
    return "K (and N for a [K][N] B) must be multiples of 4 (16-byte cp.async chunks)";
  if ((q.bm != 64 && q.bm != 128) || (q.bn != 64 && q.bn != 128) || q.bk != 32)
    return "tile " + std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" +
           std::to_string(q.bk) + " is not one or two m64n64k8 / m64n128k8 warpgroups by 32";
  // Two split buffers (big and small of both tiles) and the raw stages, + 1 KiB of alignment.
  const std::int64_t tiles = std::int64_t(q.bm + q.bn) * q.bk * 4;
  if (q.stages < 2 || 4 * tiles + q.stages * tiles + 1024 > 227 * 1024)
    return "shared memory above 227 KiB per SM";
  if (q.inflight != 1 && q.inflight != 2) return "one or two wgmma groups in flight";
  const std::int64_t splits = std::max(1, q.splitk), k_tiles = (p.k + q.bk - 1) / q.bk;
  if (splits > 1 && (splits - 1) * ((k_tiles + splits - 1) / splits) >= k_tiles)
    return "a K slice without a k-tile";
  if (splits > 1 && splits * p.batch * p.m * p.n * 4 > kWgx3MaxWorkspace)
    return "K slices whose partial sums need more than 1 GiB of workspace";
  if ((p.m + q.bm - 1) / q.bm > 65535 || p.batch * splits > 65535) return "grid too large";
  constexpr std::int64_t int_max = 2147483647;
  if (p.m > int_max || p.n > int_max || p.k > int_max)
    return "a dimension past 2^31 (the kernel indexes within a matrix in int)";
  return std::nullopt;
}

std::optional<std::string> GemmFamily::skinny_unsupported(const GemmProblem& p,
                                                          const GemmParams& q) {
  if (!float_storage(p.dtype)) return "the own skinny GEMM takes float32, float16 or bfloat16";
  if (p.a_km || !p.b_nk)
    return "the own skinny GEMM reads A as [M][K] and B as [N][K] (nn.Linear's weight)";
  if (p.m > kSkinnyMaxRows)
    return "more than " + std::to_string(kSkinnyMaxRows) +
           " rows (the skinny GEMM keeps every row's sum in registers)";
  if (q.kwarps != 1 && q.kwarps != 2 && q.kwarps != 4 && q.kwarps != 8)
    return "K split over 1, 2, 4 or 8 warps";
  if (q.cols < 1 || q.cols > 4 || p.m * q.cols > 64)
    return "1 to 4 columns a warp, at most 64 sums in registers";
  if ((p.n + skinny_block_cols(q) - 1) / skinny_block_cols(q) > 2147483647 || p.batch > 65535)
    return "grid too large";
  return std::nullopt;
}

Candidate GemmFamily::render(const spec::Spec& s, const contract::Contract& c, const GemmProblem& p,
                             const GemmParams& q) const {
  const std::string fn = "egg_" + c.name;
  std::map<std::string, std::string> var_of;  // spec name → launch() variable
  std::string out_var;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output)
      out_var = a.var;
    else
      var_of[a.source] = a.var;
  }
  const std::string ctype = contract::c_type(p.dtype);
  std::optional<GemmNativeEpilogue> native;
  if (q.structure == "lt_native") {
    native = native_epilogue(s, p);
    if (!native)
      throw InternalError("gemm: lt_native asked for an epilogue cuBLASLt cannot compute");
  }
  if (q.structure == "tc")
    if (auto why = tc_unsupported(p, q))
      throw InternalError("gemm: tc asked for an unsupported problem: " + *why);
  if (q.structure == "x3")
    if (auto why = x3_unsupported(p, q))
      throw InternalError("gemm: x3 asked for an unsupported problem: " + *why);
  if (q.structure == "wgx3")
    if (auto why = wgx3_unsupported(p, q))
      throw InternalError("gemm: wgx3 asked for an unsupported problem: " + *why);
  if (q.structure == "wg")
    if (auto why = wg_unsupported(p, q))
      throw InternalError("gemm: wg asked for an unsupported problem: " + *why);
  if (q.structure == "skinny")
    if (auto why = skinny_unsupported(p, q))
      throw InternalError("gemm: skinny asked for an unsupported problem: " + *why);

  // The epilogue program (everything after alpha*A.B that the kernel, not cuBLASLt, computes).
  json operands = json::array(), loads = json::array(), steps = json::array();
  std::string epilogue_text;
  std::map<std::string, std::string> value_of;
  std::set<std::string> used;
  auto load = [&](const std::string& name) {
    if (!value_of.count(name)) {
      const spec::Tensor* t = s.find_tensor(name);
      const std::string value = "l" + std::to_string(loads.size());
      loads.push_back({{"value", value},
                       {"ptr", var_of.at(name)},
                       {"offset", broadcast_offset(t->shape, p.out_shape)}});
      value_of[name] = value;
      used.insert(name);
    }
    return value_of.at(name);
  };
  std::string result = "acc";
  if (!native) {
    const std::string alpha = p.alpha == 1.0 ? "acc" : float_literal(p.alpha) + " * acc";
    if (!p.bias.empty()) {
      const std::string beta = p.beta == 1.0 ? "" : float_literal(p.beta) + " * ";
      steps.push_back({{"value", "g"}, {"expr", alpha + " + " + beta + load(p.bias)}});
      result = "g";
      epilogue_text = p.anchor->op == "linear" ? "bias" : "alpha/beta input";
    } else if (p.alpha != 1.0) {
      steps.push_back({{"value", "g"}, {"expr", alpha}});
      result = "g";
      epilogue_text = "alpha";
    }
    value_of[p.anchor->name] = result;
    for (const auto* n : p.epilogue) {
      for (const auto& a : n->args)
        if (a.kind == spec::Arg::Kind::node && s.find_tensor(a.node)) load(a.node);
      const std::string value = "t" + std::to_string(steps.size());
      steps.push_back({{"value", value}, {"expr", ops_.expression(s, *n, value_of)}});
      value_of[n->name] = value;
      result = value;
      epilogue_text += (epilogue_text.empty() ? "" : ", ") + n->op;
    }
  }
  if (epilogue_text.empty()) epilogue_text = "none";
  for (const auto& a : c.args)
    if (a.role != contract::Role::output && used.count(a.source))
      operands.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}});
  const bool kernel_epilogue = !native && !steps.empty();
  // The product kept in fp32 for the epilogue pass (one rounding): half types with an epilogue.
  const bool wide = (q.structure == "lt_epilogue" || q.structure == "cublas") && q.wide &&
                    kernel_epilogue && p.dtype != spec::DType::float32;
  if (q.wide && !wide)
    throw InternalError("gemm: a wide epilogue asked for where there is no half-type epilogue");

  const std::int64_t numel = p.batch * p.m * p.n;
  const std::string b_layout = p.b_nk ? "[N][K], used transposed" : "[K][N]";
  const std::string a_layout = p.a_km ? "[K][M], used transposed" : "[M][K]";
  json ctx = {
      {"fn", fn},
      {"helpers", ops_.helpers()},
      {"ctype", ctype},
      {"dtype", spec::dtype_name(p.dtype)},
      {"cuda_type", cuda_data_type(p.dtype)},
      {"wide", wide},
      {"keep_pool", keep_pool_.text},
      {"d_ctype", wide ? std::string("float") : ctype},
      {"d_cuda_type", wide ? std::string("CUDA_R_32F") : cuda_data_type(p.dtype)},
      {"elem_size", spec::dtype_size(p.dtype)},
      {"batch", p.batch},
      {"m", p.m},
      {"n", p.n},
      {"k", p.k},
      {"batched", p.batch > 1},
      {"stride_a", p.batch > 1 ? p.m * p.k : 0},
      {"stride_b", p.batch > 1 ? p.k * p.n : 0},
      {"stride_c", p.batch > 1 ? p.m * p.n : 0},
      {"b_nk", p.b_nk ? "true" : "false"},
      {"b_layout", b_layout},
      {"a_layout", a_layout},
      {"a_var", var_of.at(p.a)},
      {"b_var", var_of.at(p.b)},
      {"out_var", out_var},
      {"out_shape", spec::shape_string(p.out_shape)},
      {"numel", numel},
      {"index_t", numel < (std::int64_t(1) << 30) ? "int" : "long long"},  // i0 + step stays < 2^31
      {"operands", operands},
      {"loads", loads},
      {"steps", steps},
      {"result", result},
      {"epilogue_text", epilogue_text},
      {"epilogue_kernel", kernel_epilogue},
      {"epilogue_block", q.epilogue_block},
      {"vec", 16 / spec::dtype_size(p.dtype)},
      {"algo", q.algo},
      {"algo_request", std::max(kLtAlgoRequest, q.algo + 1)},
      {"splitk", q.splitk},
      {"split_k", q.splitk > 0},
      {"bm", q.bm},
      {"bn", q.bn},
      {"bk", q.bk},
      {"warps_m", q.warps_m},
      {"warps_n", q.warps_n},
      {"stages", q.stages},
      {"min_blocks", q.min_blocks},
      {"fold", q.fold},
      {"warpgroups", q.bm / 64},
      {"inflight", q.inflight},
      {"splits", std::max(1, q.splitk)},
      {"wgmma_type", p.dtype == spec::DType::bfloat16 ? "bf16" : "f16"},
      {"skinny_kwarps", q.kwarps},
      {"skinny_cols", q.cols},
      {"skinny_groups", 8 / std::max(1, q.kwarps)},
      {"kernel_ns", q.structure}};
  // cuBLASLt: its A is our B (row-major out = A.B is column-major out^T = B^T.A^T).
  ctx["trans_a"] = p.b_nk ? "CUBLAS_OP_T" : "CUBLAS_OP_N";
  ctx["la_rows"] = p.b_nk ? p.k : p.n;
  ctx["la_cols"] = p.b_nk ? p.n : p.k;
  ctx["la_ld"] = p.b_nk ? p.k : p.n;
  // ... and its B is our A: [M][K] row-major is column-major K x M; [K][M] (A.T) is M x K, used
  // transposed.
  ctx["trans_b"] = p.a_km ? "CUBLAS_OP_T" : "CUBLAS_OP_N";
  ctx["lb_rows"] = p.a_km ? p.m : p.k;
  ctx["lb_cols"] = p.a_km ? p.k : p.m;
  ctx["lb_ld"] = p.a_km ? p.m : p.k;
  // fp32 follows PyTorch (no TF32) unless the user opted in: PRECISION tf32 or bf16.
  std::string compute = "CUBLAS_COMPUTE_32F";
  if (p.dtype == spec::DType::float32 && (q.tf32 || precision_ == "tf32"))
    compute = "CUBLAS_COMPUTE_32F_FAST_TF32";
  if (p.dtype == spec::DType::float32 && precision_ == "bf16")
    compute = "CUBLAS_COMPUTE_32F_FAST_16BF";
  ctx["compute_type"] = compute;
  std::string lt_epi = "CUBLASLT_EPILOGUE_DEFAULT";
  if (native) {
    const bool bias = !native->bias.empty();
    if (native->activation == "relu")
      lt_epi = bias ? "CUBLASLT_EPILOGUE_RELU_BIAS" : "CUBLASLT_EPILOGUE_RELU";
    else if (native->activation == "gelu_tanh")
      lt_epi = bias ? "CUBLASLT_EPILOGUE_GELU_BIAS" : "CUBLASLT_EPILOGUE_GELU";
    else if (bias)
      lt_epi = "CUBLASLT_EPILOGUE_BIAS";
    ctx["has_bias"] = bias;
    if (bias) ctx["bias_var"] = var_of.at(native->bias);
    ctx["has_residual"] = !native->residual.empty();
    if (!native->residual.empty()) ctx["residual_var"] = var_of.at(native->residual);
    ctx["alpha"] = float_literal(native->alpha);
    std::string t = native->alpha != 1.0 ? "alpha" : "";
    if (bias) t += std::string(t.empty() ? "" : ", ") + "bias";
    if (!native->residual.empty()) t += std::string(t.empty() ? "" : ", ") + "residual (C)";
    if (!native->activation.empty()) t += std::string(t.empty() ? "" : ", ") + native->activation;
    epilogue_text = t.empty() ? "none" : t;
    ctx["epilogue_text"] = epilogue_text;
  } else {
    ctx["has_bias"] = false;
    ctx["has_residual"] = false;
    ctx["alpha"] = "1.0f";
  }
  ctx["lt_epilogue"] = lt_epi;
  ctx["epilogue"] = render::render(epilogue_.text, ctx, epilogue_.name);
  ctx["epilogue_pass"] = render::render(epilogue_pass_.text, ctx, epilogue_pass_.name);

  Candidate cand;
  const std::string shape = std::to_string(p.batch) + "x" + std::to_string(p.m) + "x" +
                            std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
                            spec::dtype_name(p.dtype);
  if (q.structure == "skinny") {
    cand.id = "gemm.skinny:w" + std::to_string(q.kwarps) + ":c" + std::to_string(q.cols);
    cand.summary = "own skinny GEMM " + shape + ", " + std::to_string(q.cols) +
                   " column(s) a warp, K over " + std::to_string(q.kwarps) +
                   " warp(s), epilogue in registers: " + epilogue_text;
    ctx["summary"] = cand.summary;
    cand.code.device_code = render::render(skinny_.text, ctx, skinny_.name);
    cand.code.launch_body = render::render(tc_launch_.text, ctx, tc_launch_.name);
  } else if (q.structure == "tc" || q.structure == "x3" || q.structure == "wgx3" ||
             q.structure == "wg") {
    const bool x3 = q.structure == "x3", wgx3 = q.structure == "wgx3", wg16 = q.structure == "wg";
    const std::string tile =
        std::to_string(q.bm) + "x" + std::to_string(q.bn) + "x" + std::to_string(q.bk);
    cand.id = wg16   ? "gemm.wg:" + tile + ":s" + std::to_string(q.stages)
              : wgx3 ? "gemm.wgx3:" + tile + ":s" + std::to_string(q.stages) +
                           (q.inflight > 1 ? ":i" + std::to_string(q.inflight) : "") +
                           (q.splitk > 1 ? ":sk" + std::to_string(q.splitk) : "")
                     : "gemm." + q.structure + ":" + tile + ":w" + std::to_string(q.warps_m) + "x" +
                           std::to_string(q.warps_n) + ":s" + std::to_string(q.stages) +
                           (q.min_blocks > 1 ? ":m" + std::to_string(q.min_blocks) : "") +
                           (x3 && q.fold > 1 ? ":f" + std::to_string(q.fold) : "");
    cand.summary = std::string(wg16   ? "own tensor-core GEMM on wgmma (sm_90a) "
                               : wgx3 ? "own 3xTF32 split-precision GEMM on wgmma (sm_90a) "
                               : x3   ? "own 3xTF32 split-precision GEMM "
                                      : "own tensor-core GEMM ") +
                   shape + ", tile " + tile + ", " + std::to_string(q.stages) + " stages" +
                   (wgx3 && q.splitk > 1 ? ", K in " + std::to_string(q.splitk) + " slices" : "") +
                   ", epilogue in registers: " + epilogue_text;
    ctx["summary"] = cand.summary;
    const render::Template& kernel = wg16 ? wg_ : wgx3 ? wgx3_ : x3 ? x3_ : tc_;
    cand.code.device_code = render::render(kernel.text, ctx, kernel.name);
    cand.code.launch_body = render::render(tc_launch_.text, ctx, tc_launch_.name);
  } else {  // the libraries: cuBLASLt (lt_native, lt_epilogue) or cuBLAS
    const bool blas = q.structure == "cublas";
    const std::string pass =
        wide ? ", its fp32 result then one epilogue kernel (one rounding): " + epilogue_text
        : kernel_epilogue ? ", then one in-place epilogue kernel: " + epilogue_text
                          : "";
    const std::string block = kernel_epilogue ? ":b" + std::to_string(q.epilogue_block) : "";
    if (blas) {
      cand.id = "gemm.cublas" + block + (wide ? ":f32" : "");
      cand.summary = "cuBLAS " + shape + " (" +
                     (p.batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx") +
                     ", PyTorch's route, its own kernel choice)" + pass;
    } else {
      const std::string split =
          q.splitk > 0 ? ", K split " + std::to_string(q.splitk) + " ways" : "";
      cand.id = "gemm." + q.structure + ":a" + std::to_string(q.algo) +
                (q.splitk > 0 ? ":sk" + std::to_string(q.splitk) : "") + block +
                (wide ? ":f32" : "");
      cand.summary = native ? "cuBLASLt " + shape + " with its epilogue (" + epilogue_text +
                                  "), heuristic algo #" + std::to_string(q.algo) + split
                            : "cuBLASLt " + shape + ", heuristic algo #" + std::to_string(q.algo) +
                                  split + pass;
    }
    if ((q.tf32 || precision_ == "tf32") && p.dtype == spec::DType::float32)
      cand.summary += ", TF32";
    if (precision_ == "bf16" && p.dtype == spec::DType::float32) cand.summary += ", bf16 math";
    ctx["summary"] = cand.summary;
    const render::Template& library = blas ? cublas_ : lt_;
    cand.code.device_code = render::render(library.text, ctx, library.name);
    cand.code.launch_body = render::render(lt_launch_.text, ctx, lt_launch_.name);
  }
  cand.params = q.to_json();
  return cand;
}

std::vector<GemmParams> gemm_tc_tuning_space(const GemmProblem& p) {
  // Expert prior: 128x128 tiles with 64x32 warp tiles and 3 stages keep Hopper's tensor cores busy
  // with mma.sync-class instructions; bigger tiles for big problems, smaller ones when the grid
  // would not fill the GPU.
  std::vector<GemmParams> space;
  auto add = [&](int bm, int bn, int bk, int wm, int wn, int stages, int min_blocks = 1) {
    GemmParams q;
    q.min_blocks = min_blocks;
    q.structure = "tc";
    q.bm = bm, q.bn = bn, q.bk = bk, q.warps_m = wm, q.warps_n = wn, q.stages = stages;
    if (!GemmFamily::tc_unsupported(p, q)) space.push_back(q);
  };
  const std::int64_t tiles = output_tiles(p, 128, 128);
  add(128, 128, 32, 2, 4, 3);
  add(128, 128, 32, 2, 4, 3, 2);
  if (tiles >= 264) {
    add(128, 256, 32, 2, 4, 3);
    add(256, 128, 32, 4, 2, 3);
  }
  add(128, 128, 32, 2, 4, 4);
  add(128, 128, 64, 2, 4, 3);
  add(128, 128, 32, 4, 2, 4);
  add(128, 64, 32, 2, 2, 4);
  add(64, 128, 32, 2, 2, 4);
  add(64, 64, 32, 2, 2, 4);
  return space;
}

GemmParams gemm_x3_default() {
  // 8 warps of 64x32 tiles (about 210 registers a thread, ptxas sm_90), products summed inside the
  // tensor cores over a whole k-tile (four k-steps) before each rounded add: the fastest of the
  // tiles measured on the H200 (docs/PERFORMANCE.md, fp32x3, 2026-12-05: 2.83 ms against 3.16
  // for 16 warps of 32x32 at 1024x8192x8192).
  GemmParams q;
  q.structure = "x3";
  q.bm = 128, q.bn = 128, q.bk = 32, q.warps_m = 2, q.warps_n = 4, q.stages = 3, q.fold = 4;
  return q;
}

std::vector<GemmParams> gemm_x3_tuning_space(const GemmProblem& p) {
  // Expert prior: three mma.sync per product make the kernel tensor-bound; the trade is between
  // warp tiles with more fragments per shared-memory load and enough warps an SM to hide the
  // dependent mma.sync. Register use by ptxas (sm_90): a 32x32 warp tile fits 128 registers (16
  // warps an SM, in one block or two), a 64x32 or 32x64 one takes about 210 (8 warps an SM).
  // Smaller tiles where the grid would not fill the GPU.
  std::vector<GemmParams> space;
  auto add = [&](int bm, int bn, int wm, int wn, int stages, int fold, int min_blocks = 1) {
    GemmParams q = gemm_x3_default();
    q.bm = bm, q.bn = bn, q.bk = 32, q.warps_m = wm, q.warps_n = wn, q.stages = stages;
    q.fold = fold, q.min_blocks = min_blocks;
    if (!GemmFamily::x3_unsupported(p, q)) space.push_back(q);
  };
  const std::int64_t tiles = output_tiles(p, 128, 128);
  add(128, 128, 4, 2, 3, 4);    // 32x64 warp tiles
  add(128, 128, 4, 4, 3, 4);    // 16 warps of 32x32: more warps to hide the mma latency
  add(64, 128, 2, 4, 3, 4, 2);  // two blocks an SM: one computes while the other waits
  add(128, 64, 4, 2, 3, 4, 2);
  add(128, 128, 2, 4, 4, 4);  // a fourth stage in flight
  add(128, 128, 2, 4, 3, 1);  // a rounded add after every k-step (the most accurate)
  if (tiles < 264) add(64, 64, 2, 2, 3, 4, 2);  // small grids: more blocks
  return space;
}

GemmParams gemm_wg_default() {
  // Two warpgroups of 64x256 (128 accumulators a thread: the widest wgmma, the fewest shared-
  // memory reads of A per product), four stages of 48 KiB; one block an SM.
  GemmParams q;
  q.structure = "wg";
  q.bm = 128, q.bn = 256, q.bk = 64, q.stages = 4, q.warps_m = 8, q.warps_n = 1;
  return q;
}

std::vector<GemmParams> gemm_wg_tuning_space(const GemmProblem& p) {
  // Expert prior: narrower tiles with more stages in flight, and one warpgroup of 64 rows where
  // the grid of 128x256 tiles would not fill the GPU.
  std::vector<GemmParams> space;
  auto add = [&](int bm, int bn, int stages) {
    GemmParams q = gemm_wg_default();
    q.bm = bm, q.bn = bn, q.stages = stages, q.warps_m = bm / 16;
    if (!GemmFamily::wg_unsupported(p, q)) space.push_back(q);
  };
  const std::int64_t tiles = output_tiles(p, 128, 256);
  add(128, 128, 6);
  add(128, 256, 3);
  add(128, 128, 4);
  if (tiles < 264) add(64, 256, 5);
  return space;
}

GemmParams gemm_wgx3_default() {
  // Two warpgroups of 64x128 (64 accumulators and 64 partial sums a thread), three raw stages:
  // 225 KiB of shared memory, one block an SM.
  GemmParams q;
  q.structure = "wgx3";
  q.bm = 128, q.bn = 128, q.bk = 32, q.stages = 3, q.fold = 4;
  q.warps_m = 8, q.warps_n = 1;
  return q;
}

namespace {

// The skinny kernel's configurations (K warps, columns a warp) in the order measured best on the
// H100 (bench/micro/skinny_gemm.cu, docs/PERFORMANCE.md 2026-12-07): K split over 4-8 warps
// first, whose blocks hide the latency of short columns (at 8 rows, 8 x 256 x 1280: 7.6 us cold
// against 20.5 for one warp a column pair); from 12 rows on, a column pair a warp with little
// split first (each A load then serves two columns: 16 x 4096 x 4096, 53 us against 78 for
// 8 warps of one column). Four columns a warp lost everywhere and is left out. A K split keeps
// at least a quarter of its warps' 16-byte steps busy.
std::vector<GemmParams> skinny_configs(const GemmProblem& p) {
  using Split = std::pair<int, int>;  // (K warps, columns a warp)
  const std::vector<Split> few = {{4, 2}, {8, 1}, {4, 1}, {2, 2}, {1, 2}, {2, 1}, {1, 1}};
  const std::vector<Split> many = {{1, 2}, {2, 2}, {4, 2}, {8, 1}, {4, 1}, {2, 1}, {1, 1}};
  std::vector<GemmParams> out;
  const std::int64_t vec = 16 / spec::dtype_size(p.dtype);
  for (const auto& [kwarps, cols] : p.m >= 12 ? many : few) {
    GemmParams q;
    q.structure = "skinny";
    q.kwarps = kwarps;
    q.cols = cols;
    if (kwarps > 1 && std::int64_t(kwarps) * 32 * vec > 4 * p.k) continue;
    if (!GemmFamily::skinny_unsupported(p, q)) out.push_back(q);
  }
  return out;
}

std::int64_t skinny_blocks(const GemmProblem& p, const GemmParams& q) {
  return p.batch * ((p.n + skinny_block_cols(q) - 1) / skinny_block_cols(q));
}

}  // namespace

std::optional<GemmParams> gemm_skinny_default(const GemmProblem& p) {
  const auto configs = skinny_configs(p);
  if (configs.empty()) return std::nullopt;
  // The first that gives every SM a block; else the one with the most blocks (the first of
  // equals).
  for (const auto& q : configs)
    if (skinny_blocks(p, q) >= kSms) return q;
  const GemmParams* most = &configs.front();
  for (const auto& q : configs)
    if (skinny_blocks(p, q) > skinny_blocks(p, *most)) most = &q;
  return *most;
}

std::vector<GemmParams> gemm_skinny_tuning_space(const GemmProblem& p) {
  const auto first = gemm_skinny_default(p);
  if (!first) return {};
  std::vector<GemmParams> out;
  for (const auto& q : skinny_configs(p))
    if (q.kwarps != first->kwarps || q.cols != first->cols) out.push_back(q);
  return out;
}

int wgx3_splits(const GemmProblem& p, int bm, int bn) {
  // Expert prior: a running sum of at most 256 k-tiles (K 8192; at 16384 k-tiles the rounded adds
  // lost to cuBLAS's split K by 8x on the H100, docs/PERFORMANCE.md 2026-12-05), and blocks for
  // the SMs (132 on the H100 and H200) when the output's tiles leave most of them idle, each slice
  // at least 8 k-tiles; then as many slices as make every one non-empty.
  const std::int64_t k_tiles = (p.k + 31) / 32;
  const std::int64_t tiles = output_tiles(p, bm, bn);
  std::int64_t splits = (k_tiles + kWgx3MaxRunTiles - 1) / kWgx3MaxRunTiles;
  if (tiles < kSms / 2) splits = std::max(splits, std::min(kSms / tiles, k_tiles / 8));
  splits = std::clamp<std::int64_t>(splits, 1, 256);
  while (splits > 1 && splits * p.batch * p.m * p.n * 4 > kWgx3MaxWorkspace) --splits;
  const std::int64_t per = (k_tiles + splits - 1) / splits;
  return static_cast<int>((k_tiles + per - 1) / per);
}

std::vector<GemmParams> gemm_wgx3_tuning_space(const GemmProblem& p) {
  // Expert prior (H100, docs/PERFORMANCE.md 2026-12-05): 128x128 with three stages and one wgmma
  // group in flight was the fastest on every shape measured; a second group in flight (the next
  // tile's products queued, 64 more registers a thread) was 6-11 % slower, smaller tiles with a
  // fourth stage 40-75 % slower. They stay in the space for shapes where the grid of 128x128 tiles
  // would not fill the GPU.
  std::vector<GemmParams> space;
  auto add = [&](int bm, int bn, int stages, int inflight = 1) {
    GemmParams q = gemm_wgx3_default();
    q.bm = bm, q.bn = bn, q.stages = stages, q.warps_m = bm / 16, q.inflight = inflight;
    q.splitk = wgx3_splits(p, bm, bn);
    if (!GemmFamily::wgx3_unsupported(p, q)) space.push_back(q);
  };
  const std::int64_t tiles = output_tiles(p, 128, 128);
  add(128, 128, 2);
  add(128, 128, 3, 2);
  add(128, 64, 4);
  add(128, 64, 4, 2);
  add(64, 128, 4);
  if (tiles < 264) add(64, 64, 4);
  return space;
}

std::optional<GemmParams> GemmFamily::split_default(const GemmProblem& p) const {
  if (precision_ != "fp32x3") return std::nullopt;
  GemmParams q = wgmma_ ? gemm_wgx3_default() : gemm_x3_default();
  if (wgmma_) q.splitk = wgx3_splits(p, q.bm, q.bn);
  if (wgmma_ ? wgx3_unsupported(p, q) : x3_unsupported(p, q)) return std::nullopt;
  return q;
}

std::vector<GemmParams> GemmFamily::split_tuning_space(const GemmProblem& p) const {
  if (!split_default(p)) return {};
  return wgmma_ ? gemm_wgx3_tuning_space(p) : gemm_x3_tuning_space(p);
}

std::vector<GemmParams> gemm_lt_tuning_space(const GemmProblem& p, const GemmParams& incumbent) {
  // The library floor, measured: the heuristic's ranked algos after the incumbent's (stage 1
  // measured index 0, its own first choice), so that stage 1 and 2 together time the top
  // kLtAlgoTuned; split-K comes with them wherever the heuristic offers it (it has the workspace).
  // When the output tiles do not fill the GPU (fewer than one 128x128 tile per SM of an H200) and K
  // is long, K split 2..16 ways on the first algo as well, early in the list.
  std::vector<GemmParams> space;
  auto algo = [&](int index) {
    GemmParams q = incumbent;
    q.algo = index;
    q.splitk = 0;
    if (q.algo != incumbent.algo || incumbent.splitk != 0) space.push_back(q);
  };
  const std::int64_t tiles = output_tiles(p, 128, 128);
  std::vector<int> splits;
  if (tiles < kSms && p.k >= 2048)
    for (int sk : {2, 4, 8, 16})
      if (p.k / sk >= 256 && tiles * sk <= 4 * kSms) splits.push_back(sk);
  int next = 0;
  for (; next < 3 && !splits.empty(); ++next) algo(next);
  for (int sk : splits) {
    GemmParams q = incumbent;
    q.algo = 0;
    q.splitk = sk;
    space.push_back(q);
  }
  for (; next < kLtAlgoTuned; ++next) algo(next);
  return space;
}

std::vector<GemmParams> GemmFamily::structure_params(const spec::Spec& s, const contract::Contract&,
                                                     const GemmProblem& p) const {
  std::vector<GemmParams> out;
  // PRECISION fp32x3: the user opted in to split-precision tensor-core math, which stage 1 then
  // measures first, against the library floor (cuBLASLt's SGEMM) second.
  if (auto split = split_default(p)) out.push_back(*split);
  // A few rows and nn.Linear's weight: the own skinny kernel, which streams B once with the
  // epilogue in registers, ahead of cuBLASLt, whose heuristic picks tiles that leave most SMs
  // idle on such shapes (a recurrent step of 8 rows: about 28 us a GEMM where torch.compile's
  // library kernels average 4.8, docs/PERFORMANCE.md); stage 1 measures the library floor beside
  // it.
  if (auto skinny = gemm_skinny_default(p)) out.push_back(*skinny);
  GemmParams q;
  const bool native = native_epilogue(s, p).has_value();
  if (native) {
    q.structure = "lt_native";
    out.push_back(q);
  }
  // cuBLAS's own entry point, PyTorch's route for mm/bmm, measured beside cuBLASLt's heuristic
  // (its kernel choice is cuBLAS's own): second for a plain GEMM; with an epilogue, after
  // cuBLASLt's routes (below), a half-type one from cuBLAS's fp32 result (rounded once, as
  // cuBLASLt's). Its dimensions and batch count are ints.
  const bool has_epilogue = !p.epilogue.empty() || !p.bias.empty() || p.alpha != 1.0;
  constexpr std::int64_t int_max = 2147483647;
  const bool blas_dims = p.m <= int_max && p.n <= int_max && p.k <= int_max && p.batch <= int_max;
  GemmParams blas;
  blas.structure = "cublas";
  if (!has_epilogue && blas_dims) out.push_back(blas);
  if (!native || has_epilogue) {
    q.structure = "lt_epilogue";
    // fp16/bf16 with element-wise ops after the GEMM: first the product kept in fp32 for them
    // (rounded once at the end; the plain route rounds the product to the half type and then the
    // epilogue's result again, which lost the accuracy rule on a bf16 Linear + GELU on the H100,
    // docs/PERFORMANCE.md 2026-12-05), then the plain one.
    if (p.dtype != spec::DType::float32 && !p.epilogue.empty()) {
      GemmParams w = q;
      w.wide = true;
      out.push_back(w);
    }
    out.push_back(q);
  }
  if (has_epilogue) {
    blas.wide = p.dtype != spec::DType::float32 && !p.epilogue.empty();
    // A half-type GEMM with only a bias or alpha: its fp16 product plus the bias rounds twice,
    // where cuBLASLt's native epilogue rounds once; that one stays on cuBLASLt.
    if (blas_dims && (p.dtype == spec::DType::float32 || blas.wide)) out.push_back(blas);
  }
  // Where every arch is sm_90a, the wgmma kernel after cuBLASLt's routes: on the H100 it verified
  // at about 55 % of cuBLASLt's speed on every shape measured (docs/PERFORMANCE.md, 2026-12-05), so
  // a small budget measures the library first.
  if (wgmma_ && !wg_unsupported(p, gemm_wg_default())) out.push_back(gemm_wg_default());
  GemmParams tc;
  tc.structure = "tc";
  if (!tc_unsupported(p, tc)) out.push_back(tc);
  return out;
}

namespace {

// cuBLASLt's route whose ranked algos stage 2 measures after an incumbent of another structure
// (cuBLAS, the skinny kernel): its native epilogue where it computes the whole epilogue, else the
// epilogue kernel, from the product kept in fp32 for a half-type epilogue (as stage 1 proposes it
// first); never the fp32 product on the native route, which has no epilogue kernel to read it.
GemmParams lt_route(const spec::Spec& s, const GemmProblem& p, bool tf32) {
  GemmParams lt;
  const bool native = GemmFamily::native_epilogue(s, p).has_value();
  lt.structure = native ? "lt_native" : "lt_epilogue";
  lt.tf32 = tf32;
  lt.wide = !native && p.dtype != spec::DType::float32 && !p.epilogue.empty();
  return lt;
}

}  // namespace

std::vector<GemmParams> GemmFamily::tuning_params(const spec::Spec& s, const contract::Contract&,
                                                  const GemmProblem& p, const GemmParams& base,
                                                  const std::string& bottleneck) const {
  (void)bottleneck;  // a GEMM is compute-bound at these sizes; the space is the same either way
  if (base.structure == "tc") return gemm_tc_tuning_space(p);
  if (base.structure == "wg") return gemm_wg_tuning_space(p);
  const bool skinny = gemm_skinny_default(p).has_value();
  // The skinny kernel's other configurations, then cuBLASLt's ranked algos.
  if (base.structure == "skinny") {
    std::vector<GemmParams> out = gemm_skinny_tuning_space(p);
    for (const auto& q : gemm_lt_tuning_space(p, lt_route(s, p, base.tf32))) out.push_back(q);
    return out;
  }
  if (base.structure == "x3" || base.structure == "wgx3") return split_tuning_space(p);
  if (base.structure == "lt_native" && !native_epilogue(s, p)) return {};
  // cuBLAS chooses its kernel itself: its epilogue kernel's other block, then cuBLASLt's ranked
  // algos after the one stage 1 measured.
  if (base.structure == "cublas") {
    std::vector<GemmParams> out;
    if (!p.epilogue.empty() || !p.bias.empty() || p.alpha != 1.0) {
      GemmParams q = base;
      q.epilogue_block = base.epilogue_block == 256 ? 512 : 256;
      out.push_back(q);
    }
    for (const auto& q : gemm_lt_tuning_space(p, lt_route(s, p, base.tf32))) out.push_back(q);
    return out;
  }
  // PRECISION fp32x3 with cuBLASLt ahead after stage 1: the split-precision tiles the user opted
  // in to are measured first all the same (stage 1 measured one of them), then cuBLASLt's algos.
  std::vector<GemmParams> out = split_tuning_space(p);
  for (const auto& q : gemm_lt_tuning_space(p, base)) out.push_back(q);
  if (base.structure == "lt_epilogue" && !p.epilogue.empty()) {
    GemmParams q = base;
    q.epilogue_block = base.epilogue_block == 256 ? 512 : 256;
    out.push_back(q);
  }
  // The fp16/bf16 wgmma kernel's tiles (sm_90a) after cuBLASLt's algos (slower where measured).
  if (wgmma_ && !wg_unsupported(p, gemm_wg_default()))
    for (const auto& q : gemm_wg_tuning_space(p)) out.push_back(q);
  // cuBLASLt ahead of the skinny kernel after stage 1: its other configurations last.
  if (skinny)
    for (const auto& q : gemm_skinny_tuning_space(p)) out.push_back(q);
  return out;
}

std::optional<GemmParams> GemmFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const GemmProblem&,
                                                      const GemmParams& f) const {
  // The simplest structure that always runs: cuBLASLt's first heuristic algo, plain epilogue
  // DEFAULT, the whole epilogue in the fused kernel.
  if (f.structure == "lt_epilogue" && f.algo == 0 && f.epilogue_block == 256) return std::nullopt;
  // A ranked index or split the heuristic does not offer for this problem: nothing to repair (the
  // incumbent, index 0, was measured already).
  if (f.structure != "tc" && f.structure != "x3" && f.structure != "wgx3" && f.structure != "wg" &&
      f.structure != "skinny" && (f.algo > 0 || f.splitk > 0))
    return std::nullopt;
  GemmParams q;
  q.structure = "lt_epilogue";
  q.tf32 = f.tf32;
  return q;
}

}  // namespace egg::backend::builtin
