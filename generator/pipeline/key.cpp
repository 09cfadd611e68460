#include "pipeline/key.h"

#include "base/quote.h"
#include "emit/emit.h"
#include "util/sha256.h"
#include "version.h"

namespace egg::pipeline {

cache::KeyBuilder build_key(const GenerateOptions& o, const std::string& name, const spec::Spec& s,
                            const backend::Backend& backend, const std::vector<std::string>& arches,
                            const std::vector<std::string>& prompt_texts,
                            const std::string& nvcc_version) {
  cache::KeyBuilder key;
  key.add("cache_schema", std::to_string(cache::kCacheSchema));
  key.add("generator", std::string("egg-gen ") + kEggVersion);
  key.add("name", name);
  key.add("spec", spec::normalized(s).dump());
  std::string arch_list;
  for (const auto& a : arches) arch_list += a + ";";
  key.add("arches", arch_list);
  key.add("backend", backend.name());
  key.add("model", o.model);
  std::string opts;
  for (const auto& [k, v] : o.options) opts += k + "=" + v + ";";
  opts += "atol=" + exact_number(o.atol) + ";rtol=" + exact_number(o.rtol) + ";";
  key.add("options", opts);
  std::string templates;
  for (const auto& t : emit::contract_templates(o.data_dir))
    templates += t.name + ":" + sha256_hex(t.text) + ";";
  for (const auto& [tname, text] : backend.key_inputs())
    templates += tname + ":" + sha256_hex(text) + ";";
  key.add("templates", templates);
  std::string prompts;
  for (const auto& p : prompt_texts) prompts += sha256_hex(p) + ";";
  key.add("prompts", prompts);
  key.add("nvcc", nvcc_version);
  return key;
}

}  // namespace egg::pipeline
