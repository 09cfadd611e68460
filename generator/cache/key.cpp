#include "cache/key.h"

#include "util/sha256.h"

namespace egg::cache {

void KeyBuilder::add(const std::string& name, const std::string& value) {
  fields_.emplace_back(name, value);
}

std::string KeyBuilder::key() const {
  FieldHasher h;
  for (const auto& [name, value] : fields_) h.add(name, value);
  return h.finish();
}

nlohmann::json KeyBuilder::describe() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : fields_) {
    std::string preview = value.size() <= 80 ? value : value.substr(0, 77) + "...";
    j[name] = {{"sha256", sha256_hex(value)}, {"bytes", value.size()}, {"preview", preview}};
  }
  return j;
}

std::vector<std::string> changed_fields(const nlohmann::json& before, const nlohmann::json& after) {
  std::vector<std::string> changed;
  for (auto it = after.begin(); it != after.end(); ++it) {
    if (!before.contains(it.key()) ||
        before.at(it.key()).value("sha256", "") != it->value("sha256", ""))
      changed.push_back(it.key());
  }
  for (auto it = before.begin(); it != before.end(); ++it)
    if (!after.contains(it.key())) changed.push_back(it.key());
  return changed;
}

}  // namespace egg::cache
