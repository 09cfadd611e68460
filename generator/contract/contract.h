// The kernel contract: the typed launch() signature EGG derives from a spec. Backends write the
// body of launch(); EGG owns the signature, the header and the candidate entry point.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace egg::contract {

// Where an argument of launch() comes from.
enum class Role { input, param, output };

// One pointer argument of launch().
struct LaunchArg {
  Role role = Role::input;
  std::string var;          // C identifier used in launch(), e.g. "x", "norm_weight", "out0"
  std::string tensor_name;  // the spec's name, e.g. "norm.weight"
  spec::DType dtype = spec::DType::float32;
  spec::Shape shape;
  std::string source;  // the spec value it holds: input/param name, or the output's node
  bool rng = false;    // the input egg_rng (spec kind "rng"): [seed, offset] of the dropout masks
};

// launch()'s arguments in order: inputs, params, outputs.
struct Contract {
  std::string name;  // kernel name (a C identifier)
  std::vector<LaunchArg> args;
};

// Derives the contract; a dtype launch() cannot carry is a UserError naming the tensor.
Contract derive(const spec::Spec& spec, const std::string& name);
// The C type of an element, e.g. "float", "__half", "__nv_bfloat16".
std::string c_type(spec::DType dtype);
// The torch::ScalarType spelling, e.g. "torch::kFloat".
std::string torch_type(spec::DType dtype);
// Turns a name into a C identifier (dots and dashes → '_', leading digit prefixed).
std::string c_identifier(const std::string& name);
// True for a valid kernel name: a C identifier that is not a C++ keyword.
bool valid_kernel_name(const std::string& name);
// Template context for header.h.tmpl and kernel.cu.tmpl ("params", "tensors", "outputs", ...).
nlohmann::json template_context(const Contract& contract);

}  // namespace egg::contract
