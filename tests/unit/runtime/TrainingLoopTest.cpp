// Tensors that stay on the device: 100 SGD steps of a small MLP whose weights never leave the
// device until read at the end must equal the same loop through the host, on every device; and
// the rules of device-resident runs (bound outputs, returned tensors, errors).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "backends/Registry.h"
#include "tessera/edsl.h"
#include "tessera/gradient.h"
#include "tile/Diagnostics.h"

namespace tessera {
namespace {

Tensor matmul(const Tensor &A, const Tensor &B) {
  TensorDim M, K, N;
  TensorIndex m("m"), k("k"), n("n");
  A.bind_dims(M, K);
  B.bind_dims(K, N);
  Tensor C = TensorOutput(M, N);
  C(m, n) += A(m, k) * B(k, n);
  return C;
}

Tensor sum_all(const Tensor &E) {
  TensorIndex i("i"), j("j");
  Tensor S = TensorOutput();
  S() += E(i, j);
  return S;
}

constexpr int kBatch = 16, kIn = 4, kHidden = 8, kOut = 3, kSteps = 100;
const char *const kWeights[] = {"W1", "B1", "W2", "B2"};

/// One SGD step of a two-layer MLP with a mean squared error: inputs X, Y and the weights; outputs
/// the loss L and each weight's next value W_new.
Function sgd_step() {
  Tensor X = Placeholder(DType::Float32, {kBatch, kIn}, "X");
  Tensor Y = Placeholder(DType::Float32, {kBatch, kOut}, "Y");
  Tensor W1 = Placeholder(DType::Float32, {kIn, kHidden}, "W1");
  Tensor B1 = Placeholder(DType::Float32, {kHidden}, "B1");
  Tensor W2 = Placeholder(DType::Float32, {kHidden, kOut}, "W2");
  Tensor B2 = Placeholder(DType::Float32, {kOut}, "B2");
  Tensor H = max(matmul(X, W1) + B1, Tensor(0.0));
  Tensor D = matmul(H, W2) + B2 - Y;
  Tensor L = sum_all(D * D) / Tensor(double(kBatch));
  std::vector<Tensor> weights{W1, B1, W2, B2};
  std::vector<Tensor> g = gradient(L, weights);
  std::vector<std::pair<std::string, Tensor>> outputs{{"L", L}};
  for (size_t i = 0; i < weights.size(); ++i)
    outputs.emplace_back(std::string(kWeights[i]) + "_new", weights[i] - Tensor(0.05) * g[i]);
  return build(outputs, {X, Y, W1, B1, W2, B2});
}

HostTensor random(std::vector<int64_t> shape, std::mt19937 &rng, double scale) {
  HostTensor t(tile::TensorType{DType::Float32, std::move(shape)});
  std::uniform_real_distribution<double> u(-scale, scale);
  for (int64_t i = 0; i < t.elements(); ++i) t.set_double(i, u(rng));
  return t;
}

struct Data {
  TensorMap weights;
  std::vector<std::pair<HostTensor, HostTensor>> batches;  // X, Y per step
};

Data make_data() {
  std::mt19937 rng(7);
  Data d;
  d.weights["W1"] = random({kIn, kHidden}, rng, 0.5);
  d.weights["B1"] = random({kHidden}, rng, 0.1);
  d.weights["W2"] = random({kHidden, kOut}, rng, 0.5);
  d.weights["B2"] = random({kOut}, rng, 0.1);
  for (int s = 0; s < kSteps; ++s) {
    HostTensor x = random({kBatch, kIn}, rng, 1.0);
    HostTensor y(tile::TensorType{DType::Float32, {kBatch, kOut}});
    for (int b = 0; b < kBatch; ++b)  // a learnable target: y = [x0 + x1, x2 - x3, x0 * 0.5]
      for (int o = 0; o < kOut; ++o) {
        double v = o == 0   ? x.get_double(b * kIn) + x.get_double(b * kIn + 1)
                   : o == 1 ? x.get_double(b * kIn + 2) - x.get_double(b * kIn + 3)
                            : 0.5 * x.get_double(b * kIn);
        y.set_double(b * kOut + o, v);
      }
    d.batches.emplace_back(std::move(x), std::move(y));
  }
  return d;
}

bool same_bytes(const HostTensor &a, const HostTensor &b) {
  return a.type() == b.type() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

class TrainingLoop : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto names = builtin_devices().names();
    if (std::find(names.begin(), names.end(), GetParam()) == names.end())
      GTEST_SKIP() << "no device " << GetParam() << " on this machine";
    device = builtin_devices().create(GetParam());
    Function fn = sgd_step();
    exe = device->compile(tile::bind(fn.program, fn.input_types));
  }
  std::unique_ptr<Device> device;
  std::unique_ptr<Executable> exe;
};

TEST_P(TrainingLoop, WeightsThatStayOnTheDeviceMatchTheLoopThroughTheHost) {
  const Data data = make_data();

  // Through the host: every input copied in and every output copied out, each step.
  TensorMap host_weights = data.weights;
  std::vector<double> host_losses;
  for (const auto &[x, y] : data.batches) {
    TensorMap in = host_weights;
    in["X"] = x;
    in["Y"] = y;
    TensorMap out = exe->run(in);
    host_losses.push_back(out.at("L").get_double(0));
    for (const char *w : kWeights) host_weights[w] = out.at(std::string(w) + "_new");
  }
  EXPECT_LT(host_losses.back(), 0.5 * host_losses.front()) << "the MLP does not learn";

  // On the device: each update writes its weight's own memory in place.
  DeviceTensorMap weights, bound;
  std::map<std::string, const DeviceBuffer *> memory;
  for (const char *w : kWeights) {
    weights[w] = device->upload(data.weights.at(w));
    bound[std::string(w) + "_new"] = weights[w];
    memory[w] = weights[w].buffer().get();
  }
  std::vector<double> losses;
  for (const auto &[x, y] : data.batches) {
    DeviceTensorMap in = weights;
    in["X"] = device->upload(x);
    in["Y"] = device->upload(y);
    DeviceTensorMap out = exe->run_on_device(in, bound);
    losses.push_back(out.at("L").read().get_double(0));
    for (const char *w : kWeights)
      ASSERT_EQ(out.at(std::string(w) + "_new").buffer().get(), memory.at(w));
  }
  for (const char *w : kWeights) {
    EXPECT_EQ(weights.at(w).buffer().get(), memory.at(w)) << w << " moved";
    EXPECT_TRUE(same_bytes(weights.at(w).read(), host_weights.at(w)))
        << w << " differs from the host loop";
  }
  EXPECT_EQ(losses, host_losses);
}

TEST_P(TrainingLoop, ReturnedOutputsAreNotOverwrittenByLaterRuns) {
  const Data data = make_data();
  DeviceTensorMap in;
  for (const char *w : kWeights) in[w] = device->upload(data.weights.at(w));
  in["X"] = device->upload(data.batches[0].first);
  in["Y"] = device->upload(data.batches[0].second);
  DeviceTensorMap first = exe->run_on_device(in);
  HostTensor kept = first.at("W1_new").read();
  in["X"] = device->upload(data.batches[1].first);
  DeviceTensorMap second = exe->run_on_device(in);
  EXPECT_NE(first.at("W1_new").buffer(), second.at("W1_new").buffer());
  EXPECT_TRUE(same_bytes(first.at("W1_new").read(), kept));
  EXPECT_FALSE(same_bytes(second.at("W1_new").read(), kept));
}

TEST_P(TrainingLoop, BadBindingsAreErrors) {
  const Data data = make_data();
  DeviceTensorMap in;
  for (const char *w : kWeights) in[w] = device->upload(data.weights.at(w));
  in["X"] = device->upload(data.batches[0].first);
  in["Y"] = device->upload(data.batches[0].second);
  auto message = [&](const DeviceTensorMap &inputs, const DeviceTensorMap &outputs) -> std::string {
    try {
      exe->run_on_device(inputs, outputs);
    } catch (const tile::Error &e) {
      return e.what();
    }
    return "no error";
  };
  DeviceTensorMap missing = in;
  missing.erase("Y");
  EXPECT_EQ(message(missing, {}), "error: no value for input 'Y'");
  DeviceTensorMap wrong = in;
  wrong["X"] = device->upload(HostTensor(tile::TensorType{DType::Float32, {2, 2}}));
  EXPECT_EQ(message(wrong, {}),
            "error: input 'X' is float32[2, 2] but the program was compiled for float32[16, 4]");
  EXPECT_EQ(message(in, {{"Z", in.at("W1")}}), "error: 'Z' is not an output of the program");
  EXPECT_EQ(
      message(in, {{"W1_new", in.at("W2")}}),
      "error: output 'W1_new' is float32[8, 3] but the program was compiled for float32[4, 8]");
  EXPECT_EQ(message(in, {{"B1_new", in.at("B1")}, {"W1_new", in.at("W1")}, {"L", DeviceTensor()}}),
            "error: output 'L' is bound to an empty device tensor");
  if (GetParam() != "interp") {
    auto interp = builtin_devices().create("interp");
    DeviceTensorMap elsewhere = in;
    elsewhere["X"] = interp->upload(data.batches[0].first);
    EXPECT_EQ(message(elsewhere, {}), "error: input 'X' lives on interp, not on " + GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, TrainingLoop,
                         ::testing::Values("cpu", "opencl:0", "vulkan:0", "interp"),
                         [](const auto &info) {
                           std::string s = info.param;
                           for (auto &c : s)
                             if (c == ':') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace tessera
