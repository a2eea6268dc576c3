// Profile: what the engine measured about itself during a run. Per node (the source and
// each measurement): blocks, tags, busy time, time spent waiting for input, the largest
// latency from a block's publication to the node finishing it. From these: each node's
// standalone capacity (tags / busy time) and its share of all busy time; for the whole graph,
// the achieved wall-clock rate. Optionally the per-block spans of every node, for a
// Chrome trace-event timeline.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tagflow {

struct TraceSpan {
  std::uint64_t sequence = 0;
  double begin_us = 0;  // since the start of the run
  double duration_us = 0;
};

struct NodeProfile {
  std::string name;
  std::string kind;  // "source" or the measurement kind
  std::uint64_t blocks = 0;
  std::uint64_t tags = 0;
  double busy_s = 0;
  double wait_s = 0;
  double max_latency_s = 0;
  std::vector<TraceSpan> trace;

  double capacityMTagsPerSecond() const { return busy_s > 0 ? tags / busy_s * 1e-6 : 0; }
};

struct Profile {
  std::vector<NodeProfile> nodes;  // the source first, then measurements in insertion order
  std::uint64_t tags = 0;
  std::uint64_t blocks = 0;
  std::int64_t stream_duration_ps = 0;
  double wall_s = 0;
  int threads = 0;
  std::size_t max_blocks_in_flight = 0;
  std::size_t blocks_in_flight = 0;  // produced but not yet finished by every node (live only)

  double wallMTagsPerSecond() const { return wall_s > 0 ? tags / wall_s * 1e-6 : 0; }
  // Busy time of one measurement node over all measurement busy time (sources excluded: a
  // distributed run's profile holds the nodes of every rank).
  double share(const NodeProfile& node) const;
  // The rate the measurements alone sustain: on one core, tags over their summed busy time; on
  // `threads` cores, bounded by that spread evenly and by the slowest node. What the engine
  // would do with a source that keeps up, whatever fed this run.
  double engineMTagsPerSecond(int threads) const;
  // The rate the source nodes sustain (tags over the largest source busy time).
  double sourceMTagsPerSecond() const;
};

// A fixed-width table: node, kind, tags, busy s, MTags/s, share, wait s, max latency; then
// the graph's wall-clock rate and the engine's capacity beside the source's.
void printProfile(std::ostream& out, const Profile& profile);
// Chrome trace-event JSON ("X" events, one timeline row per node). Throws IoError.
void writeChromeTrace(const std::string& path, const Profile& profile);

}  // namespace tagflow
