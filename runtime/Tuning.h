// How a device picks each kernel's schedule while it compiles: the kernel cache first, then (policy
// online) the tuner timing candidates on the device, else the cost model. Identical kernels (the
// same canonical text) are tuned once per process even without a cache file.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "compiler/Lower.h"
#include "compiler/Nest.h"
#include "compiler/tune/Tuner.h"
#include "runtime/Device.h"

namespace tessera {

class KernelCache;
struct CacheEntry;
struct CacheKey;

/// TESSERA_TUNE: online (also when unset), cached or off. Throws tile::Error for another value.
TunePolicy tune_policy_from_env();
/// The device part of the cache key: backend and every fact the device reports (vendor, name,
/// driver, compute units, ISA...).
std::string device_fingerprint(const DeviceInfo &info);
/// The budget of tuning a kernel on first use (policy online, no budget given).
compiler::tune::Budget online_budget();

class ScheduleSelector {
 public:
  /// `bench` times kernels on the device; null means nothing can be timed (the cost model decides
  /// what the cache lacks).
  ScheduleSelector(const DeviceInfo &device, const compiler::TargetInfo &target, compiler::tune::KernelBench *bench,
                   const CompileOptions &options);
  ~ScheduleSelector();

  /// LowerOptions::choose.
  compiler::Schedule choose(const compiler::ContractionNest &nest, const compiler::Kernel &kernel,
                            const compiler::Schedule &model);
  /// The lowering options that route every schedule through choose().
  compiler::LowerOptions lower_options();
  CompileReport &report() { return report_; }
  /// The kernel cache, null when the policy is off or no cache could be opened; with the key parts
  /// of this device, for compiled binaries stored beside the schedules.
  KernelCache *cache() { return cache_.get(); }
  const std::string &fingerprint() const { return fingerprint_; }
  /// Whether kernels the cache lacks will be timed (policy online with a bench).
  bool may_tune() const { return policy_ == TunePolicy::Online && bench_; }
  /// The program being compiled: when a kernel is first tuned with a progress callback, a
  /// lowering that only counts gives the `count` of progress reports (a compile served entirely
  /// from the cache never pays for it). `program` must outlive the compile.
  void count_kernels(const tile::BoundProgram &program) { program_ = &program; }

 private:
  compiler::Schedule tune(const compiler::ContractionNest &nest, const compiler::Kernel &kernel,
                          const compiler::Schedule &model, const CacheKey &key, const std::string &memo_key,
                          KernelReport &entry);
  /// The cache's entry for `key`; a cache that fails to answer is reported and treated as a miss.
  std::optional<CacheEntry> find(const CacheKey &key);

  std::string fingerprint_;
  compiler::TargetInfo target_;
  compiler::tune::KernelBench *bench_;
  CompileOptions options_;
  TunePolicy policy_;
  std::unique_ptr<KernelCache> cache_;
  CompileReport report_;
  const tile::BoundProgram *program_ = nullptr;
  int kernels_ = -1, index_ = 0;  // kernels_: -1 until counted
};

/// How every tuning device compiles: lowers `program` for `target` with each kernel's schedule from
/// a ScheduleSelector (cache, tuner on `bench`, cost model), builds the executable with
/// `build(lowered, selector)` and gives it the compile report, the whole compile time included.
std::unique_ptr<Executable> compile_with_schedules(
    const tile::BoundProgram &program, const DeviceInfo &device, const compiler::TargetInfo &target,
    compiler::tune::KernelBench *bench, const CompileOptions &options,
    const std::function<std::unique_ptr<Executable>(compiler::LoweredProgram, ScheduleSelector &)> &build);

}  // namespace tessera
