// MeasurementGraph: runs a Source through a set of measurements on a oneTBB flow graph.
// The source node publishes blocks from a BlockPool; a limiter bounds the blocks in flight
// (a slow measurement slows the source, memory stays flat); every measurement is a serial
// node behind a sequencer, so it sees every block once and in order, while different
// measurements work on the same block on different cores. Each node is profiled.
//
//   SyntheticSource source(config);
//   MeasurementGraph graph(source);
//   auto& counter = graph.emplace<Counter>("counter", std::vector<channel_t>{1, 2}, 1'000'000'000,
//   100); Profile profile = graph.run(10 * kPicosecondsPerSecond);
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/source.hpp"

namespace tagflow {

struct Progress {
  std::uint64_t tags = 0;
  std::uint64_t blocks = 0;
  timestamp_t stream_time_ps = 0;  // since the stream's start
  double elapsed_s = 0;
};

struct GraphOptions {
  std::size_t max_blocks_in_flight = 8;
  int threads = 0;                  // 0: one per core
  std::size_t max_trace_spans = 0;  // per node; 0 records no timeline
  std::function<void(const Progress&)> progress{};
  double progress_interval_s = 0.25;
};

class MeasurementGraph {
 public:
  explicit MeasurementGraph(Source& source, GraphOptions options = {});
  ~MeasurementGraph();
  MeasurementGraph(const MeasurementGraph&) = delete;
  MeasurementGraph& operator=(const MeasurementGraph&) = delete;

  // Adds a measurement the caller owns; it must outlive every run. Names must be unique.
  Measurement& add(Measurement& measurement);
  // Constructs a measurement the graph owns.
  template <typename M, typename... Args>
  M& emplace(Args&&... args) {
    auto owned = std::make_unique<M>(std::forward<Args>(args)...);
    M& measurement = *owned;
    add(measurement);
    owned_.push_back(std::move(owned));
    return measurement;
  }

  // Processes the stream until the source ends, `duration_ps` of stream time has passed
  // (cut exactly, also inside a block), or requestStop() is called. Rethrows the first
  // exception of any node. A graph can be run again; measurements keep their data.
  Profile run(timestamp_t duration_ps = -1);
  std::future<Profile> runAsync(timestamp_t duration_ps = -1);
  // Ends the run after the block being produced now; safe from any thread.
  void requestStop() { stop_requested_.store(true, std::memory_order_relaxed); }

  const std::vector<Measurement*>& measurements() const { return measurements_; }
  const GraphOptions& options() const { return options_; }

 private:
  Profile runStream(timestamp_t duration_ps);

  Source& source_;
  GraphOptions options_;
  std::vector<Measurement*> measurements_;
  std::vector<std::unique_ptr<Measurement>> owned_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace tagflow
