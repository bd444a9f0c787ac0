// The functions PlaidML defines in Tile itself rather than as intrinsics (its InlineDefines):
// builtin_softmax, builtin_logsoftmax, builtin_binary_crossentropy and reverse_grad.
#pragma once

#include <optional>
#include <string_view>

namespace tessera::tile {

enum class Builtin { Softmax, LogSoftmax, BinaryCrossentropy, ReverseGrad };

/// What an argument of a builtin is. A Tensor is a name: Sema moves any other expression into a
/// statement of its own. A Size is an integer expression over dimensions and constants, like a
/// contraction's sizes. A Value is any elementwise expression.
enum class BuiltinParam { Tensor, Size, Value };

struct BuiltinInfo {
  Builtin fn;
  std::string_view name;
  int arity;
  BuiltinParam params[3];
};

const BuiltinInfo &builtin_info(Builtin fn);
inline std::string_view builtin_name(Builtin fn) { return builtin_info(fn).name; }
std::optional<Builtin> lookup_builtin(std::string_view name);

}  // namespace tessera::tile
