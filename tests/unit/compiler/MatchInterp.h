// Runs every step of a lowered program with LoopEval on random inputs and compares each output
// with the interpreter's: the oracle check the compiler's unit tests share. A buffer whose first
// kernel claims to overwrite it whole (Step::writes_whole_output) starts as NaN, every other one
// as 0, so a wrong claim shows as a NaN in the output.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "compiler/Lower.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/LoopEval.h"

namespace tessera::compiler::test {

inline void expect_lowered_matches_interp(const tile::BoundProgram &bound,
                                          const LoweredProgram &lowered, unsigned seed,
                                          double tolerance, const std::string &what) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  TensorMap inputs;
  LoopEval eval;
  for (const auto &[name, type] : bound.inputs) {
    HostTensor t(type);
    for (int64_t i = 0; i < t.elements(); ++i) t.set_double(i, dist(rng));
    for (int64_t i = 0; i < t.elements(); ++i) eval.buffers[name].push_back(t.get_double(i));
    inputs[name] = t;
  }
  for (const auto &step : lowered.steps) {
    ASSERT_EQ(step.kind, Step::Kind::Kernel) << step.host_statement;
    for (const auto &panel : step.panels) {  // filled as the runtime fills them, in double
      const auto &source = eval.buffers.at(panel.source);
      auto bytes = fill_constant_panel(panel, reinterpret_cast<const std::byte *>(source.data()),
                                       source.size() * sizeof(double), sizeof(double));
      auto &filled = eval.buffers[panel.name];
      filled.resize(bytes.size() / sizeof(double));
      std::memcpy(filled.data(), bytes.data(), bytes.size());
    }
    for (const auto &p : step.kernel.params)
      if (!eval.buffers.count(p.name))
        eval.buffers[p.name].assign(p.elements,
                                    p.is_output && step.writes_whole_output ? std::nan("") : 0.0);
    eval.run(step.kernel.body);
  }
  for (const auto &b : lowered.buffers)
    if (!eval.buffers.count(b.name)) eval.buffers[b.name].assign(b.elements, 0);
  TensorMap expected = interpret(bound, inputs);
  for (const auto &[name, t] : expected) {
    const auto &got = eval.buffers.at(name);
    ASSERT_EQ(static_cast<int64_t>(got.size()), t.elements());
    for (int64_t i = 0; i < t.elements(); ++i)
      ASSERT_NEAR(got[i], t.get_double(i), tolerance) << name << "[" << i << "] of " << what;
  }
}

}  // namespace tessera::compiler::test
