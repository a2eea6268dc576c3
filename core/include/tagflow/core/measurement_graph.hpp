// MeasurementGraph: runs a Source through virtual channels and measurements on a oneTBB
// flow graph. The source node publishes blocks from a BlockPool; a limiter bounds the blocks
// in flight (a slow measurement slows the source, memory stays flat); every node is a serial
// node behind a sequencer, so it sees every block once and in order, while different nodes
// work on the same block, or on successive blocks, on different cores. Each node is profiled.
//
// Virtual channels get their output channel numbers when added; a node reads the stream of
// the virtual channels it needs (see graph_topology), so each virtual channel's output is
// computed once per block for all its readers. Before a run the graph checks that every
// channel a node reads is produced upstream and that no virtual channel depends on itself.
// Measurements can be added and removed while the graph runs: an added one sees the stream
// from the next block the source produces, a removed one stops after the block the source
// produced last.
//
//   SyntheticSource source(config);
//   MeasurementGraph graph(source);
//   auto& herald = graph.emplace<DelayedChannel>("herald", 2, 1'000);
//   auto& g2 = graph.emplace<Correlation>("g2", herald.getChannel(), 1, 10, 1000);
//   Profile profile = graph.run(10 * kPicosecondsPerSecond);
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/source.hpp"
#include "tagflow/core/virtual_channel.hpp"

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
  // Where virtual channel numbers begin (0: kFirstVirtualChannel), raised above every channel
  // the source lists. A source that lists none (raw and tag files, merged streams) may carry
  // channels up to any number: they must stay below it, or a run with virtual channels stops
  // with an error at the first tag that would be taken for a virtual channel's.
  channel_t first_virtual_channel = 0;
};

class MeasurementGraph {
 public:
  explicit MeasurementGraph(Source& source, GraphOptions options = {});
  ~MeasurementGraph();
  MeasurementGraph(const MeasurementGraph&) = delete;
  MeasurementGraph& operator=(const MeasurementGraph&) = delete;

  // Adds a measurement the caller owns; it must outlive every run (or its removal). Names
  // must be unique. Allowed while the graph runs.
  Measurement& add(Measurement& measurement);
  // Adds a virtual channel the caller owns and allocates its output channels. Not while the
  // graph runs.
  VirtualChannel& add(VirtualChannel& channel);
  // Constructs a measurement or virtual channel the graph owns.
  template <typename Node, typename... Args>
  Node& emplace(Args&&... args) {
    static_assert(std::is_base_of_v<Measurement, Node> || std::is_base_of_v<VirtualChannel, Node>,
                  "emplace builds measurements and virtual channels");
    auto owned = std::make_unique<Node>(std::forward<Args>(args)...);
    Node& node = *owned;
    add(node);
    if constexpr (std::is_base_of_v<Measurement, Node>) {
      owned_.push_back(std::move(owned));
    } else {
      owned_channels_.push_back(std::move(owned));
    }
    return node;
  }
  // Takes a measurement out of the graph; while running, returns once it has processed the
  // last block it will see, and in any case once every withMeasurements() call that may see it
  // has returned. A measurement the graph owns is destroyed.
  void remove(Measurement& measurement);

  // Checks the wiring (channels produced upstream, no cycles); run() does this too. Throws
  // InvalidArgument naming the node and the channel.
  void validate() const;

  // Processes the stream until the source ends, `duration_ps` of stream time has passed
  // (cut exactly, also inside a block), or requestStop() is called. Rethrows the first
  // exception of any node. A graph can be run again; measurements keep their data, and the
  // next run goes on where this one was cut (the rest of the cut block comes first), inside
  // the overflow interval it was cut in, if any. Each run is a capture of its own: pairs
  // (Correlation, HistogramLogBins) do not span a cut.
  Profile run(timestamp_t duration_ps = -1);
  std::future<Profile> runAsync(timestamp_t duration_ps = -1);
  // Counts only [begin, end) of the stream (docs/parallel.md): every measurement, each shard of
  // a sharded one, keeps that range as its shard plan (also for later runs); the source starts
  // at `begin` less the widest margin a measurement reads before its range, when it can seek
  // (Source::seekTo), and otherwise skips the blocks before; the run ends once the stream has
  // passed `end` plus the widest margin after. The partial states of consecutive ranges merge
  // in order into the results of one pass. `origin` is where one pass over the whole stream
  // starts (grids of time bins align to it); by default the source's Source::timeSpan() tells.
  // Virtual channels start their look-back earlier (VirtualChannel::lookBack()). Throws
  // InvalidArgument naming a measurement that cannot split or a virtual channel whose output
  // depends on the whole past.
  Profile runRange(timestamp_t begin, timestamp_t end,
                   timestamp_t origin = ShardPlan::kStreamStart);
  // Ends the run after the block being produced now, and asks the source to stop waiting for
  // data (Source::requestStop()); safe from any thread.
  void requestStop() {
    stop_requested_.store(true, std::memory_order_relaxed);
    source_.requestStop();
  }

