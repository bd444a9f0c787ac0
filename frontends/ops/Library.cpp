#include "frontends/ops/Library.h"

namespace tessera {

OpRegistry builtin_ops() {
  OpRegistry registry;
  ops::register_elementwise_ops(registry);
  return registry;
}

}  // namespace tessera
