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
  // `before` comes from a manifest on disk, which may hold anything (fuzz_manifest): a field is
  // unchanged only where both sides are objects with the same "sha256" string.
  auto digest = [](const nlohmann::json& fields, const std::string& name) -> std::string {
    if (!fields.is_object()) return "";
    const auto field = fields.find(name);
    if (field == fields.end() || !field->is_object()) return "";
    const auto sha = field->find("sha256");
    return sha != field->end() && sha->is_string() ? sha->get<std::string>() : "";
  };
  std::vector<std::string> changed;
  if (after.is_object())
    for (auto it = after.begin(); it != after.end(); ++it) {
      const std::string now = digest(after, it.key());
      if (now.empty() || digest(before, it.key()) != now) changed.push_back(it.key());
    }
  if (before.is_object())
    for (auto it = before.begin(); it != before.end(); ++it)
      if (!after.is_object() || !after.contains(it.key())) changed.push_back(it.key());
  return changed;
}

}  // namespace egg::cache
