#include "refs.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

namespace egg::harness {
namespace fs = std::filesystem;
namespace {

std::vector<char> read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the reference file");
  // One read of the whole file: istreambuf_iterator runs at a few hundred MB/s.
  std::vector<char> data(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(data.data(), static_cast<std::streamsize>(data.size())))
    throw std::runtime_error(file.string() + ": read error");
  return data;
}

c10::IValue load(const fs::path& file) {
  try {
    return torch::jit::pickle_load(read_file(file));
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": not a torch.save file: " + e.what_without_backtrace());
  }
}

at::ScalarType scalar_type(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "float16") return at::kHalf;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float64") return at::kDouble;
  if (dtype == "int64") return at::kLong;
  if (dtype == "int32") return at::kInt;
  if (dtype == "int8") return at::kChar;
  if (dtype == "uint8") return at::kByte;
  if (dtype == "bool") return at::kBool;
  throw std::runtime_error("unknown dtype " + dtype);
}

std::string shape_text(at::IntArrayRef s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

HostTensor to_host(const c10::IValue& v, const TensorDecl& decl, const std::string& where) {
  if (!v.isTensor()) throw std::runtime_error(where + ": '" + decl.name + "' is not a tensor");
  at::Tensor t = v.toTensor();
  if (t.sizes() != at::IntArrayRef(decl.shape))
    throw std::runtime_error(where + ": '" + decl.name + "' has shape " + shape_text(t.sizes()) +
                             ", the spec says " + shape_text(decl.shape));
  if (t.scalar_type() != scalar_type(decl.dtype))
    throw std::runtime_error(where + ": '" + decl.name + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
                             ", the spec says " + decl.dtype);
  t = t.to(at::kCPU).contiguous();
  HostTensor h{decl.dtype, decl.shape, std::vector<std::byte>(t.nbytes())};
  std::memcpy(h.data.data(), t.data_ptr(), t.nbytes());
  return h;
}

std::vector<HostTensor> tensor_list(const c10::IValue& v, const std::vector<TensorDecl>& decls,
                                    const std::string& where) {
  if (!v.isList() && !v.isTuple()) throw std::runtime_error(where + " is not a list of tensors");
  const std::vector<c10::IValue> items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
  if (items.size() != decls.size())
    throw std::runtime_error(where + " has " + std::to_string(items.size()) + " tensors, the spec declares " +
                             std::to_string(decls.size()));
  std::vector<HostTensor> out;
  for (std::size_t i = 0; i < items.size(); ++i) out.push_back(to_host(items[i], decls[i], where));
  return out;
}

c10::IValue dict_get(const c10::IValue& dict, const std::string& key, const std::string& where) {
  if (!dict.isGenericDict()) throw std::runtime_error(where + " is not a dict");
  const auto d = dict.toGenericDict();
  const auto it = d.find(c10::IValue(key));
  if (it == d.end()) throw std::runtime_error(where + " has no key '" + key + "'");
  return it->value();
}

at::Tensor as_tensor(const HostTensor& t) {
  return at::from_blob(const_cast<std::byte*>(t.data.data()), t.shape,
                       at::TensorOptions().dtype(scalar_type(t.dtype)));
}

}  // namespace

std::vector<HostTensor> load_params(const HarnessSpec& spec) {
  std::vector<HostTensor> out;
  if (spec.params.empty()) return out;
  const std::string where = spec.params_file.string();
  const c10::IValue dict = load(spec.params_file);
  for (const auto& decl : spec.params) out.push_back(to_host(dict_get(dict, decl.name, where), decl, where));
  return out;
}

RefSetData load_set(const HarnessSpec& spec, const RefSet& set) {
  const std::string where = set.file.string();
  const c10::IValue dict = load(set.file);
  return {tensor_list(dict_get(dict, "inputs", where), spec.inputs, where + " inputs"),
          tensor_list(dict_get(dict, "outputs", where), spec.outputs, where + " outputs")};
}

std::vector<double> to_double(const HostTensor& t) {
  const at::Tensor d = as_tensor(t).to(at::kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return {p, p + d.numel()};
}

void save_tensor(const HostTensor& t, const fs::path& file) {
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(as_tensor(t).clone()));
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace egg::harness
