#include "contract/contract.h"

#include <set>

namespace egg::contract {
namespace {

using nlohmann::json;

const std::set<std::string>& reserved() {
  static const std::set<std::string> words = {
      "stream",   "launch",   "forward",   "detail",  "n",        "auto",   "bool",      "break",
      "case",     "char",     "class",     "const",   "double",   "else",   "enum",      "float",
      "for",      "if",       "int",       "long",    "new",      "delete", "namespace", "return",
      "short",    "signed",   "sizeof",    "static",  "struct",   "switch", "template",  "this",
      "union",    "unsigned", "void",      "while",   "default",  "do",     "goto",      "operator",
      "private",  "public",   "protected", "using",   "virtual",  "try",    "catch",     "throw",
      "typename", "true",     "false",     "nullptr", "register", "extern"};
  return words;
}

// Names the kernel templates give their own parameters and locals in the functions that also take
// the tensors' pointers (the element-wise program's index `i` and results `r0`, `r1`, ...; the
// GEMM's `A`, `B`, `out`): a tensor named so gets a trailing underscore.
bool template_name(const std::string& var) {
  static const std::set<std::string> names = {
      "i", "j",   "u",    "i0",   "tile",      "count",   "kTile", "stride", "A",
      "B", "out", "grid", "smem", "vec_store", "partial", "total", "blocks"};
  if (names.count(var)) return true;
  return var.size() > 1 && var[0] == 'r' &&
         var.find_first_not_of("0123456789", 1) == std::string::npos;
}

std::string camel(const std::string& var) {
  std::string out;
  bool up = true;
  for (char c : var) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

bool valid_kernel_name(const std::string& name) {
  if (name.empty() || c_identifier(name) != name || reserved().count(name)) return false;
  return name.rfind("__", 0) != 0;
}

std::string c_type(spec::DType dtype) {
  switch (dtype) {
    case spec::DType::float32:
      return "float";
    case spec::DType::float16:
      return "__half";
    case spec::DType::bfloat16:
      return "__nv_bfloat16";
    case spec::DType::float64:
      return "double";
    case spec::DType::int64:
      return "std::int64_t";
    case spec::DType::int32:
      return "std::int32_t";
    case spec::DType::int8:
      return "std::int8_t";
    case spec::DType::uint8:
      return "std::uint8_t";
    case spec::DType::boolean:
      return "bool";
  }
  return "void";
}

std::string torch_type(spec::DType dtype) {
  switch (dtype) {
    case spec::DType::float32:
      return "torch::kFloat";
    case spec::DType::float16:
      return "torch::kHalf";
    case spec::DType::bfloat16:
      return "torch::kBFloat16";
    case spec::DType::float64:
      return "torch::kDouble";
    case spec::DType::int64:
      return "torch::kLong";
    case spec::DType::int32:
      return "torch::kInt";
    case spec::DType::int8:
      return "torch::kChar";
    case spec::DType::uint8:
      return "torch::kByte";
    case spec::DType::boolean:
      return "torch::kBool";
  }
  return "torch::kFloat";
}

Contract derive(const spec::Spec& spec, const std::string& name) {
  Contract c;
  c.name = name;
  std::set<std::string> used;
  auto unique_var = [&](const std::string& wanted) {
    std::string var = c_identifier(wanted);
    if (reserved().count(var) || template_name(var)) var += "_";
    std::string candidate = var;
    for (int k = 2; used.count(candidate); ++k) candidate = var + "_" + std::to_string(k);
    used.insert(candidate);
    return candidate;
  };
  for (const auto& t : spec.inputs)
    c.args.push_back(
        {Role::input, unique_var(t.name), t.name, t.dtype, t.shape, t.name, t.kind == "rng"});
  for (const auto& t : spec.params)
    c.args.push_back({Role::param, unique_var(t.name), t.name, t.dtype, t.shape, t.name});
  for (const auto& o : spec.outputs)
    c.args.push_back({Role::output, unique_var(o.name), o.name, o.dtype, o.shape, o.node});
  return c;
}

json template_context(const Contract& contract) {
  json params = json::array();
  json tensors = json::array();
  json forward_args = json::array();
  json outputs = json::array();
  json rng_args = json::array();
  int index = 0;
  std::string first_arg;
  for (const auto& a : contract.args) {
    const bool out = a.role == Role::output;
    const std::string ctype = c_type(a.dtype);
    const std::string pointer = out ? ctype + "*" : "const " + ctype + "*";
    std::string shape_list;
    for (size_t i = 0; i < a.shape.size(); ++i)
      shape_list += (i ? ", " : "") + std::to_string(a.shape[i]);
    json t = {{"var", a.var},
              {"tensor_name", a.tensor_name},
              {"camel", camel(a.var)},
              {"dtype", spec::dtype_name(a.dtype)},
              {"torch_dtype", torch_type(a.dtype)},
              {"shape_text", spec::shape_string(a.shape)},
              // A 0-d tensor's shape array still needs one element to be valid C++.
              {"shape_list", shape_list.empty() ? "" : shape_list},
              {"numel", spec::numel(a.shape)},
              {"role", a.rng                   ? "random state"
                       : a.role == Role::input ? "input"
                       : a.role == Role::param ? "parameter"
                                               : "output"}};
    tensors.push_back(t);
    params.push_back({{"decl", pointer + " " + a.var},
                      {"var", a.var},
                      {"pointer_type", pointer},
                      {"index", index++},
                      {"torch_data", "static_cast<" + pointer + ">(" + a.var + ".data_ptr())"}});
    if (out) {
      outputs.push_back(t);
    } else if (a.rng) {
      rng_args.push_back(t);
    } else {
      if (first_arg.empty()) first_arg = a.var;
      forward_args.push_back(t);
    }
  }
  for (size_t i = 0; i < forward_args.size(); ++i)
    forward_args[i]["sep"] = i + 1 < forward_args.size() ? ", " : "";
  for (auto& f : forward_args) f["first_arg"] = first_arg;
  for (auto& r : rng_args) r["first_arg"] = first_arg;
  std::string result;
  if (outputs.size() == 1) {
    result = outputs[0]["var"].get<std::string>();
  } else {
    result = "std::vector<torch::Tensor>{";
    for (size_t i = 0; i < outputs.size(); ++i)
      result += (i ? ", " : "") + outputs[i]["var"].get<std::string>();
    result += "}";
  }
  return {{"name", contract.name},
          {"params", params},
          {"tensors", tensors},
          {"forward_args", forward_args},
          {"outputs", outputs},
          {"rng_args", rng_args},
          {"has_rng", !rng_args.empty()},
          {"first_arg", first_arg},
          {"forward_return", outputs.size() == 1 ? "torch::Tensor" : "std::vector<torch::Tensor>"},
          {"forward_result", result}};
}

}  // namespace egg::contract
