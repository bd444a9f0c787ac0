#include "runtime/BufferPlan.h"

#include <algorithm>

namespace tessera {

BufferPlan plan_buffers(const std::vector<PlannedTemp> &temps, size_t alignment) {
  const auto align = static_cast<int64_t>(alignment);
  struct Block {
    int64_t offset, bytes;
    size_t busy_until;  // last step of its current occupant
    bool used;
  };
  std::vector<const PlannedTemp *> order;
  for (const auto &t : temps) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(),
                   [](auto *a, auto *b) { return a->first_step < b->first_step; });

  BufferPlan plan;
  std::vector<Block> blocks;
  for (const PlannedTemp *t : order) {
    int64_t need = (std::max<int64_t>(t->bytes, 1) + align - 1) / align * align;
    Block *best = nullptr;
    for (auto &b : blocks)
      if ((!b.used || b.busy_until < t->first_step) && b.bytes >= need &&
          (!best || b.bytes < best->bytes))
        best = &b;
    if (!best) {
      blocks.push_back({plan.arena_bytes, need, 0, false});
      plan.arena_bytes += need;
      best = &blocks.back();
    }
    best->used = true;
    best->busy_until = t->last_step;
    plan.offset[t->name] = best->offset;
  }
  return plan;
}

}  // namespace tessera
