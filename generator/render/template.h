// A small Mustache-like template engine for CUDA and header templates.
//
// Grammar (a subset of Mustache, no HTML escaping since the output is code):
//   {{name}}            the value of `name` (dotted paths allowed); a missing name is an error
//   {{#name}}...{{/name}}  repeated for each item of a list, or once if `name` is true / an object
//   {{^name}}...{{/name}}  once if `name` is missing, false, null or an empty list
//   {{! comment }}      dropped
// A line holding only a section, inverted, closing or comment tag is removed entirely.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace egg::render {

// Renders `text` with `context`; `origin` names the template in errors (file name).
// Throws InternalError naming origin and line on a syntax error or a missing variable.
std::string render(const std::string& text, const nlohmann::json& context,
                   const std::string& origin = "<template>");

// A template loaded from the data folder, with its contents (the cache key hashes them).
struct Template {
  std::string name;  // path relative to the templates folder, e.g. "elementwise/kernel.cu.tmpl"
  std::string text;
};

// Loads `templates/<name>` from the data folder; a missing file is an InternalError that says to
// check --data-dir.
Template load_template(const std::filesystem::path& data_dir, const std::string& name);

}  // namespace egg::render
