// Where the temporaries of a compiled program live: offsets in one arena, reusing a temporary's
// memory after its last use.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera {

struct PlannedTemp {
  std::string name;
  int64_t bytes = 0;
  size_t first_step = 0, last_step = 0;  // the steps that first and last touch it
};

struct BufferPlan {
  std::map<std::string, int64_t> offset;  // byte offset of each temporary in the arena (aligned)
  int64_t arena_bytes = 0;
};

/// Packs `temps` into one arena, each at a multiple of `alignment` bytes: two temporaries share
/// memory only when their step ranges do not overlap. Greedy by first use, best fit among the free
/// blocks.
BufferPlan plan_buffers(const std::vector<PlannedTemp> &temps, size_t alignment = 64);

}  // namespace tessera
