// Export and import of the kernel cache's schedules as JSON lines (docs/kernel-cache.md), so tuning
// results move between machines.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <istream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "compiler/Schedule.h"
#include "runtime/KernelCache.h"
#include "runtime/Sqlite.h"

namespace tessera {

namespace {

using nlohmann::json;

struct Line {
  CacheKey key;
  CacheEntry entry;
};

/// One line of an export as key and entry; throws tile::Error "FILE:N: error: ..." when it is
/// malformed.
Line parse_line(const std::string &text, const std::string &where) {
  auto fail = [&](const std::string &message) -> tile::Error {
    return tile::Error(where + ": error: " + message);
  };
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    throw fail(std::string("malformed JSON: ") + e.what());
  }
  if (!j.is_object()) throw fail("a line must be a JSON object");
  auto string_field = [&](const char *name, bool required) -> std::string {
    auto it = j.find(name);
    if (it == j.end()) {
      if (required) throw fail(std::string("missing field '") + name + "'");
      return "";
    }
    if (!it->is_string()) throw fail(std::string("field '") + name + "' must be a string");
    return it->get<std::string>();
  };
  auto number_field = [&](const char *name, bool required) -> double {
    auto it = j.find(name);
    if (it == j.end()) {
      if (required) throw fail(std::string("missing field '") + name + "'");
      return 0;
    }
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      throw fail(std::string("field '") + name + "' must be a non-negative number");
    return it->get<double>();
  };
  auto integer_field = [&](const char *name) -> int64_t {
    auto it = j.find(name);
    if (it == j.end()) return 0;
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      throw fail(std::string("field '") + name + "' must be a non-negative integer");
    return it->get<int64_t>();
  };

  Line line;
  line.key.kernel = string_field("kernel", true);
  if (line.key.kernel.empty()) throw fail("field 'kernel' is empty");
  line.key.device = string_field("device", true);
  line.key.version = string_field("version", true);
  std::string hash = string_field("kernel_hash", false);
  if (!hash.empty() && hash != KernelCache::hash(line.key.kernel))
    throw fail("field 'kernel_hash' " + hash + " is not the hash of field 'kernel' (" +
               KernelCache::hash(line.key.kernel) + ")");
  // The schedule may be an object (as exported) or the JSON text; either way it is checked and
  // stored in Schedule's canonical form, which is what the tuner writes.
  auto schedule = j.find("schedule");
  if (schedule == j.end()) throw fail("missing field 'schedule'");
  if (!schedule->is_object() && !schedule->is_string())
    throw fail("field 'schedule' must be an object or a string");
  try {
    std::string text = schedule->is_string() ? schedule->get<std::string>() : schedule->dump();
    line.entry.schedule = compiler::Schedule::from_json(text).to_json();
  } catch (const tile::Error &e) {
    std::string message = e.what();
    if (message.rfind("error: ", 0) == 0) message = message.substr(7);
    throw fail("field 'schedule': " + message);
  }
  line.entry.kernel_name = string_field("kernel_name", false);
  line.entry.seconds = number_field("seconds", true);
  line.entry.untuned_seconds = number_field("untuned_seconds", false);
  line.entry.flops = number_field("flops", false);
  int64_t trials = integer_field("trials");
  if (trials > INT32_MAX) throw fail("field 'trials' is too large");
  line.entry.trials = static_cast<int>(trials);
  line.entry.created = integer_field("created");
  return line;
}

}  // namespace

void KernelCache::export_jsonl(std::ostream &out) {
  std::lock_guard lock(mutex_);
  sqlite::Statement s(
      db_,
      "SELECT kernel_name, kernel_hash, device, version, seconds, untuned_seconds, trials, flops, "
      "created, schedule, kernel FROM schedules ORDER BY kernel_name, kernel_hash, device, version",
      path_);
  while (s.step()) {
    nlohmann::ordered_json j;
    j["kernel_name"] = s.text(0);
    j["kernel_hash"] = s.text(1);
    j["device"] = s.text(2);
    j["version"] = s.text(3);
    j["seconds"] = s.real(4);
    j["untuned_seconds"] = s.real(5);
    j["trials"] = s.integer(6);
    j["flops"] = s.real(7);
    j["created"] = s.integer(8);
    // An object reads better; a schedule text that is not JSON (never written by Tessera) stays a
    // string.
    std::string schedule = s.text(9);
    auto parsed = nlohmann::ordered_json::parse(schedule, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded())
      j["schedule"] = schedule;
    else
      j["schedule"] = parsed;
    j["kernel"] = s.text(10);
    out << j.dump() << "\n";
  }
  if (!out) throw tile::Error("error: could not write the kernel cache export");
}

KernelCache::ImportResult KernelCache::import_jsonl(std::istream &in,
                                                    const std::string &name_for_errors) {
  // Every line is checked before anything is written: a bad file imports nothing.
  std::vector<Line> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(parse_line(text, name_for_errors + ":" + std::to_string(number)));
  }
  if (in.bad()) throw tile::Error(name_for_errors + ": error: could not read the file");

  std::lock_guard lock(mutex_);
  sqlite::WriteTransaction txn(db_, path_);
  ImportResult result;
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (const Line &line : lines) {
    switch (store_locked(line.key, line.entry, line.entry.created > 0 ? line.entry.created : now)) {
      case Stored::Added: ++result.added; break;
      case Stored::Improved: ++result.improved; break;
      case Stored::Kept: ++result.kept; break;
    }
  }
  txn.commit();
  return result;
}

}  // namespace tessera
