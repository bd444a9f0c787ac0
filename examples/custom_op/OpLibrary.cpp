// The custom op as a library that Python loads: `tessera.load_op_library(path)` calls
// tessera_register_ops with the registry `tessera.ops` and the Keras backend use. The library does
// not link Tessera: its symbols come from the Python module that loads it.
#include "Attention.h"

extern "C" __attribute__((visibility("default"))) void
tessera_register_ops(tessera::OpRegistry &ops) {
  tessera::register_attention(ops);
}
