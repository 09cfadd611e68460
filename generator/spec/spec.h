// The spec: an op's graph with shapes and dtypes, as the Python frontend writes it (docs/SPEC.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace egg::spec {

using Shape = std::vector<std::int64_t>;

// Element types the spec names.
enum class DType { float32, float16, bfloat16, float64, int64, int32, int8, uint8, boolean };

// "float32" etc. → DType; nullopt for names the spec does not define.
std::optional<DType> parse_dtype(const std::string& name);
// The spec's name of a dtype.
std::string dtype_name(DType d);
// Bytes per element.
int dtype_size(DType d);
// True for float32, float16, bfloat16, float64.
bool is_floating(DType d);

// A named tensor: an input, a parameter, a buffer or an output.
struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::float32;
  std::string kind;  // params only: "parameter" or "buffer"
};

// One argument of a node.
struct Arg {
  enum class Kind { node, scalar, boolean, none, list, other };
  Kind kind = Kind::none;
  std::string node;        // kind == node
  double scalar = 0.0;     // kind == scalar
  bool flag = false;       // kind == boolean
  std::vector<Arg> items;  // kind == list
  nlohmann::json raw;      // kind == other: string, dtype, slice, ellipsis, dict (kept for the key)
};

// One op of the graph.
struct Node {
  std::string name;
  std::string op;      // canonical name, or the qualified target for ops the frontend does not know
  std::string target;  // what the user wrote, e.g. torch.relu
  std::vector<Arg> args;
  nlohmann::json attrs = nlohmann::json::object();
  Shape shape;
  DType dtype = DType::float32;
  SourceLocation where;  // file, line, op (for messages only)
  std::string code;      // the source line (for messages only)
};

// A graph output.
struct Output {
  std::string name;
  std::string node;
  Shape shape;
  DType dtype = DType::float32;
};

// The whole spec.
struct Spec {
  int schema = 1;
  std::string op_file;
  std::string model_class;
  nlohmann::json init_inputs = nlohmann::json::array();
  std::vector<Tensor> inputs;
  std::vector<Tensor> params;
  std::vector<Node> nodes;
  std::vector<Output> outputs;
  std::vector<std::string> deps;
  nlohmann::json reference = nlohmann::json::object();

  // The node with this name, or nullptr (inputs and params are not nodes).
  const Node* find_node(const std::string& name) const;
  // The input or param with this name, or nullptr.
  const Tensor* find_tensor(const std::string& name) const;
  // The shape of the value with this name (a node, an input or a param), or nullptr.
  const Shape* shape_of(const std::string& name) const;
  // The dtype of the value with this name, or nullopt.
  std::optional<DType> dtype_of(const std::string& name) const;
};

// The schema version this generator reads.
inline constexpr int kSchemaVersion = 2;

// Parses spec JSON; a malformed spec is an InternalError (the frontend wrote it).
Spec parse_spec(const nlohmann::json& j);
// Reads and parses spec.json.
Spec read_spec(const std::filesystem::path& path);
// The spec without what does not change the kernel (paths, lines, source text, deps): cache key
// input.
nlohmann::json normalized(const Spec& spec);
// Element count of a shape.
std::int64_t numel(const Shape& shape);
// "[4096, 8192]".
std::string shape_string(const Shape& shape);

}  // namespace egg::spec
