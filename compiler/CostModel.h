// Picks a kernel's schedule from device facts: vector width from the target's vector bits and
// the dtype, a register-blocked accumulator tile for contractions, parallel outer loops.
#pragma once

#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler {

/// The cost model's schedule; the kernel cache or the tuner may replace it
/// (runtime/ScheduleSelector.h).
Schedule choose_schedule(const ContractionNest &nest, const Target &target);

/// Whether a CPU contraction with vector index `v` reads activations too large for L2 (the other
/// operand spans more than half of it) with weights that fit (the whole vector operand in half of
/// it): then every output index but `v` goes outside the vector tiles (activations_first), so
/// that each row tile's activations are read once and reused from L1 by every vector tile, the
/// weights' panels coming from L2. With vector tiles outermost, the activations would stream from
/// L3 or memory once per tile; timed alone, as the tuner times it, they stay in L3 and it does not
/// show (ResNet-50 b8's 56x56 1x1 convolutions, 11.1 -> 7.1 ms in the network, Intel kind).
bool activations_outgrow_l2(const ContractionNest &nest, int v, const Target &target);

/// Whether a CPU contraction with vector index `v` has weights (the whole vector operand) larger
/// than half of L2 and than its activations (BERT's 768 x 3072 products): then the vector tiles go
/// outermost in every candidate of the tuner, so that each core reads its own share of the weights.
/// With rows outermost every core streams all of them; timed alone, as the tuner times it, they
/// stay in L3 and it does not show (BERT's FFN 3072 -> 768 product: 2.48 ms alone with rows
/// outermost, 5.45 in the network, against the cost model's 2.89; Intel kind).
bool weights_outgrow_l2(const ContractionNest &nest, int v, const Target &target);

/// The output index whose tile loop is the outermost of more than one iteration in `s` (-1: none):
/// the loop a CPU schedule runs in parallel.
int outermost_tile_loop(const ContractionNest &nest, const Schedule &s);

/// `s` with its loop order: the output indices but `v` in order, then `v`, then the reductions.
void activations_first(const ContractionNest &nest, int v, Schedule &s);

/// `s` as a CPU kernel in a network should run it: a batched product (every operand read by an
/// output index: attention's heads) runs its batch in parallel where the cores split it evenly,
/// as the kernels that write its operands and read its output do. Otherwise, where its parallel
/// loop is over vector tiles
/// (channels) but its activations of one image (the leading output index), read and written,
/// outweigh twice its weights, the output indices go first (activations_first), so that each core
/// computes, and reads, its own rows (or images) as the kernels around it do, and only the smaller
/// weights are read by every core; only where every core then gets as many row tiles as the
/// others, or at least four. The tuner times a kernel alone, where its inputs are in every cache,
/// so tuned schedules take this too (finished_step).
/// ResNet-50 b1's 1x1 64 -> 256 convolutions on 56x56 with a residual ran 0.81 -> 0.57 ms in the
/// network (Intel kind, weights compiled in; docs/runtime.md).
Schedule in_network_order(const ContractionNest &nest, const Schedule &s, const Target &target);

}  // namespace tessera::compiler
