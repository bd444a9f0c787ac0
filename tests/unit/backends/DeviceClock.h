// The check the OpenCL and Vulkan device tests share for Backend::time_on_device: the device's
// clock times what was enqueued, within the host's wait for it (sixteen fills of a 32 MiB buffer
// take several times one fill), and the work it timed ran (the buffer holds the last fill's bytes).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "runtime/Backend.h"

namespace tessera::test {

/// Returns false where the device has no clock of its own (nothing was checked). Each count is
/// timed 5 times and the fastest kept, the run least disturbed by other processes (lavapipe and
/// PoCL fill on the same CPU as the test runner's other tests).
inline bool expect_device_clock_times_enqueued_work(Backend &backend) {
  std::lock_guard<std::recursive_mutex> lock(backend.mutex());
  auto buffer = backend.allocate(32 << 20);
  auto fills = [&](int count) {
    double fastest = -1;
    for (int run = 0; run < 5; ++run) {
      auto host_start = std::chrono::steady_clock::now();
      auto s = backend.time_on_device([&] {
        for (int i = 0; i < count; ++i) backend.fill(*buffer, static_cast<uint8_t>(i + 1));
      });
      std::chrono::duration<double> host = std::chrono::steady_clock::now() - host_start;
      if (!s) return -1.0;
      EXPECT_LE(*s, host.count()) << "the device took longer than the host waited for it";
      fastest = fastest < 0 ? *s : std::min(fastest, *s);
    }
    return fastest;
  };
  double one = fills(1);
  if (one < 0) return false;
  double sixteen = fills(16);
  EXPECT_GT(one, 0);
  EXPECT_GT(sixteen, 3 * one) << "one fill " << one << " s, sixteen " << sixteen << " s";
  std::vector<uint8_t> back(1 << 20);
  backend.read(*buffer, back.data(), back.size());
  EXPECT_EQ(back.front(), 16);
  EXPECT_EQ(back.back(), 16);
  return true;
}

}  // namespace tessera::test
