#include "backend/builtin/plan_code.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

// Splits device code into its #include lines and the rest.
std::pair<std::vector<std::string>, std::string> split_includes(const std::string& code) {
  std::vector<std::string> includes;
  std::string rest;
  std::istringstream in(code);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 8, "#include") == 0)
      includes.push_back(line.substr(first));
    else
      rest += line + "\n";
  }
  return {includes, rest};
}

// True when `o` of a segment's sub-spec is one of the graph's outputs (it keeps the graph's name).
bool is_graph_output(const spec::Spec& s, const spec::Output& o) {
  for (const auto& g : s.outputs)
    if (g.name == o.name && g.node == o.node) return true;
  return false;
}

bool identifier_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

// A segment's code in a form two segments can be compared in: its name (a prefix of its
// functions' names) and each of `vars` (whole identifiers, by position) blanked.
// Equal forms mean the same code but for those names, so one compiled copy serves both.
std::string code_shape(std::string text, const std::string& name,
                       const std::vector<std::string>& vars) {
  for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    text.replace(at, name.size(), "\x01");
  for (size_t v = 0; v < vars.size(); ++v) {
    const std::string& var = vars[v];
    const std::string mark = "\x02" + std::to_string(v) + "\x03";
    for (auto at = text.find(var); at != std::string::npos; at = text.find(var, at + 1)) {
      const bool starts = at == 0 || !identifier_char(text[at - 1]);
      const bool ends = at + var.size() == text.size() || !identifier_char(text[at + var.size()]);
      if (!starts || !ends) continue;
      text.replace(at, var.size(), mark);
      at += mark.size() - 1;
    }
  }
  return text;
}

// A buffer of the launch body holding one intermediate value.
struct Buffer {
  std::string value, var;
  size_t producer = 0, last_use = 0;
};

}  // namespace

PlanCode::PlanCode(const std::filesystem::path& data_dir)
    : device_(render::load_template(data_dir, "plan/device.cu.tmpl")),
      launch_(render::load_template(data_dir, "plan/launch.tmpl")),
      keep_pool_(render::load_template(data_dir, "common/keep_pool.cuh")) {}

std::vector<std::pair<std::string, std::string>> PlanCode::key_inputs() const {
  return {{device_.name, device_.text},
          {launch_.name, launch_.text},
          {keep_pool_.name, keep_pool_.text}};
}

std::string PlanCode::segment_name(const std::string& kernel, size_t k) {
  return kernel + "_s" + std::to_string(k);
}

contract::Contract PlanCode::segment_contract(const Plan& plan, size_t k,
                                              const std::string& kernel) {
  return contract::derive(plan.segments.at(k).spec, segment_name(kernel, k));
}

