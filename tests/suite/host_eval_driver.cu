// Runs one generated element-wise kernel's per-element program on the host (EGG_HOST_EVAL in
// templates/elementwise/kernel.cuh.tmpl): the index math of the fusion IR checked against PyTorch
// on a machine without a GPU (tests/suite/host_eval.py writes the tensors and compares).
//
// usage: driver <n> <inputs> <in_file>... <outputs> <out_file> <out_bytes>...
#define EGG_HOST_EVAL 1
#include EGG_KERNEL_CU

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s n inputs in... outputs out bytes...\n", argv[0]);
    return 2;
  }
  int k = 1;
  const std::int64_t n = std::atoll(argv[k++]);
  const int num_in = std::atoi(argv[k++]);
  std::vector<std::vector<char>> in(num_in);
  std::vector<const void*> in_ptrs;
  for (int j = 0; j < num_in; ++j) {
    std::ifstream f(argv[k++], std::ios::binary);
    if (!f) return 3;
    in[j].assign(std::istreambuf_iterator<char>(f), {});
    in_ptrs.push_back(in[j].data());
  }
  const int num_out = std::atoi(argv[k++]);
  std::vector<std::string> out_paths;
  std::vector<std::vector<char>> out(num_out);
  std::vector<void*> out_ptrs;
  for (int j = 0; j < num_out; ++j) {
    out_paths.push_back(argv[k++]);
    out[j].assign(static_cast<size_t>(std::atoll(argv[k++])), 0);
    out_ptrs.push_back(out[j].data());
  }
  egg_host_eval(in_ptrs.data(), out_ptrs.data(), n);
  for (int j = 0; j < num_out; ++j) {
    std::ofstream f(out_paths[j], std::ios::binary);
    f.write(out[j].data(), static_cast<std::streamsize>(out[j].size()));
    if (!f) return 4;
  }
  return 0;
}
