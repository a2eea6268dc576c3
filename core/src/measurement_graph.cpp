#include "tagflow/core/measurement_graph.hpp"

#include <tbb/flow_graph.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "tagflow/core/block_pool.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Times one node's work on one block and books it into the node's profile.
class NodeTimer {
 public:
  NodeTimer(NodeProfile& profile, Clock::time_point run_start, std::size_t max_spans)
      : profile_(profile), run_start_(run_start), last_end_(run_start) {
    profile_.trace.reserve(max_spans);
  }

  Clock::time_point begin() {
    const auto now = Clock::now();
    profile_.wait_s += secondsBetween(last_end_, now);
    return now;
  }

  void end(Clock::time_point began, std::uint64_t sequence, std::size_t tags) {
    last_end_ = Clock::now();
    profile_.busy_s += secondsBetween(began, last_end_);
    profile_.blocks += 1;
    profile_.tags += tags;
    if (profile_.trace.size() < profile_.trace.capacity()) {
      profile_.trace.push_back(TraceSpan{sequence, secondsBetween(run_start_, began) * 1e6,
                                         secondsBetween(began, last_end_) * 1e6});
    }
  }

  void latency(Clock::time_point published) {
    profile_.max_latency_s = std::max(profile_.max_latency_s, secondsBetween(published, last_end_));
  }

 private:
  NodeProfile& profile_;
  Clock::time_point run_start_;
  Clock::time_point last_end_;
};

// Checks the block contract cheaply (no scan): tiling, and the first and last tag in range.
void checkBlockContract(const BlockBuffer& block, timestamp_t expected_begin, bool first,
                        std::uint64_t sequence) {
  const std::string where = "source block " + std::to_string(sequence);
  if (!first && block.begin_time != expected_begin) {
    throw DataError(where + " begins at " + std::to_string(block.begin_time) +
                    " ps, but the previous block ended at " + std::to_string(expected_begin) +
                    " ps (blocks must tile time)");
  }
  if (block.end_time < block.begin_time) {
    throw DataError(where + " ends at " + std::to_string(block.end_time) +
                    " ps, before its begin " + std::to_string(block.begin_time) + " ps");
  }
  if (!block.tags.empty() &&
      (block.tags.front().time < block.begin_time || block.tags.back().time >= block.end_time)) {
    throw DataError(where + " holds tags outside its interval [" +
                    std::to_string(block.begin_time) + ", " + std::to_string(block.end_time) +
                    ") ps");
  }
}

