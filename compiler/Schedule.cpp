#include "compiler/Schedule.h"

#include <nlohmann/json.hpp>

#include "tile/Diagnostics.h"

namespace tessera::compiler {

std::string Schedule::to_json() const {
  // ordered_json keeps insertion order, so the text is stable across versions of the struct's use.
  nlohmann::ordered_json j;
  j["tile_sizes"] = tile_sizes;
  j["loop_order"] = loop_order;
  j["vector_index"] = vector_index;
  j["vector_width"] = vector_width;
  j["unroll"] = unroll;
  j["parallel_loops"] = parallel_loops;
  j["workgroup"] = workgroup;
  j["use_local_memory"] = use_local_memory;
  if (tiles_per_item != 1)
    j["tiles_per_item"] = tiles_per_item;            // absent from schedules that do not use it
  if (split_reduction) j["split_reduction"] = true;  // likewise
  return j.dump();
}

Schedule Schedule::from_json(const std::string &json) {
  try {
    auto j = nlohmann::json::parse(json);
    if (!j.is_object()) throw tile::Error("error: schedule JSON is not an object");
    Schedule s;
    s.tile_sizes = j.at("tile_sizes").get<std::vector<int64_t>>();
    s.loop_order = j.at("loop_order").get<std::vector<int>>();
    s.vector_index = j.at("vector_index").get<int>();
    s.vector_width = j.at("vector_width").get<int>();
    s.unroll = j.at("unroll").get<int>();
    s.parallel_loops = j.at("parallel_loops").get<int>();
    s.workgroup = j.value("workgroup", std::vector<int64_t>{});
    s.use_local_memory = j.value("use_local_memory", false);
    s.tiles_per_item = j.value("tiles_per_item", int64_t{1});
    s.split_reduction = j.value("split_reduction", false);
    if (s.vector_width < 1 || s.unroll < 1 || s.parallel_loops < 0 || s.tiles_per_item < 1)
      throw tile::Error(
          "error: schedule JSON has a non-positive vector_width, unroll or tiles_per_item");
    for (int64_t t : s.tile_sizes)
      if (t < 1) throw tile::Error("error: schedule JSON has a tile size below 1");
    return s;
  } catch (const nlohmann::json::exception &e) {
    throw tile::Error(std::string("error: malformed schedule JSON: ") + e.what());
  }
}

}  // namespace tessera::compiler
