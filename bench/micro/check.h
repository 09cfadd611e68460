// The microbenchmarks' CUDA error check: prints the error and its line, and returns 1 from main.
#pragma once
#include <cstdio>

#define CK(x)                                                      \
  do {                                                             \
    cudaError_t e = (x);                                           \
    if (e) {                                                       \
      printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); \
      return 1;                                                    \
    }                                                              \
  } while (0)