// Cuts the block at stream time `cut` (exclusive): tags at or after it are dropped.
void cutBlock(BlockBuffer& block, timestamp_t cut) {
  const auto keep = std::lower_bound(block.tags.begin(), block.tags.end(), cut,
                                     [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
                    block.tags.begin();
  block.tags = block.tags.first(static_cast<std::size_t>(keep));
  while (!block.special.empty() && block.special.back() >= keep) block.special.pop_back();
  block.end_time = cut;
}

}  // namespace

MeasurementGraph::MeasurementGraph(Source& source, GraphOptions options)
    : source_(source), options_(std::move(options)) {
  if (options_.max_blocks_in_flight < 1 || options_.max_blocks_in_flight > 4096) {
    throw InvalidArgument("max_blocks_in_flight " + std::to_string(options_.max_blocks_in_flight) +
                          " is invalid (valid: 1..4096)");
  }
  if (options_.threads < 0) {
    throw InvalidArgument("threads " + std::to_string(options_.threads) +
                          " is invalid (valid: 0 for all cores, or >= 1)");
  }
}

MeasurementGraph::~MeasurementGraph() = default;

Measurement& MeasurementGraph::add(Measurement& measurement) {
  for (const Measurement* existing : measurements_) {
    if (existing == &measurement) {
      throw InvalidArgument("measurement '" + measurement.name() + "' is already in the graph");
    }
    if (existing->name() == measurement.name()) {
      throw InvalidArgument("duplicate measurement name '" + measurement.name() +
                            "' (names must be unique in a graph)");
    }
  }
  measurements_.push_back(&measurement);
  return measurement;
}

// The stop flag is reset before the run is handed to another thread, so that a requestStop()
// made right after runAsync() returns is not lost.
Profile MeasurementGraph::run(timestamp_t duration_ps) {
  stop_requested_.store(false, std::memory_order_relaxed);
  return runStream(duration_ps);
}

std::future<Profile> MeasurementGraph::runAsync(timestamp_t duration_ps) {
  stop_requested_.store(false, std::memory_order_relaxed);
  return std::async(std::launch::async, [this, duration_ps] { return runStream(duration_ps); });
}

Profile MeasurementGraph::runStream(timestamp_t duration_ps) {
  if (measurements_.empty()) throw InvalidArgument("the graph has no measurements to run");
  if (duration_ps == 0 || duration_ps < -1) {
    throw InvalidArgument("run duration " + std::to_string(duration_ps) +
                          " ps is invalid (valid: > 0, or -1 for the whole stream)");
  }
  for (Measurement* measurement : measurements_) measurement->streamStarting();

  const int threads = options_.threads > 0 ? options_.threads : tbb::info::default_concurrency();
  Profile profile;
  profile.threads = threads;
  profile.max_blocks_in_flight = options_.max_blocks_in_flight;
  profile.nodes.resize(measurements_.size() + 1);
  profile.nodes[0].name = "source";
  profile.nodes[0].kind = "source";
  for (std::size_t i = 0; i < measurements_.size(); ++i) {
    profile.nodes[i + 1].name = measurements_[i]->name();
    profile.nodes[i + 1].kind = measurements_[i]->kind();
  }

  // In flight: admitted by the limiter, plus one the input node holds back, plus slack.
  BlockPool pool(options_.max_blocks_in_flight + 2, source_.maxBlockTags());
  const auto run_start = Clock::now();
  std::vector<NodeTimer> timers;
  timers.reserve(profile.nodes.size());
  for (auto& node : profile.nodes) timers.emplace_back(node, run_start, options_.max_trace_spans);

  bool ended = false;
  bool first = true;
  timestamp_t stream_start = 0;
  timestamp_t next_begin = 0;
  std::uint64_t sequence = 0;
  auto last_progress = run_start;

  // The input and limiter nodes pass plain pointers: the input node keeps a copy of the last
  // item it handed out, and a counted reference kept there would hold that block (and its
  // limiter token) until the next block is produced, which stalls the graph with one block in
  // flight. The reference is taken after the limiter.
  auto produce = [&](tbb::flow_control& control) -> PooledBlock* {
    if (ended || stop_requested_.load(std::memory_order_relaxed)) {
      control.stop();
      return nullptr;
    }
    PooledBlock* block = pool.tryAcquire();
    if (block == nullptr) throw std::logic_error("block pool exhausted: back-pressure broken");
    const auto began = timers[0].begin();
    if (!source_.next(block->buffer)) {
      pool.giveBack(block);
      ended = true;
      control.stop();
      return nullptr;
    }
    checkBlockContract(block->buffer, next_begin, first, sequence);
    if (first) stream_start = block->buffer.begin_time;
    first = false;
    if (duration_ps > 0 && block->buffer.end_time - stream_start >= duration_ps) {
      cutBlock(block->buffer, stream_start + duration_ps);
      ended = true;
    }
    next_begin = block->buffer.end_time;
    block->sequence = sequence++;
    timers[0].end(began, block->sequence, block->buffer.tags.size());
    block->published = Clock::now();
    profile.stream_duration_ps = block->buffer.end_time - stream_start;
    if (options_.progress &&
        secondsBetween(last_progress, block->published) >= options_.progress_interval_s) {
      last_progress = block->published;
      options_.progress(Progress{profile.nodes[0].tags, profile.nodes[0].blocks,
                                 profile.stream_duration_ps,
                                 secondsBetween(run_start, last_progress)});
    }
    return block;
  };

  struct StreamEndNotifier {
    const std::vector<Measurement*>& measurements;
    ~StreamEndNotifier() {
      for (Measurement* measurement : measurements) measurement->streamEnded();
    }
  } notify_stream_end{measurements_};

  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::flow::graph graph;
    tbb::flow::limiter_node<PooledBlock*, int> limiter(graph, options_.max_blocks_in_flight);
    std::atomic<bool> accepting_releases{true};
    pool.setReleaseHook([&] {
      if (accepting_releases.load(std::memory_order_acquire)) limiter.decrementer().try_put(1);
    });
    tbb::flow::input_node<PooledBlock*> input(graph, produce);
    tbb::flow::function_node<PooledBlock*, BlockRef> publish(
        graph, tbb::flow::unlimited, [](PooledBlock* block) { return BlockRef(block); });
    tbb::flow::make_edge(input, limiter);
    tbb::flow::make_edge(limiter, publish);

    using Sequencer = tbb::flow::sequencer_node<BlockRef>;
    using Worker = tbb::flow::function_node<BlockRef, tbb::flow::continue_msg>;
    std::vector<std::unique_ptr<Sequencer>> sequencers;
    std::vector<std::unique_ptr<Worker>> workers;
    for (std::size_t i = 0; i < measurements_.size(); ++i) {
      Measurement* measurement = measurements_[i];
      NodeTimer* timer = &timers[i + 1];
      sequencers.push_back(std::make_unique<Sequencer>(
          graph, [](const BlockRef& block) { return static_cast<std::size_t>(block->sequence); }));
      workers.push_back(std::make_unique<Worker>(
          graph, tbb::flow::serial, [measurement, timer](const BlockRef& block) {
            const auto began = timer->begin();
            const TagBlock view = block->view();
            measurement->processBlock(view);
            timer->end(began, view.sequence, view.tags.size());
            timer->latency(block->published);
            return tbb::flow::continue_msg();
          }));
      tbb::flow::make_edge(publish, *sequencers.back());
      tbb::flow::make_edge(*sequencers.back(), *workers.back());
    }

    struct ReleaseGuard {
      std::atomic<bool>& accepting;
      BlockPool& pool;
      ~ReleaseGuard() {
        accepting.store(false, std::memory_order_release);
        pool.setReleaseHook(nullptr);
      }
    };
    // Declared after the nodes: on an exception it stops releases reaching the limiter
    // before the nodes (and the blocks they still buffer) are destroyed.
    ReleaseGuard guard{accepting_releases, pool};
    input.activate();
    graph.wait_for_all();
  });

  profile.wall_s = secondsBetween(run_start, Clock::now());
  profile.tags = profile.nodes[0].tags;
  profile.blocks = profile.nodes[0].blocks;
  return profile;
}

}  // namespace tagflow