Candidate PlanCode::combine(const spec::Spec& s, const contract::Contract& c, const Plan& plan,
                            const std::vector<Candidate>& parts) const {
  if (parts.size() != plan.segments.size())
    throw InternalError("plan: one candidate per segment expected");
  // Top-level names: launch() arguments, then local variables that avoid them.
  std::set<std::string> taken;
  std::map<std::string, std::string> pointer_of;  // spec value → C expression in launch()
  std::map<std::string, std::string> output_var;  // graph output name → launch() argument
  for (const auto& a : c.args) {
    taken.insert(a.var);
    if (a.role == contract::Role::output) {
      output_var[a.tensor_name] = a.var;
      pointer_of.emplace(a.source, a.var);
    } else {
      pointer_of[a.source] = a.var;
    }
  }
  auto local = [&](const std::string& wanted) {
    std::string var = wanted;
    for (int k = 2; taken.count(var); ++k) var = wanted + "_" + std::to_string(k);
    taken.insert(var);
    return var;
  };
  const std::string err = local("egg_err");

  // A view read in place of its source (the same bytes): the source is what a segment reads.
  // A view that is a graph output: its source is written straight into the output.
  std::map<std::string, std::string> source_of;
  for (const auto& a : plan.aliases) {
    source_of[a.value] = a.source;
    const auto out = pointer_of.find(a.value);
    if (out != pointer_of.end()) pointer_of[a.source] = out->second;
  }
  auto reads_value = [&](const PlanSegment& seg, const std::string& value) {
    for (const auto& r : seg.reads) {
      const auto alias = source_of.find(r);
      if (r == value || (alias != source_of.end() && alias->second == value)) return true;
    }
    return false;
  };

  // Intermediates: a buffer for every value a segment writes that is not a graph output.
  std::vector<Buffer> buffers;
  json buffer_ctx = json::array();
  std::int64_t buffer_bytes = 0;  // all of them: what the memory pool keeps between calls
  for (size_t k = 0; k < plan.segments.size(); ++k)
    for (const auto& o : plan.segments[k].spec.outputs) {
      if (is_graph_output(s, o) || pointer_of.count(o.node)) continue;
      Buffer b{o.node, local("egg_tmp_" + contract::c_identifier(o.node)), k, k};
      for (size_t j = k + 1; j < plan.segments.size(); ++j)
        if (reads_value(plan.segments[j], o.node)) b.last_use = j;
      if (b.last_use == k)
        throw InternalError("plan: segment " + std::to_string(k) + " writes `" + o.node +
                            "` that no one reads");
      pointer_of[o.node] = b.var;
      const std::int64_t bytes = spec::numel(o.shape) * spec::dtype_size(o.dtype);
      buffer_ctx.push_back({{"ctype", contract::c_type(o.dtype)},
                            {"var", b.var},
                            {"value", o.node},
                            {"dtype", spec::dtype_name(o.dtype)},
                            {"shape", spec::shape_string(o.shape)},
                            {"producer", k},
                            {"last_use", b.last_use},
                            {"bytes", bytes}});
      buffer_bytes += bytes;
      buffers.push_back(b);
    }

  json aliases = json::array();
  for (const auto& a : plan.aliases) {
    const auto src = pointer_of.find(a.source);
    if (src == pointer_of.end())
      throw InternalError("plan: view `" + a.value + "` of `" + a.source +
                          "`, which no one writes");
    pointer_of[a.value] = src->second;
    aliases.push_back({{"value", a.value}, {"source", a.source}});
  }

  json segments = json::array(), steps = json::array(), record = json::array(),
       links = json::array();
  std::vector<std::string> includes;
  // Segments whose code is the same but for their names (a model's repeated blocks: the same
  // family, tuning and shapes) share the first one's namespace: nvcc compiles each distinct
  // kernel once (DenseNet's plan had hundreds of segments in one translation unit).
  std::map<std::string, size_t> first_with_code;  // code_shape() → its index in `segments`
  std::string id = "plan:", summary = std::to_string(plan.segments.size()) + " kernels:";
  for (size_t k = 0; k < plan.segments.size(); ++k) {
    const PlanSegment& seg = plan.segments[k];
    const Candidate& part = parts[k];
    const contract::Contract sc = segment_contract(plan, k, c.name);
    const std::string name = sc.name, ns = "egg_plan_" + name;
    std::string args;
    for (const auto& a : sc.args) {
      const bool graph_out = a.role == contract::Role::output &&
                             is_graph_output(s, spec::Output{a.tensor_name, a.source, {}, {}});
      const std::string& ptr = graph_out ? output_var.at(a.tensor_name) : pointer_of.at(a.source);
      args += (args.empty() ? "" : ", ") + ptr;
    }
    std::string nodes_text;
    for (const auto& n : seg.nodes) nodes_text += (nodes_text.empty() ? "" : ", ") + n;
    auto [incs, code] = split_includes(part.code.device_code);
    for (auto& inc : incs)
      if (std::find(includes.begin(), includes.end(), inc) == includes.end())
        includes.push_back(inc);
    const json params = contract::template_context(sc)["params"];
    std::vector<std::string> vars;
    std::string decls;  // the launch's signature, as the template writes it
    for (const auto& a : sc.args) vars.push_back(a.var);
    for (const auto& p : params) decls += p["decl"].get<std::string>() + ", ";
    // The tensors' names appear in the signature, the body and the device code (a family's
    // argument struct); a template identifier that is also a tensor's name (a helper's `x`) only
    // makes two segments look different.
    const std::string same =
        code_shape(decls + "\n" + code + "\n" + part.code.launch_body, name, vars);
    const auto [first, fresh] = first_with_code.emplace(same, segments.size());
    std::string call_ns = ns, call_name = name;
    if (fresh) {
      segments.push_back({{"index", k},
                          {"family", seg.family->name()},
                          {"nodes_text", nodes_text},
                          {"summary", part.summary},
                          {"ns", ns},
                          {"name", name},
                          {"params", params},
                          {"device_code", code},
                          {"launch_body", part.code.launch_body},
                          {"also", json::array()}});
    } else {
      json& shared = segments[first->second];
      shared["also"].push_back({{"index", k}, {"nodes_text", nodes_text}});
      call_ns = shared["ns"];
      call_name = shared["name"];
    }
    json allocs = json::array(), frees = json::array();
    for (size_t b = 0; b < buffers.size(); ++b) {
      if (buffers[b].producer == k) allocs.push_back(buffer_ctx[b]);
      if (buffers[b].last_use == k) frees.push_back(buffer_ctx[b]);
    }
    steps.push_back({{"index", k},
                     {"family", seg.family->name()},
                     {"ns", call_ns},
                     {"name", call_name},
                     {"args", args},
                     {"allocs", allocs},
                     {"frees", frees}});
    record.push_back({{"segment", name},
                      {"family", seg.family->name()},
                      {"nodes", seg.nodes},
                      {"reads", seg.reads},
                      {"writes", seg.writes},
                      {"id", part.id},
                      {"params", part.params}});
    if (part.params.contains("link"))
      for (const auto& l : part.params["link"])
        if (std::find(links.begin(), links.end(), l) == links.end()) links.push_back(l);
    id += (k ? "+" : "") + part.id;
    summary += " [" + std::to_string(k) + "] " + seg.family->name() + " (" + nodes_text +
               "): " + part.summary + ";";
  }
  summary.pop_back();
  for (const auto& a : plan.aliases)
    summary += "; `" + a.value + "` is `" + a.source + "` reshaped (no copy)";

  const json ctx = {{"kernel", c.name},
                    {"num_segments", plan.segments.size()},
                    {"num_distinct", segments.size()},
                    {"includes", includes},
                    {"segments", segments},
                    {"buffers", buffer_ctx},
                    {"has_buffers", !buffers.empty()},
                    {"buffer_bytes", buffer_bytes},
                    {"keep_pool", keep_pool_.text},
                    {"steps", steps},
                    {"err", err}};
  Candidate cand;
  cand.id = id;
  cand.summary = summary;
  cand.params = {{"plan", record}};
  if (!aliases.empty()) cand.params["views"] = aliases;
  if (!links.empty()) cand.params["link"] = links;
  cand.code.device_code = render::render(device_.text, ctx, device_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

}  // namespace egg::backend::builtin
