// `tessera cache stats|list|export FILE|import FILE|clear [--json]`: looks at and moves the kernel
// cache
// ($TESSERA_CACHE, else the default file; docs/kernel-cache.md).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "frontends/cli/Commands.h"
#include "runtime/FileBatch.h"
#include "runtime/KernelCache.h"
#include "tile/Diagnostics.h"

namespace tessera::cli {

namespace {

using nlohmann::ordered_json;

std::unique_ptr<KernelCache> open_cache() { return KernelCache::open(KernelCache::default_path()); }

std::string format(const char *fmt, double a) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, a);
  return text;
}

/// "backend:device" out of a fingerprint "backend=opencl;...;device=...;..." (cpu= on the LLVM
/// device): enough to tell devices apart in a table.
std::string short_device(const std::string &fingerprint) {
  std::string backend, name;
  std::istringstream in(fingerprint);
  for (std::string field; std::getline(in, field, ';');) {
    auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "backend") backend = value;
    if (name.empty() && (key == "device" || key == "name" || key == "cpu")) name = value;
  }
  std::string s = backend.empty() ? fingerprint : name.empty() ? backend : backend + ":" + name;
  return s.size() > 28 ? s.substr(0, 27) + "~" : s;
}

ordered_json schedule_json(const std::string &schedule) {
  ordered_json parsed = ordered_json::parse(schedule, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? ordered_json(schedule) : parsed;
}

void stats(bool json) {
  auto cache = open_cache();
  KernelCache::Stats s = cache->stats();
  if (json) {
    ordered_json j = {{"path", cache->path()},
                      {"schedules", s.schedules},
                      {"binaries", s.binaries},
                      {"devices", s.devices},
                      {"file_bytes", s.file_bytes}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "cache      " << cache->path() << "\n"
            << "schedules  " << s.schedules << "\n"
            << "binaries   " << s.binaries << "\n"
            << "devices    " << s.devices << "\n"
            << "size       " << s.file_bytes << " bytes\n";
}

void list(bool json) {
  auto cache = open_cache();
  std::vector<CacheEntry> entries = cache->list();
  if (json) {
    ordered_json array = ordered_json::array();
    for (const auto &e : entries)
      array.push_back({{"kernel_name", e.kernel_name},
                       {"kernel_hash", e.kernel_hash},
                       {"device", e.device},
                       {"version", e.version},
                       {"trials", e.trials},
                       {"untuned_seconds", e.untuned_seconds},
                       {"seconds", e.seconds},
                       {"flops", e.flops},
                       {"created", e.created},
                       {"schedule", schedule_json(e.schedule)}});
    std::cout << array.dump(2) << "\n";
    return;
  }
  std::printf("%-24s %-12s %-28s %-8s %6s %11s %11s %8s %9s  %s\n", "kernel", "hash", "device",
              "version", "trials", "untuned ms", "tuned ms", "speed-up", "GFLOP/s", "schedule");
  for (const auto &e : entries) {
    bool timed = e.seconds > 0, both = timed && e.untuned_seconds > 0;
    std::printf("%-24s %-12s %-28s %-8s %6d %11s %11s %8s %9s  %s\n",
                e.kernel_name.substr(0, 24).c_str(), e.kernel_hash.substr(0, 12).c_str(),
                short_device(e.device).c_str(), e.version.c_str(), e.trials,
                e.untuned_seconds > 0 ? format("%.3f", e.untuned_seconds * 1e3).c_str() : "-",
                timed ? format("%.3f", e.seconds * 1e3).c_str() : "-",
                both ? format("%.2fx", e.untuned_seconds / e.seconds).c_str() : "-",
                timed && e.flops > 0 ? format("%.1f", e.flops / e.seconds / 1e9).c_str() : "-",
                e.schedule.c_str());
  }
  std::printf("%zu schedule%s in %s\n", entries.size(), entries.size() == 1 ? "" : "s",
              cache->path().c_str());
}

/// FILE "-" is standard output; a file is written whole or not at all.
void export_to(const std::string &file, bool json) {
  auto cache = open_cache();
  std::ostringstream out;
  cache->export_jsonl(out);
  std::string text = out.str();
  int64_t count = static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
  if (file == "-") {
    std::cout << text;
    return;
  }
  write_file_atomically(file, text);
  if (json) {
    std::cout << ordered_json({{"file", file}, {"schedules", count}}).dump(2) << "\n";
    return;
  }
  std::cout << "exported " << count << " schedule" << (count == 1 ? "" : "s") << " to " << file
            << "\n";
}

void import_from(const std::string &file, bool json) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw tile::Error(file + ": error: cannot read file");
  auto cache = open_cache();
  KernelCache::ImportResult r = cache->import_jsonl(in, file);
  if (json) {
    std::cout << ordered_json({{"file", file},
                               {"added", r.added},
                               {"improved", r.improved},
                               {"kept", r.kept}})
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "imported " << file << ": " << r.added << " added, " << r.improved << " improved, "
            << r.kept << " kept (the cache's timing was as good or better)\n";
}

void clear(bool json) {
  auto cache = open_cache();
  KernelCache::Stats before = cache->stats();
  cache->clear();
  if (json) {
    std::cout << ordered_json({{"path", cache->path()},
                               {"schedules_removed", before.schedules},
                               {"binaries_removed", before.binaries}})
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "cleared " << cache->path() << ": " << before.schedules << " schedules and "
            << before.binaries << " binaries removed\n";
}

}  // namespace

void add_cache_command(CLI::App &app) {
  CLI::App *cmd = app.add_subcommand(
      "cache", "Look at, export, import or clear the kernel cache ($TESSERA_CACHE)");
  cmd->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  auto file = std::make_shared<std::string>();
  auto sub = [&](const char *name, const char *help) {
    CLI::App *s = cmd->add_subcommand(name, help);
    s->add_flag("--json", *json, "Print JSON");
    return s;
  };
  sub("stats", "Counts of schedules, binaries and devices, and the file's size")->callback([json] {
    stats(*json);
  });
  sub("list", "Every tuned schedule: times, speed-up, GFLOP/s")->callback([json] { list(*json); });
  CLI::App *exp = sub("export", "Write the schedules as JSON lines to FILE ('-': standard output)");
  exp->add_option("FILE", *file, "The JSON lines file")->required();
  exp->callback([json, file] { export_to(*file, *json); });
  CLI::App *imp =
      sub("import", "Add the schedules of a JSON lines file; a better timing in the cache is kept");
  imp->add_option("FILE", *file, "The JSON lines file")->required();
  imp->callback([json, file] { import_from(*file, *json); });
  sub("clear", "Remove every schedule and binary")->callback([json] { clear(*json); });
}

}  // namespace tessera::cli
