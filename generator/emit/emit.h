// Emission: renders the .cu and the public header from the contract and a candidate, and writes
// the outputs (atomically, only when changed) with the manifest and the depfile.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "contract/contract.h"
#include "render/template.h"

namespace egg::emit {

// The generated sources of one kernel.
struct Sources {
  std::string cu;
  std::string header;
};

// Renders templates/kernel.cu.tmpl and templates/header.h.tmpl.
Sources render_sources(const std::filesystem::path& data_dir, const contract::Contract& contract,
                       const backend::Candidate& winner, const std::string& backend_name,
                       const std::string& op_file_name);
// The contract templates' names and contents (part of the cache key).
std::vector<render::Template> contract_templates(const std::filesystem::path& data_dir);

// Where a kernel's outputs go inside the output folder.
struct OutputPaths {
  std::filesystem::path cu, header, manifest, depfile;
};
OutputPaths output_paths(const std::filesystem::path& out_dir, const std::string& name);

// Makefile-syntax depfile: "<cu>: <deps...>" with spaces escaped.
std::string depfile_text(const std::filesystem::path& target, const std::vector<std::string>& deps);

// Writes every output; returns the paths that changed.
std::vector<std::filesystem::path> write_outputs(const OutputPaths& paths, const Sources& sources,
                                                 const nlohmann::json& manifest,
                                                 const std::string& depfile);

}  // namespace egg::emit