  // The profile of the run in progress so far (no timeline, no latencies), with the blocks in
  // flight; safe from any thread. Empty nodes when no run is in progress.
  Profile liveProfile() const;

  // The measurements as they are now. One that another thread removes meanwhile may be
  // destroyed as soon as remove() returns: withMeasurements() keeps them alive.
  std::vector<Measurement*> measurements() const;
  // Calls `use` with the measurements as they are now, which stay alive until it returns:
  // remove() of one of them waits for that. For a thread that reads measurements while another
  // may remove them (the live view). `use` must not remove() a measurement itself.
  void withMeasurements(const std::function<void(const std::vector<Measurement*>&)>& use) const;
  // Virtual channels are never removed, and the caller's own outlive the graph: the pointers
  // stay valid for the graph's life.
  std::vector<VirtualChannel*> virtualChannels() const;

  // Something that reads the graph from threads of its own (the live view). A graph destroyed
  // while one is attached calls its graphEnding() first, which must end those reads and make
  // sure no later one begins; an observer destroyed first detaches itself.
  class Observer {
   public:
    virtual void graphEnding() = 0;

   protected:
    ~Observer() = default;
  };
  void attach(Observer& observer);
  void detach(Observer& observer);
  const GraphOptions& options() const { return options_; }
  // The number the next virtual channel gets: above every channel of the source, and at least
  // GraphOptions::first_virtual_channel (kFirstVirtualChannel when it is 0).
  channel_t nextVirtualChannel() const { return next_virtual_channel_; }
  static constexpr channel_t kFirstVirtualChannel = 1000;
  // The bounds of GraphOptions: threads far past any machine's cores, and a thread count the
  // scheduler's arena can hold.
  static constexpr int kMaxThreads = 1024;
  static constexpr std::size_t kMaxBlocksInFlight = 4096;

  struct Run;  // the state of a run in progress (defined in the implementation)

 private:
  Profile runStream(timestamp_t duration_ps,
                    StreamSpan window = {std::numeric_limits<timestamp_t>::min(),
                                         std::numeric_limits<timestamp_t>::max()});
  // Plans the topology and connects a node per virtual channel and measurement to `run`
  // (mutex_ held).
  // Measurements start the stream inside an overflow interval when `starts_in_overflow`.
  void connectConsumers(Run& run, std::size_t pool_blocks, bool starts_in_overflow);

  Source& source_;
  GraphOptions options_;
  channel_t first_virtual_channel_;
  channel_t next_virtual_channel_;
  mutable std::mutex mutex_;  // guards the node lists against adds/removals during a run
  std::vector<Measurement*> measurements_;
  // The withMeasurements() calls in progress, by the number of removals made when each began
  // (guarded by mutex_): a removal waits for the ones that began before it.
  std::uint64_t removals_ = 0;
  mutable std::map<std::uint64_t, std::size_t> users_;
  mutable std::condition_variable users_done_;
  std::vector<VirtualChannel*> channels_;
  std::vector<std::unique_ptr<Measurement>> owned_;
  std::vector<std::unique_ptr<VirtualChannel>> owned_channels_;
  std::vector<Observer*> observers_;  // guarded by mutex_
  std::atomic<bool> stop_requested_{false};
  // The part of a block after the cut that ended the last run: the next run's first block.
  BlockBuffer carried_;
  bool has_carried_ = false;
  // Whether the last run left the stream inside an overflow interval; empty when the next run
  // starts the stream afresh (the first run, after the source ended or seeked).
  std::optional<bool> stream_overflow_;
  std::atomic<bool> running_{false};
  std::shared_ptr<Run> run_;  // set while a run is in progress (guarded by mutex_)
};

}  // namespace tagflow
