// The check the OpenCL and Vulkan device tests share for Backend::time_on_device: the device's
// clock times what was enqueued, without the submit and the wait (eight fills of a 32 MiB buffer
// take several times one fill), and the work it timed ran (the buffer holds the last fill's bytes).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "runtime/Backend.h"

namespace tessera::test {

/// Returns false where the device has no clock of its own (nothing was checked).
inline bool expect_device_clock_times_enqueued_work(Backend &backend) {
  std::lock_guard<std::recursive_mutex> lock(backend.mutex());
  auto buffer = backend.allocate(32 << 20);
  auto fills = [&](int count) {
    std::vector<double> seconds;
    for (int run = 0; run < 3; ++run) {
      auto s = backend.time_on_device([&] {
        for (int i = 0; i < count; ++i) backend.fill(*buffer, static_cast<uint8_t>(i + 1));
      });
      if (!s) return -1.0;
      seconds.push_back(*s);
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[1];
  };
  double one = fills(1);
  if (one < 0) return false;
  double eight = fills(8);
  EXPECT_GT(one, 0);
  EXPECT_GT(eight, 3 * one) << "one fill " << one << " s, eight " << eight << " s";
  std::vector<uint8_t> back(1 << 20);
  backend.read(*buffer, back.data(), back.size());
  EXPECT_EQ(back.front(), 8);
  EXPECT_EQ(back.back(), 8);
  return true;
}

}  // namespace tessera::test
