// The problem's side of the roofline: the least traffic (each input, param and output once) and
// the arithmetic of its op graph, which the profile agent compares a candidate's time with.
#pragma once

#include "spec/spec.h"

namespace egg::pipeline {

struct RooflineInputs {
  double bytes = 0;  // inputs, params and outputs, each once
  double flops = 0;  // the op graph's floating-point operations (a multiply-add counts two)
};

// FLOPs of one node: 2 per multiply-add for the matrix ops (linear, matmul, mm, bmm, addmm,
// baddbmm), convolutions (forward and transposed) and scaled_dot_product_attention;
// one per output element for every other op.
double node_flops(const spec::Spec& s, const spec::Node& n);

RooflineInputs roofline_inputs(const spec::Spec& s);

}  // namespace egg::pipeline
