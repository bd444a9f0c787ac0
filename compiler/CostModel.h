// Picks a kernel's schedule from device facts: vector width from the target's vector bits and
// the dtype, a register-blocked accumulator tile for contractions, parallel outer loops.
#pragma once

#include "compiler/Lower.h"
#include "compiler/Nest.h"
#include "compiler/Schedule.h"

namespace tessera::compiler {

/// The tuner (a later issue) replaces this function's choice by a measured one.
Schedule choose_schedule(const ContractionNest &nest, const TargetInfo &target);

}  // namespace tessera::compiler
