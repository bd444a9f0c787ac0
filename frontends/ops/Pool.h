// Pooling of the op library: max and average pooling over 1-3 spatial dimensions, and global
// pooling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontends/ops/Window.h"
#include "tessera/edsl.h"

namespace tessera::ops {

struct PoolOptions {
  std::vector<int64_t> pool_size;  // one per spatial axis (required)
  std::vector<int64_t> strides;    // empty = pool_size (Keras' default)
  Padding padding;  // valid, same (TensorFlow's split) or explicit pairs smaller than the window
  DataFormat data_format = DataFormat::ChannelsLast;
};

/// Max over each window's in-range taps; padding never contributes a value.
Tensor max_pool(const Tensor &x, const PoolOptions &options);
/// Mean over each window's in-range taps: padded taps are not counted (TensorFlow's average
/// pooling).
Tensor avg_pool(const Tensor &x, const PoolOptions &options);

/// Max or mean over all spatial dimensions: [N, S..., C] -> [N, C] ([N, 1..., C] with keepdims).
Tensor global_max_pool(const Tensor &x, bool keepdims = false,
                       DataFormat format = DataFormat::ChannelsLast);
Tensor global_avg_pool(const Tensor &x, bool keepdims = false,
                       DataFormat format = DataFormat::ChannelsLast);

namespace pool_detail {
enum class Kind { Max, Avg };
/// max_pool/avg_pool under the name `op`; `spatial` 0 accepts any spatial rank.
Tensor pool(const std::string &op, size_t spatial, Kind kind, const Tensor &x,
            const PoolOptions &options);
Tensor global_pool(const std::string &op, Kind kind, const Tensor &x, bool keepdims,
                   DataFormat format);
}  // namespace pool_detail

}  // namespace tessera::ops
