// Runs of small steps merged into one serial kernel (compiler/MergeSmallSteps.h): which steps
// merge, that the merged kernel maps nothing to threads or work-items, and every device against
// interp with the profile showing one kernel where the steps were.
#include <gtest/gtest.h>

#include "backends/Registry.h"
#include "compiler/IRVisitor.h"
#include "compiler/Lower.h"
#include "runtime/Backend.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/RandomInputs.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;

// A classifier's tail as the zoo's Tile writes it: global average pooling, the dense layer, and
// softmax's maximum, exponentials, sum and division.
const char *const kTail = R"(function (X[N, H, W, C], D[C, K], B[K]) -> (Y) {
  P[n, c : N, C] = +(X[n, i, j, c]);
  A = div(P, 16.0);
  L[n, k : N, K] = +(A[n, c] * D[c, k]);
  Z = add(L, B);
  M[n, 0 : N, 1] = >(Z[n, k]);
  E = exp(sub(Z, M));
  S[n, 0 : N, 1] = +(E[n, k]);
  Y = div(E, S);
})";

tile::BoundProgram tail(int64_t channels) {
  return tile::bind(tile::parse_program(kTail), {{"X", {DType::Float32, {1, 4, 4, channels}}},
                                                 {"D", {DType::Float32, {channels, 10}}},
                                                 {"B", {DType::Float32, {10}}}});
}

// lavapipe's target as the Vulkan backend describes it, less its device limits.
compiler::Target lavapipe_like() {
  compiler::Target t{"vulkan"};
  t.cores = 2;
  t.vector_bits = 32;
  t.cpu_invocations = true;
  t.pad_guarded_reads = true;
  t.merge_small_steps = true;
  return t;
}

std::vector<std::string> kernel_names(const compiler::LoweredProgram &lowered) {
  std::vector<std::string> names;
  for (const auto &s : lowered.steps)
    if (s.kind == compiler::Step::Kind::Kernel) names.push_back(s.kernel.name);
  return names;
}

class MappedLoops : public compiler::IRVisitor {
 public:
  int count = 0;
  using IRVisitor::visit;
  void visit(const compiler::For *op) override {
    count += op->for_kind == compiler::ForKind::Parallel ||
             op->for_kind == compiler::ForKind::GpuBlock ||
             op->for_kind == compiler::ForKind::GpuThread;
    IRVisitor::visit(op);
  }
};

TEST(MergeSmallSteps, AClassifiersTailBecomesOneSerialKernel) {
  compiler::Target target = lavapipe_like();
  auto lowered = compiler::lower(tail(64), target);
  ASSERT_EQ(kernel_names(lowered), (std::vector<std::string>{"Y"}));
  const auto &step = lowered.steps.back();
  EXPECT_TRUE(step.writes_whole_output);
  EXPECT_EQ(step.fused, (std::vector<std::string>{"A", "P", "L", "Z", "M", "E", "S", "Y"}));
  MappedLoops mapped;
  mapped.visit_stmt(step.kernel.body);
  EXPECT_EQ(mapped.count, 0);
  // Every step keeps its own kernel where the target asks for none merged.
  target.merge_small_steps = false;
  EXPECT_EQ(kernel_names(compiler::lower(tail(64), target)),
            (std::vector<std::string>{"A", "Z", "M", "E", "S", "Y"}));
}

TEST(MergeSmallSteps, LargeStepsAndTooManyBuffersCutTheRun) {
  // 1024 channels: the pooling and the dense layer (16 and 10 thousand points) keep their
  // kernels; the four softmax steps after them merge.
  auto lowered = compiler::lower(tail(1024), lavapipe_like());
  EXPECT_EQ(kernel_names(lowered), (std::vector<std::string>{"A", "Z", "Y"}));
  // A chain of 20 small steps, each adding another input: 16 buffers at most per merged kernel.
  std::string text = "function (X[N]";
  for (int i = 0; i < 20; ++i) text += ", W" + std::to_string(i) + "[N]";
  text += ") -> (T20) {\n  T0 = X;\n";
  for (int i = 0; i < 20; ++i) {
    std::string t = "T" + std::to_string(i), w = "W" + std::to_string(i);
    text += "  U" + std::to_string(i) + "[k : N] = +(" + t + "[j] * " + w + "[k]);\n";
    text += "  T" + std::to_string(i + 1) + " = add(U" + std::to_string(i) + ", 1.0);\n";
  }
  text += "}\n";
  std::map<std::string, tile::TensorType> in = {{"X", {DType::Float32, {8}}}};
  for (int i = 0; i < 20; ++i) in["W" + std::to_string(i)] = {DType::Float32, {8}};
  auto chain = compiler::lower(tile::bind(tile::parse_program(text), in), lavapipe_like());
  ASSERT_GE(chain.steps.size(), 3u);
  for (const auto &step : chain.steps) {
    EXPECT_LE(step.kernel.params.size(), 16u) << step.kernel.name;
    EXPECT_GE(step.fused.size(), 8u) << step.kernel.name;  // four steps or more merged
  }
}

TEST(MergeSmallSteps, EveryDeviceRunsTheMergedTailAsInterpDoes) {
  auto p = tail(64);
  const TensorMap in = test::random_inputs(p, 11, -2, 2);
  const TensorMap want = interpret(p, in);
  DeviceRegistry registry = builtin_devices();
  for (const auto &device : registry.names()) {
    CompileOptions options;
    options.policy = TunePolicy::Off;
    auto dev = registry.create(device);
    auto exe = dev->compile(p, options);
    exe->set_profiling(true);
    TensorMap got = exe->run(in);
    const HostTensor &a = want.at("Y"), &b = got.at("Y");
    for (int64_t i = 0; i < a.elements(); ++i)
      ASSERT_NEAR(b.get_double(i), a.get_double(i), 1e-5) << device << " at " << i;
    if (!dev->backend().runs_kernels() || !dev->backend().target().merge_small_steps) continue;
    EXPECT_EQ(exe->kernel_count(), 1) << device;
    std::vector<std::string> timed;
    for (const auto &step : exe->profile().steps)
      if (step.kind == StepKind::Kernel) timed.push_back(step.name);
    EXPECT_EQ(timed, (std::vector<std::string>{"Y"})) << device;
  }
}

}  // namespace
}  // namespace tessera
