#include "render/template.h"

#include <algorithm>
#include <vector>

#include "util/error.h"
#include "util/files.h"

namespace egg::render {
namespace {

using nlohmann::json;

enum class TagKind { variable, section, inverted, close, comment };

struct Token {
  bool is_tag = false;
  TagKind kind = TagKind::variable;
  std::string text;  // literal text, or the tag's name
  int line = 1;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits the text into literal and tag tokens.
std::vector<Token> split(const std::string& text, const std::string& origin) {
  std::vector<Token> tokens;
  size_t pos = 0;
  int line = 1;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    std::string literal =
        text.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (!literal.empty()) tokens.push_back({false, TagKind::variable, literal, line});
    for (char c : literal) line += (c == '\n');
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos)
      throw InternalError(origin + ":" + std::to_string(line) + ": unclosed '{{'");
    std::string inner = trim(text.substr(open + 2, close - open - 2));
    Token tag{true, TagKind::variable, inner, line};
    if (!inner.empty()) {
      switch (inner[0]) {
        case '#':
          tag.kind = TagKind::section;
          break;
        case '^':
          tag.kind = TagKind::inverted;
          break;
        case '/':
          tag.kind = TagKind::close;
          break;
        case '!':
          tag.kind = TagKind::comment;
          break;
        default:
          break;
      }
      if (tag.kind != TagKind::variable) tag.text = trim(inner.substr(1));
    }
    if (tag.kind != TagKind::comment && tag.text.empty())
      throw InternalError(origin + ":" + std::to_string(line) + ": empty tag '{{}}'");
    for (size_t i = open; i < close; ++i) line += (text[i] == '\n');
    tokens.push_back(tag);
    pos = close + 2;
  }
  return tokens;
}

// Removes the indentation and the newline around block tags that stand alone on their line.
// Decisions use the original texts; the cuts are applied afterwards.
void strip_standalone(std::vector<Token>& tokens) {
  std::vector<size_t> front(tokens.size(), 0);                 // chars to drop at a literal's start
  std::vector<size_t> back(tokens.size(), std::string::npos);  // where a literal's kept part ends
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].is_tag || tokens[i].kind == TagKind::variable) continue;
    size_t before_cut = std::string::npos;
    if (i == 0) {
      before_cut = 0;
    } else if (!tokens[i - 1].is_tag) {
      const std::string& prev = tokens[i - 1].text;
      size_t nl = prev.find_last_of('\n');
      size_t from = nl == std::string::npos ? 0 : nl + 1;
      if (prev.find_first_not_of(" \t", from) == std::string::npos &&
          (nl != std::string::npos || i == 1))
        before_cut = from;
    }
    if (before_cut == std::string::npos) continue;
    size_t after_cut = 0;
    if (i + 1 < tokens.size()) {
      if (tokens[i + 1].is_tag) continue;
      const std::string& next = tokens[i + 1].text;
      size_t nl = next.find('\n');
      size_t stop = nl == std::string::npos ? next.size() : nl;
      if (next.find_first_not_of(" \t") < stop) continue;
      if (nl == std::string::npos && i + 2 < tokens.size()) continue;
      after_cut = nl == std::string::npos ? next.size() : nl + 1;
      front[i + 1] = after_cut;
    }
    if (i > 0) back[i - 1] = before_cut;
  }
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].is_tag) continue;
    std::string& t = tokens[k].text;
    size_t end = std::min(back[k], t.size());
    t = front[k] < end ? t.substr(front[k], end - front[k]) : std::string();
  }
}

std::vector<Token> tokenize(const std::string& text, const std::string& origin) {
  std::vector<Token> tokens = split(text, origin);
  strip_standalone(tokens);
  return tokens;
}

// Looks a dotted name up through the context stack, innermost first.
const json* lookup(const std::vector<const json*>& stack, const std::string& name) {
  if (name == ".") return stack.back();
  std::string head = name.substr(0, name.find('.'));
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    const json& ctx = **it;
    if (!ctx.is_object() || !ctx.contains(head)) continue;
    const json* cur = &ctx.at(head);
    size_t start = head.size();
    while (start < name.size()) {
      size_t next = name.find('.', start + 1);
      std::string part =
          name.substr(start + 1, next == std::string::npos ? std::string::npos : next - start - 1);
      if (!cur->is_object() || !cur->contains(part)) return nullptr;
      cur = &cur->at(part);
      start = next == std::string::npos ? name.size() : next;
    }
    return cur;
  }
  return nullptr;
}

bool truthy(const json* v) {
  if (v == nullptr || v->is_null()) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_array()) return !v->empty();
  if (v->is_string()) return !v->get<std::string>().empty();
  return true;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  return v.dump();
}

// Finds the index of the token closing the section opened at `open`.
size_t find_close(const std::vector<Token>& tokens, size_t open, const std::string& origin) {
  int depth = 0;
  for (size_t i = open + 1; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    if (!t.is_tag) continue;
    if ((t.kind == TagKind::section || t.kind == TagKind::inverted) && t.text == tokens[open].text)
      ++depth;
    if (t.kind == TagKind::close && t.text == tokens[open].text) {
      if (depth == 0) return i;
      --depth;
    }
  }
  throw InternalError(origin + ":" + std::to_string(tokens[open].line) + ": section '" +
                      tokens[open].text + "' is never closed");
}

void render_range(const std::vector<Token>& tokens, size_t begin, size_t end,
                  std::vector<const json*>& stack, const std::string& origin, std::string& out) {
  for (size_t i = begin; i < end; ++i) {
    const Token& t = tokens[i];
    if (!t.is_tag) {
      out += t.text;
      continue;
    }
    switch (t.kind) {
      case TagKind::comment:
        break;
      case TagKind::close:
        throw InternalError(origin + ":" + std::to_string(t.line) + ": unexpected '{{/" + t.text +
                            "}}'");
      case TagKind::variable: {
        const json* v = lookup(stack, t.text);
        if (v == nullptr || v->is_null())
          throw InternalError(origin + ":" + std::to_string(t.line) + ": no value for '" + t.text +
                              "'");
        out += scalar_text(*v);
        break;
      }
      case TagKind::section:
      case TagKind::inverted: {
        size_t close = find_close(tokens, i, origin);
        const json* v = lookup(stack, t.text);
        if (t.kind == TagKind::inverted) {
          if (!truthy(v)) render_range(tokens, i + 1, close, stack, origin, out);
        } else if (v != nullptr && v->is_array()) {
          for (const auto& item : *v) {
            stack.push_back(&item);
            render_range(tokens, i + 1, close, stack, origin, out);
            stack.pop_back();
          }
        } else if (truthy(v)) {
          stack.push_back(v);
          render_range(tokens, i + 1, close, stack, origin, out);
          stack.pop_back();
        }
        i = close;
        break;
      }
    }
  }
}

}  // namespace

std::string render(const std::string& text, const json& context, const std::string& origin) {
  std::vector<Token> tokens = tokenize(text, origin);
  std::vector<const json*> stack{&context};
  std::string out;
  out.reserve(text.size() * 2);
  render_range(tokens, 0, tokens.size(), stack, origin, out);
  return out;
}

Template load_template(const std::filesystem::path& data_dir, const std::string& name) {
  auto path = data_dir / "templates" / name;
  auto text = read_file(path);
  if (!text)
    throw InternalError("template " + path.string() +
                        " is missing; check --data-dir (it must hold EGG's templates/ folder)");
  return {name, *text};
}

}  // namespace egg::render
