#include "emit/emit.h"

#include "util/files.h"
#include "version.h"

namespace egg::emit {

std::vector<render::Template> contract_templates(const std::filesystem::path& data_dir) {
  return {render::load_template(data_dir, "kernel.cu.tmpl"),
          render::load_template(data_dir, "header.h.tmpl")};
}

Sources render_sources(const std::filesystem::path& data_dir, const contract::Contract& contract,
                       const backend::Candidate& winner, const std::string& backend_name,
                       const std::string& op_file_name) {
  auto templates = contract_templates(data_dir);
  nlohmann::json ctx = contract::template_context(contract);
  ctx["egg_version"] = kEggVersion;
  ctx["backend"] = backend_name;
  ctx["candidate_id"] = winner.id;
  ctx["op_file_name"] = op_file_name;
  ctx["device_code"] = winner.code.device_code;
  ctx["launch_body"] = winner.code.launch_body;
  return {render::render(templates[0].text, ctx, templates[0].name),
          render::render(templates[1].text, ctx, templates[1].name)};
}

OutputPaths output_paths(const std::filesystem::path& out_dir, const std::string& name) {
  return {out_dir / (name + ".cu"), out_dir / "include" / "egg" / (name + ".h"),
          out_dir / "manifest.json", out_dir / (name + ".d")};
}

std::string depfile_text(const std::filesystem::path& target,
                         const std::vector<std::string>& deps) {
  auto escape = [](const std::string& p) {
    std::string out;
    for (char c : p) {
      if (c == ' ' || c == '#') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string text = escape(target.string()) + ":";
  for (const auto& d : deps) text += " \\\n  " + escape(d);
  return text + "\n";
}

std::vector<std::filesystem::path> write_outputs(const OutputPaths& paths, const Sources& sources,
                                                 const nlohmann::json& manifest,
                                                 const std::string& depfile) {
  std::vector<std::filesystem::path> changed;
  auto put = [&](const std::filesystem::path& p, const std::string& content) {
    if (write_if_changed(p, content) == WriteOutcome::written) changed.push_back(p);
  };
  // Header first, .cu next: a build that sees the new .cu also sees the header it includes.
  put(paths.header, sources.header);
  put(paths.cu, sources.cu);
  put(paths.manifest, manifest.dump(2) + "\n");
  put(paths.depfile, depfile);
  return changed;
}

}  // namespace egg::emit
