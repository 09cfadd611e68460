#include "harness_spec.h"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace egg::harness {

int dtype_size(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "int8" || dtype == "uint8" || dtype == "bool") return 1;
  return 0;
}

std::int64_t TensorDecl::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::int64_t TensorDecl::bytes() const { return numel() * dtype_size(dtype); }

HarnessSpec load_harness_spec(const std::filesystem::path& spec_json) {
  std::ifstream in(spec_json);
  if (!in) throw std::runtime_error(spec_json.string() + ": cannot read the spec");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(spec_json.string() + ": not valid JSON: " + e.what());
  }
  HarnessSpec spec;
  spec.spec_dir = std::filesystem::absolute(spec_json).parent_path();
  auto where = [&](const std::string& field) {
    return spec_json.string() + ": field '" + field + "'";
  };
  try {
    if (j.value("schema", 0) != 2) throw std::runtime_error(where("schema") + " must be 2");
    auto decls = [&](const char* key, std::vector<TensorDecl>& into) {
      for (const auto& t : j.value(key, nlohmann::json::array())) {
        TensorDecl d{t.at("name").get<std::string>(),
                     t.at("shape").get<std::vector<std::int64_t>>(),
                     t.at("dtype").get<std::string>()};
        if (dtype_size(d.dtype) == 0)
          throw std::runtime_error(where(std::string(key) + "." + d.name) + ": unknown dtype " +
                                   d.dtype);
        into.push_back(std::move(d));
      }
    };
    decls("inputs", spec.inputs);
    decls("params", spec.params);
    decls("outputs", spec.outputs);
    if (spec.outputs.empty()) throw std::runtime_error(where("outputs") + " is empty");
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(spec_json.string() + ": malformed spec: " + e.what());
  }
  return spec;
}

}  // namespace egg::harness
