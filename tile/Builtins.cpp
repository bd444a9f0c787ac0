#include "tile/Builtins.h"

namespace tessera::tile {

namespace {
using P = BuiltinParam;
// The signatures are PlaidML's: softmax and logsoftmax take a 2-D tensor and its two dimensions
// (rows, then columns); binary crossentropy takes the prediction, the target and the element count
// its derivative divides by; reverse_grad takes a tensor and the factor its gradient is scaled by.
constexpr BuiltinInfo kBuiltins[] = {
    {Builtin::Softmax, "builtin_softmax", 3, {P::Tensor, P::Size, P::Size}},
    {Builtin::LogSoftmax, "builtin_logsoftmax", 3, {P::Tensor, P::Size, P::Size}},
    {Builtin::BinaryCrossentropy,
     "builtin_binary_crossentropy",
     3,
     {P::Tensor, P::Tensor, P::Value}},
    {Builtin::ReverseGrad, "reverse_grad", 2, {P::Tensor, P::Value}},
};
}  // namespace

const BuiltinInfo &builtin_info(Builtin fn) { return kBuiltins[static_cast<int>(fn)]; }

std::optional<Builtin> lookup_builtin(std::string_view name) {
  for (const auto &b : kBuiltins)
    if (b.name == name) return b.fn;
  return std::nullopt;
}

}  // namespace tessera::tile
