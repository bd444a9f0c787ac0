// How the compile pipeline picks each kernel's schedule: the kernel cache's first, then (policy
// full) the tuner's, timing candidates on the device, else the cost model's. Identical kernels
// (the same canonical text) are settled once per process, even without a cache file.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "compiler/Lower.h"
#include "compiler/tune/Tuner.h"
#include "runtime/CompileOptions.h"
#include "runtime/DeviceInfo.h"

namespace tessera {

class Backend;
class KernelCache;
struct CacheEntry;
struct CacheKey;

/// The kernel cache's key for step `step` (its cost-model kernel `model`) on device `fingerprint`:
/// the kernel's canonical text, the cost model's schedule for it and the search space's version
/// (SearchSpace.h). A tuned schedule is kept against the schedule it beat and the candidates it
/// was chosen among: when a newer build of the same version proposes another schedule or searches
/// others, the kernel is tuned again instead of keeping a winner that may lose to the new
/// proposal (BERT's softmax reductions: 0.10 ms tuned, 0.03 ms as the cost model now schedules
/// them) or that the new search leaves out on purpose (weights_outgrow_l2).
CacheKey schedule_key(const compiler::PlannedStep &step, const compiler::Kernel &model,
                      const std::string &fingerprint);

/// Records that `schedule` is settled for `key`: later compiles in this process take it, and
/// `cache` (may be null) keeps `entry` for later processes. A cache that fails to store is
/// reported on stderr, not thrown: the run goes on with what it has.
void settle_schedule(KernelCache *cache, const CacheKey &key, const compiler::Schedule &schedule,
                     const CacheEntry &entry);

class ScheduleSelector {
 public:
  /// `cache` is null when the policy is off or no cache file could be opened; `kernels` is how many
  /// steps will ask (for progress reports).
  ScheduleSelector(Backend &backend, const CompileOptions &options, KernelCache *cache,
                   int kernels);
  ~ScheduleSelector();

  /// The schedule of Scheduled step `step` of `program`.
  compiler::Schedule choose(const tile::BoundProgram &program, const compiler::PlannedStep &step);
  /// Schedules as choose() would pick them, but never timed (for `tessera lower`).
  void never_tune() { policy_ = policy_ == TunePolicy::Full ? TunePolicy::Cached : policy_; }

  CompileReport &report() { return report_; }

 private:
  compiler::Schedule tune(const tile::BoundProgram &program, const compiler::PlannedStep &step,
                          const CacheKey &key, KernelReport &entry);
  /// The cache's entry for `key`; a cache that fails to answer is reported and treated as a miss.
  std::optional<CacheEntry> find(const CacheKey &key);

  Backend &backend_;
  compiler::Target target_;
  std::string fingerprint_;
  CompileOptions options_;
  TunePolicy policy_;
  KernelCache *cache_;
  std::unique_ptr<compiler::tune::KernelBench> bench_;  // made when a kernel is first tuned
  CompileReport report_;
  int kernels_, index_ = 0;
};

}  // namespace tessera
