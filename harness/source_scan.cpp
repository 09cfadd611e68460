#include "source_scan.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

namespace egg::harness {
namespace {

// Replaces comments and string/char literals with spaces, keeping newlines (line numbers stay).
std::string strip_comments_and_strings(std::string_view s) {
  std::string out(s);
  enum { code, line_comment, block_comment, str, chr } state = code;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (state) {
      case code:
        if (c == '/' && next == '/')
          state = line_comment, out[i] = ' ';
        else if (c == '/' && next == '*')
          state = block_comment, out[i] = ' ', out[++i] = ' ';
        else if (c == '"')
          state = str;
        else if (c == '\'')
          state = chr;
        break;
      case line_comment:
        if (c == '\n')
          state = code;
        else
          out[i] = ' ';
        break;
      case block_comment:
        if (c == '*' && next == '/')
          state = code, out[i] = ' ', out[++i] = ' ';
        else if (c != '\n')
          out[i] = ' ';
        break;
      case str:
      case chr:
        if (c == '\\' && i + 1 < s.size()) {
          out[i] = ' ';
          if (s[i + 1] != '\n') out[++i] = ' ';
        } else if ((state == str && c == '"') || (state == chr && c == '\''))
          state = code;
        else if (c != '\n')
          out[i] = ' ';
        break;
    }
  }
  return out;
}

}  // namespace

std::vector<Finding> scan_source_text(std::string_view source) {
  // Includes are matched on the original text (the path is a string-like token), everything else
  // on the text without comments and literals.
  static const std::regex include_re(
      R"(^\s*#\s*include\s*[<"]\s*(torch|ATen|c10|caffe2|pybind11)/)", std::regex::ECMAScript);
  static const std::regex python_re(R"(^\s*#\s*include\s*[<"]\s*Python\.h)",
                                    std::regex::ECMAScript);
  static const std::regex ns_re(R"((^|[^A-Za-z0-9_:])(torch|at|c10|caffe2|pybind11)\s*::)",
                                std::regex::ECMAScript);
  const std::string code = strip_comments_and_strings(source);
  std::vector<Finding> findings;
  std::size_t start = 0;
  int line = 1;
  while (start <= source.size()) {
    std::size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    const std::string original(source.substr(start, end - start));
    const std::string stripped = code.substr(start, end - start);
    std::smatch m;
    // An include is only real if the '#' survived stripping (not inside a comment).
    const bool directive = stripped.find('#') != std::string::npos;
    if (directive &&
        (std::regex_search(original, m, include_re) || std::regex_search(original, m, python_re))) {
      findings.push_back({line, original});
    } else if (std::regex_search(stripped, m, ns_re)) {
      findings.push_back({line, original});
    }
    start = end + 1;
    ++line;
  }
  return findings;
}

std::vector<Finding> scan_library(const std::filesystem::path& so) {
  std::ifstream in(so, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + so.string());
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) -> std::runtime_error {
    return std::runtime_error(so.string() + ": not an ELF64 shared library (" + why + ")");
  };
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0)
    throw fail("bad magic");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) throw fail("not 64-bit");
  if (eh.e_shoff == 0 || eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > data.size())
    throw fail("no section headers");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), data.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  auto section_bytes = [&](const Elf64_Shdr& sh) -> std::string_view {
    if (sh.sh_offset + sh.sh_size > data.size()) throw fail("truncated section");
    return std::string_view(data).substr(sh.sh_offset, sh.sh_size);
  };
  auto str_at = [](std::string_view strtab, std::uint64_t off) -> std::string {
    if (off >= strtab.size()) return {};
    return std::string(strtab.substr(off, strtab.find('\0', off) - off));
  };
  static const std::regex bad_lib(R"(^lib(torch|c10|caffe2|python)[^/]*\.so)");
  static const char* const kBadPrefixes[] = {"_ZN2at",    "_ZNK2at",    "_ZN3c10",    "_ZNK3c10",
                                             "_ZN5torch", "_ZNK5torch", "_ZN6caffe2", "_ZNK6caffe2",
                                             "THP",       "Py"};
  std::vector<Finding> findings;
  for (const auto& sh : sections) {
    if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_DYNAMIC) continue;
    if (sh.sh_link >= sections.size()) throw fail("bad string table link");
    const std::string_view strtab = section_bytes(sections[sh.sh_link]);
    const std::string_view bytes = section_bytes(sh);
    if (sh.sh_type == SHT_DYNAMIC) {
      for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= bytes.size(); off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        std::memcpy(&dyn, bytes.data() + off, sizeof dyn);
        if (dyn.d_tag != DT_NEEDED) continue;
        const std::string name = str_at(strtab, dyn.d_un.d_val);
        if (std::regex_search(name, bad_lib)) findings.push_back({0, "needs " + name});
      }
    } else {
      for (std::size_t off = 0; off + sizeof(Elf64_Sym) <= bytes.size(); off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, bytes.data() + off, sizeof sym);
        if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
        const std::string name = str_at(strtab, sym.st_name);
        for (const char* p : kBadPrefixes)
          if (name.rfind(p, 0) == 0) {
            findings.push_back({0, "imports " + name});
            break;
          }
      }
    }
  }
  return findings;
}

std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (std::size_t i = 0; i < findings.size() && i < 5; ++i) {
    if (!out.empty()) out += "; ";
    if (findings[i].line > 0) out += "line " + std::to_string(findings[i].line) + ": ";
    std::string text = findings[i].text;
    const auto first = text.find_first_not_of(" \t");
    out += first == std::string::npos ? text : text.substr(first);
  }
  if (findings.size() > 5) out += "; and " + std::to_string(findings.size() - 5) + " more";
  return out;
}

}  // namespace egg::harness
