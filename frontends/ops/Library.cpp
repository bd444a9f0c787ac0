#include "frontends/ops/Library.h"

namespace tessera {

OpRegistry builtin_ops() {
  OpRegistry registry;
  ops::register_elementwise_ops(registry);
  ops::register_nn_ops(registry);
  ops::register_reduce_ops(registry);
  ops::register_norm_ops(registry);
  ops::register_loss_ops(registry);
  ops::register_random_ops(registry);
  ops::register_shape_ops(registry);
  ops::register_gather_ops(registry);
  ops::register_resize_ops(registry);
  ops::register_scan_ops(registry);
  return registry;
}

}  // namespace tessera
