// The tuning policies by name, one spelling for TESSERA_TUNE, `tessera bench --tune` and Python's
// `compile(tune=...)`.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/CompileOptions.h"

namespace tessera {

/// The policy called `name` ("online", "full", "cached" or "off"); nullopt for any other name.
std::optional<TunePolicy> tune_policy_named(std::string_view name);
/// "online", "full", "cached" or "off".
const char *tune_policy_name(TunePolicy policy);

}  // namespace tessera
