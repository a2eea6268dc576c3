#include "tagflow/core/measurement_graph.hpp"

#include <tbb/flow_graph.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "graph_topology.hpp"
#include "saturating_add.hpp"
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
    live_wait_s_.store(profile_.wait_s, std::memory_order_relaxed);
    return now;
  }

  void end(Clock::time_point began, std::uint64_t sequence, std::size_t tags) {
    last_end_ = Clock::now();
    profile_.busy_s += secondsBetween(began, last_end_);
    profile_.blocks += 1;
    profile_.tags += tags;
    live_busy_s_.store(profile_.busy_s, std::memory_order_relaxed);
    live_blocks_.store(profile_.blocks, std::memory_order_relaxed);
    live_tags_.store(profile_.tags, std::memory_order_relaxed);
    if (profile_.trace.size() < profile_.trace.capacity()) {
      profile_.trace.push_back(TraceSpan{sequence, secondsBetween(run_start_, began) * 1e6,
                                         secondsBetween(began, last_end_) * 1e6});
    }
  }

  void latency(Clock::time_point published) {
    profile_.max_latency_s = std::max(profile_.max_latency_s, secondsBetween(published, last_end_));
  }

  // The counters so far, readable from any thread while the node works (no trace, no latency).
  NodeProfile live() const {
    NodeProfile out;
    out.name = profile_.name;
    out.kind = profile_.kind;
    out.blocks = live_blocks_.load(std::memory_order_relaxed);
    out.tags = live_tags_.load(std::memory_order_relaxed);
    out.busy_s = live_busy_s_.load(std::memory_order_relaxed);
    out.wait_s = live_wait_s_.load(std::memory_order_relaxed);
    return out;
  }

 private:
  NodeProfile& profile_;
  Clock::time_point run_start_;
  Clock::time_point last_end_;
  // Copies of the profile's counters that other threads may read while the node runs; the
  // profile itself belongs to the thread running the node.
  std::atomic<std::uint64_t> live_blocks_{0};
  std::atomic<std::uint64_t> live_tags_{0};
  std::atomic<double> live_busy_s_{0};
  std::atomic<double> live_wait_s_{0};
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

// The part of the block from stream time `cut` on, as a block of its own.
void keepRest(const BlockBuffer& block, timestamp_t cut, BlockBuffer& rest) {
  const auto from = std::lower_bound(block.tags.begin(), block.tags.end(), cut,
                                     [](const Tag& tag, timestamp_t t) { return tag.time < t; });
  rest.storage.assign(from, block.tags.end());
  rest.publishStorage();
  rest.begin_time = cut;
  rest.end_time = block.end_time;
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

using Sequencer = tbb::flow::sequencer_node<BlockRef>;
using Worker = tbb::flow::function_node<BlockRef, tbb::flow::continue_msg>;
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
constexpr int kSourceStream = 0;  // streams: 0 the source, 1 + i virtual channel i

std::string labelOf(const Measurement& measurement) {
  return measurement.kind() + " '" + measurement.name() + "'";
}

// The profile's name of node k of a measurement: its own name, or name[k] for a shard.
std::string nodeName(Measurement& measurement, std::size_t k) {
  if (measurement.graphNodes().front() == &measurement) return measurement.name();
  return measurement.name() + "[" + std::to_string(k) + "]";
}

std::string labelOf(const VirtualChannel& channel) {
  return channel.kind() + " '" + channel.name() + "'";
}

detail::TopologyNode topologyNode(const Measurement& measurement) {
  return {labelOf(measurement), measurement.inputChannels(), {}};
}

detail::TopologyNode topologyNode(const VirtualChannel& channel) {
  return {labelOf(channel), channel.inputChannels(), channel.getChannels()};
}

// One reader of a stream: a measurement, or a virtual channel publishing a stream of its own.
struct Consumer {
  Measurement* measurement = nullptr;
  VirtualChannel* channel = nullptr;
  int reads = kSourceStream;
  int publishes = -1;  // the stream a virtual channel fills
  // Blocks in [start_sequence, stop_sequence) are delivered; both are set by the source task.
  std::uint64_t start_sequence = 0;
  std::uint64_t stop_sequence = kNever;
  std::atomic<std::uint64_t> next_unprocessed{0};
  bool removed = false;
  std::unique_ptr<BlockPool> pool;  // a virtual channel's output blocks
  std::unique_ptr<Sequencer> sequencer;
  std::unique_ptr<Worker> worker;
};

}  // namespace

struct MeasurementGraph::Run {
  std::mutex mutex;  // guards the lists below
  std::vector<std::vector<Consumer*>> streams;
  std::deque<Consumer> consumers;
  std::deque<NodeProfile> profiles;  // source, then consumers in creation order
  std::deque<NodeTimer> timers;
  // Blocks the source has handed out (the next one gets this sequence number). Written by the
  // source task before the block is dispatched, read under `mutex` by add() and remove().
  std::atomic<std::uint64_t> produced{0};
  std::atomic<timestamp_t> stream_duration_ps{0};  // of the blocks produced so far
  std::vector<int> virtual_parent;
  // The virtual channels' numbers, [first, end), where the source lists no channels: a source
  // tag on one of them would be taken for the virtual channel's (empty: no check).
  channel_t virtual_channels_first = 0;
  channel_t virtual_channels_end = 0;
  std::vector<std::vector<channel_t>> shared_channels;  // per stream
  tbb::flow::graph* graph = nullptr;
  Clock::time_point start;
  std::size_t max_trace_spans = 0;
  std::atomic<bool> ended{false};

  // Publishes `block` (its first reference) to the readers of `stream`.
  void dispatch(int stream, PooledBlock* published) {
    Consumer* targets[64];
    std::vector<Consumer*> more;
    std::size_t count = 0;
    {
      std::lock_guard lock(mutex);
      published->shared.prepare(shared_channels[static_cast<std::size_t>(stream)]);
      for (Consumer* consumer : streams[static_cast<std::size_t>(stream)]) {
        if (published->sequence < consumer->start_sequence ||
            published->sequence >= consumer->stop_sequence) {
          continue;
        }
        if (count < std::size(targets)) {
          targets[count++] = consumer;
        } else {
          more.push_back(consumer);
        }
      }
    }
    const BlockRef block(published);
    for (std::size_t i = 0; i < count; ++i) targets[i]->sequencer->try_put(block);
    for (Consumer* consumer : more) consumer->sequencer->try_put(block);
  }

  // Blocks from the next one the source hands out on reach `consumer`.
  void startDelivering(Consumer& consumer, std::uint64_t from) {
    consumer.start_sequence = from;
    consumer.next_unprocessed.store(consumer.start_sequence, std::memory_order_release);
    streams[static_cast<std::size_t>(consumer.reads)].push_back(&consumer);
    shareChannels();
  }

  // Which channels each stream's blocks gather once for their readers (under `mutex`).
  void shareChannels() {
    shared_channels.assign(streams.size(), {});
    for (std::size_t stream = 0; stream < streams.size(); ++stream) {
      std::vector<std::vector<channel_t>> wanted;
      for (const Consumer* consumer : streams[stream]) {
        if (consumer->measurement != nullptr && !consumer->removed) {
          wanted.push_back(consumer->measurement->gatheredChannels());
        }
      }
      shared_channels[stream] = channelsToShare(wanted);
    }
  }

  NodeTimer& newTimer(std::string name, std::string kind) {
    NodeProfile& profile = profiles.emplace_back();
    profile.name = std::move(name);
    profile.kind = std::move(kind);
    return timers.emplace_back(profile, start, max_trace_spans);
  }

  // Throws for a source tag on a virtual channel's number.
  void checkSourceChannels(std::span<const Tag> tags) const {
    const channel_t first = virtual_channels_first;
    if (virtual_channels_end == first) return;
    const std::size_t at = firstOnChannels(tags, first, virtual_channels_end);
    if (at == tags.size()) return;
    throw InvalidArgument(
        "the source delivered a tag on channel " + std::to_string(tags[at].channel) + " at " +
        std::to_string(tags[at].time) +
        " ps, a number this graph gives a virtual channel (the source lists no channels, so "
        "virtual channels are numbered from " +
        std::to_string(first) +
        "): set first_virtual_channel above the source's channels ([run] in a configuration, "
        "GraphOptions in C++, Graph(first_virtual_channel=) in Python)");
  }

  // Creates the consumer's nodes in the running flow graph.
  void connect(Consumer& consumer, NodeTimer& timer) {
    consumer.sequencer = std::make_unique<Sequencer>(*graph, [&consumer](const BlockRef& block) {
      return static_cast<std::size_t>(block->sequence - consumer.start_sequence);
    });
    if (consumer.measurement != nullptr) {
      consumer.worker = std::make_unique<Worker>(
          *graph, tbb::flow::serial, [&consumer, &timer](const BlockRef& block) {
            const auto began = timer.begin();
            const TagBlock view = block->view();
            consumer.measurement->processBlock(view);
            timer.end(began, view.sequence, view.tags.size());
            timer.latency(block->published);
            consumer.next_unprocessed.store(view.sequence + 1, std::memory_order_release);
            return tbb::flow::continue_msg();
          });
    } else {
      consumer.worker = std::make_unique<Worker>(
          *graph, tbb::flow::serial, [this, &consumer, &timer](const BlockRef& block) {
            const auto began = timer.begin();
            PooledBlock* out = consumer.pool->tryAcquire();
            if (out == nullptr) throw std::logic_error("virtual channel pool exhausted");
            const TagBlock view = block->view();
            if (consumer.reads == kSourceStream) checkSourceChannels(view.tags);
            consumer.channel->process(view, out->buffer);
            out->sequence = block->sequence;
            out->published = block->published;
            out->upstream = block;
            timer.end(began, view.sequence, view.tags.size());
            dispatch(consumer.publishes, out);
            return tbb::flow::continue_msg();
          });
    }
    tbb::flow::make_edge(*consumer.sequencer, *consumer.worker);
  }
};

MeasurementGraph::MeasurementGraph(Source& source, GraphOptions options)
    : source_(source),
      options_(std::move(options)),
      first_virtual_channel_(options_.first_virtual_channel == 0 ? kFirstVirtualChannel
                                                                 : options_.first_virtual_channel) {
  if (options_.first_virtual_channel < 0 ||
      options_.first_virtual_channel == std::numeric_limits<channel_t>::max()) {
    throw InvalidArgument(
        "first_virtual_channel " + std::to_string(options_.first_virtual_channel) +
        " is invalid (valid: 0 for " + std::to_string(kFirstVirtualChannel) + ", or 1.." +
        std::to_string(std::numeric_limits<channel_t>::max() - 1) + ")");
  }
  if (options_.max_blocks_in_flight < 1 || options_.max_blocks_in_flight > kMaxBlocksInFlight) {
    throw InvalidArgument("max_blocks_in_flight " + std::to_string(options_.max_blocks_in_flight) +
                          " is invalid (valid: 1.." + std::to_string(kMaxBlocksInFlight) + ")");
  }
  if (options_.threads < 0 || options_.threads > kMaxThreads) {
    throw InvalidArgument("threads " + std::to_string(options_.threads) +
                          " is invalid (valid: 0 for all cores, or 1.." +
                          std::to_string(kMaxThreads) + ")");
  }
  for (channel_t channel : source.channels()) {
    if (channel == std::numeric_limits<channel_t>::max()) {
      throw InvalidArgument("source channel " + std::to_string(channel) +
                            " leaves no channel number above it for virtual channels (valid: "
                            "source channels below " +
                            std::to_string(channel) + ")");
    }
    if (channel >= first_virtual_channel_) first_virtual_channel_ = channel + 1;
  }
  next_virtual_channel_ = first_virtual_channel_;
}

MeasurementGraph::~MeasurementGraph() {
  std::vector<Observer*> observers;
  {
    std::lock_guard lock(mutex_);
    observers.swap(observers_);
  }
  // Without the lock: an observer may be inside withMeasurements(), which takes it.
  for (Observer* observer : observers) observer->graphEnding();
}

void MeasurementGraph::attach(Observer& observer) {
  std::lock_guard lock(mutex_);
  observers_.push_back(&observer);
}

void MeasurementGraph::detach(Observer& observer) {
  std::lock_guard lock(mutex_);
  std::erase(observers_, &observer);
}

std::vector<Measurement*> MeasurementGraph::measurements() const {
  std::lock_guard lock(mutex_);
  return measurements_;
}

std::vector<VirtualChannel*> MeasurementGraph::virtualChannels() const {
  std::lock_guard lock(mutex_);
  return channels_;
}

void MeasurementGraph::withMeasurements(
    const std::function<void(const std::vector<Measurement*>&)>& use) const {
  std::vector<Measurement*> measurements;
  std::uint64_t began = 0;
  {
    std::lock_guard lock(mutex_);
    measurements = measurements_;
    began = removals_;
    ++users_[began];
  }
  struct Done {
    const MeasurementGraph& graph;
    std::uint64_t began;
    ~Done() {
      // Notified under the lock: the woken remove() may return and its caller end the graph.
      std::lock_guard lock(graph.mutex_);
      if (--graph.users_[began] == 0) graph.users_.erase(began);
      graph.users_done_.notify_all();
    }
  } done{*this, began};
  use(measurements);
}

Measurement& MeasurementGraph::add(Measurement& measurement) {
  std::lock_guard lock(mutex_);
  for (const Measurement* existing : measurements_) {
    if (existing == &measurement) {
      throw InvalidArgument("measurement '" + measurement.name() + "' is already in the graph");
    }
    if (existing->name() == measurement.name()) {
      throw InvalidArgument("duplicate measurement name '" + measurement.name() +
                            "' (names must be unique in a graph)");
    }
  }
  if (run_ != nullptr) {
    std::vector<detail::TopologyNode> nodes;
    for (const VirtualChannel* channel : channels_) nodes.push_back(topologyNode(*channel));
    const int reads = detail::placeInFixedTopology(first_virtual_channel_, nodes,
                                                   run_->virtual_parent, topologyNode(measurement));
    const std::vector<Measurement*> shards = measurement.graphNodes();
    std::lock_guard run_lock(run_->mutex);
    // A run whose nodes are gone is ending: the measurement joins the next run.
    if (run_->graph != nullptr) {
      // Every shard from the same block on.
      const std::uint64_t from = run_->produced.load(std::memory_order_acquire);
      for (std::size_t k = 0; k < shards.size(); ++k) {
        shards[k]->streamStarting();
        Consumer& consumer = run_->consumers.emplace_back();
        consumer.measurement = shards[k];
        consumer.reads = reads + 1;
        run_->connect(consumer, run_->newTimer(nodeName(measurement, k), measurement.kind()));
        run_->startDelivering(consumer, from);
      }
    }
  }
  measurements_.push_back(&measurement);
  return measurement;
}

VirtualChannel& MeasurementGraph::add(VirtualChannel& channel) {
  std::lock_guard lock(mutex_);
  if (run_ != nullptr) {
    throw InvalidArgument("cannot add " + labelOf(channel) +
                          " while the graph runs (virtual channels are wired before a run)");
  }
  for (const VirtualChannel* existing : channels_) {
    if (existing == &channel) throw InvalidArgument(labelOf(channel) + " is already in the graph");
    if (existing->name() == channel.name()) {
      throw InvalidArgument("duplicate virtual channel name '" + channel.name() +
                            "' (names must be unique in a graph)");
    }
  }
  const auto outputs = static_cast<std::int64_t>(channel.outputCount());
  if (static_cast<std::int64_t>(next_virtual_channel_) + outputs >
      std::numeric_limits<channel_t>::max()) {
    throw InvalidArgument("no virtual channel numbers left for " + labelOf(channel));
  }
  channel.assignChannels(next_virtual_channel_);
  next_virtual_channel_ = static_cast<channel_t>(next_virtual_channel_ + outputs);
  channels_.push_back(&channel);
  return channel;
}

void MeasurementGraph::remove(Measurement& measurement) {
  std::unique_lock lock(mutex_);
  const auto position = std::find(measurements_.begin(), measurements_.end(), &measurement);
  if (position == measurements_.end()) {
    throw InvalidArgument("measurement '" + measurement.name() + "' is not in the graph");
  }
  measurements_.erase(position);
  const std::uint64_t removal = ++removals_;  // withMeasurements() from now on does not see it
  if (const std::shared_ptr<Run> run = run_) {
    const std::vector<Measurement*> nodes = measurement.graphNodes();
    std::vector<Consumer*> consumers;
    {
      std::lock_guard run_lock(run->mutex);
      for (Consumer& candidate : run->consumers) {
        const bool ours =
            std::find(nodes.begin(), nodes.end(), candidate.measurement) != nodes.end();
        if (ours && !candidate.removed) consumers.push_back(&candidate);
      }
      if (consumers.size() != nodes.size()) {
        throw std::logic_error("running measurement without its nodes");
      }
      // Blocks handed out so far still arrive; the ones after do not. A source waiting for
      // data therefore does not hold the removal up. Every shard up to the same block.
      const std::uint64_t stop = run->produced.load(std::memory_order_acquire);
      for (Consumer* consumer : consumers) {
        consumer->removed = true;
        consumer->stop_sequence = stop;
      }
      run->shareChannels();
    }
    lock.unlock();
    // Every block before stop_sequence reaches each node; wait until it has seen them.
    const auto caught_up = [&](const Consumer* consumer) {
      return consumer->stop_sequence != kNever &&
             consumer->next_unprocessed.load(std::memory_order_acquire) >= consumer->stop_sequence;
    };
    while (!run->ended.load(std::memory_order_acquire)) {
      {
        std::lock_guard run_lock(run->mutex);
        if (std::all_of(consumers.begin(), consumers.end(), caught_up)) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (Measurement* node : nodes) node->streamEnded();
    lock.lock();
  }
  // The caller may destroy the measurement once this returns (and an owned one is destroyed
  // here): whoever began using it before it left the list must be done with it first.
  users_done_.wait(lock, [&] { return users_.empty() || users_.begin()->first >= removal; });
  const auto owned = std::find_if(owned_.begin(), owned_.end(),
                                  [&](const auto& m) { return m.get() == &measurement; });
  if (owned != owned_.end()) owned_.erase(owned);
}

void MeasurementGraph::validate() const {
  std::lock_guard lock(mutex_);
  std::vector<detail::TopologyNode> channels, measurements;
  for (const VirtualChannel* channel : channels_) channels.push_back(topologyNode(*channel));
  for (const Measurement* measurement : measurements_) {
    measurements.push_back(topologyNode(*measurement));
  }
  detail::planTopology(first_virtual_channel_, channels, measurements);
}

namespace {

void requireValidDuration(timestamp_t duration_ps) {
  if (duration_ps == 0 || duration_ps < -1) {
    throw InvalidArgument("run duration " + std::to_string(duration_ps) +
                          " ps is invalid (valid: > 0, or -1 for the whole stream)");
  }
}

}  // namespace

// The stop flag is reset before the run is handed to another thread, so that a requestStop()
// made right after runAsync() returns is not lost.
Profile MeasurementGraph::run(timestamp_t duration_ps) {
  stop_requested_.store(false, std::memory_order_relaxed);
  return runStream(duration_ps);
}

std::future<Profile> MeasurementGraph::runAsync(timestamp_t duration_ps) {
  requireValidDuration(duration_ps);  // here, not only from the future
  stop_requested_.store(false, std::memory_order_relaxed);
  return std::async(std::launch::async, [this, duration_ps] { return runStream(duration_ps); });
}

namespace {

// The source's side of a run: takes a buffer from the pool, fills it from the source, checks
// the stream contract, cuts the block at the run's duration and reports progress. The input
// and limiter nodes pass plain pointers: the input node keeps a copy of the last item it
// handed out, and a counted reference kept there would hold that block (and its limiter
// token) until the next block is produced, which stalls the graph with one block in flight.
// The reference is taken after the limiter.
class SourceStage {
 public:
  SourceStage(Source& source, BlockPool& pool, NodeTimer& timer, MeasurementGraph::Run& run,
              const GraphOptions& options, Profile& profile, const std::atomic<bool>& stop,
              timestamp_t duration_ps, StreamSpan window, BlockBuffer& carried, bool& has_carried,
              std::optional<bool>& stream_overflow)
      : source_(source),
        carried_(carried),
        has_carried_(has_carried),
        stream_overflow_(stream_overflow),
        pool_(pool),
        timer_(timer),
        run_(run),
        options_(options),
        profile_(profile),
        stop_(stop),
        duration_ps_(duration_ps),
        window_(window),
        last_progress_(run.start) {}

  PooledBlock* operator()(tbb::flow_control& control);
  // What the source threw: the stream ends there, the blocks before it are processed, and the
  // run then fails with it (thrown inside the input node, it would cancel the flow graph and
  // drop blocks already handed on).
  std::exception_ptr error() const { return error_; }

 private:
  PooledBlock* produce(tbb::flow_control& control);
  void reportProgress(Clock::time_point now);

  // Reads the next block into `out`: the rest of the block the last run was cut in first.
  bool nextBlock(BlockBuffer& out);
  // Follows the stream's overflow state through a block read.
  void followOverflow(const BlockBuffer& block);

  Source& source_;
  BlockBuffer& carried_;  // the rest of a cut block, for the next run
  bool& has_carried_;
  std::optional<bool>& stream_overflow_;  // after the blocks read so far; empty at the end
  BlockPool& pool_;
  NodeTimer& timer_;
  MeasurementGraph::Run& run_;
  const GraphOptions& options_;
  Profile& profile_;
  const std::atomic<bool>& stop_;
  timestamp_t duration_ps_;
  StreamSpan window_;  // blocks that end before it are skipped, the stream is cut at its end
  bool ended_ = false;
  bool first_ = true;
  timestamp_t stream_start_ = 0;
  timestamp_t next_begin_ = 0;
  std::uint64_t sequence_ = 0;
  Clock::time_point last_progress_;
  std::exception_ptr error_;
};

// Every measurement that was in the graph during the run learns that its stream ended:
// after a good run in notifyAll(), whose first exception (a measurement failing to finish,
// such as a file writer's last flush) fails the run; when a node threw, from the destructor,
// where the node's exception is the one reported.
struct StreamEndNotifier {
  MeasurementGraph::Run& run;
  bool notified = false;
  void notifyAll() {
    notified = true;
    std::exception_ptr first;
    std::lock_guard lock(run.mutex);
    for (Consumer& consumer : run.consumers) {
      if (consumer.measurement == nullptr || consumer.removed) continue;
      try {
        consumer.measurement->streamEnded();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }
  ~StreamEndNotifier() {
    if (notified) return;
    try {
      notifyAll();
    } catch (...) {  // the node's exception is already on its way
    }
  }
};

PooledBlock* SourceStage::operator()(tbb::flow_control& control) {
  try {
    return produce(control);
  } catch (...) {
    error_ = std::current_exception();
    ended_ = true;
    control.stop();
    return nullptr;
  }
}

PooledBlock* SourceStage::produce(tbb::flow_control& control) {
  if (ended_ || stop_.load(std::memory_order_relaxed)) {
    control.stop();
    return nullptr;
  }
  PooledBlock* block = pool_.tryAcquire();
  if (block == nullptr) throw std::logic_error("block pool exhausted: back-pressure broken");
  // Back to the pool whatever leaves this function without handing the block on.
  struct Unless {
    BlockPool& pool;
    PooledBlock* block;
    ~Unless() {
      if (block != nullptr) pool.giveBack(block);
    }
  } release{pool_, block};
  const auto began = timer_.begin();
  // A stop request also ends the skipping of blocks before the window.
  for (bool skipped = false;; skipped = true) {
    if ((skipped && stop_.load(std::memory_order_relaxed)) || !nextBlock(block->buffer)) {
      ended_ = true;
      control.stop();
      return nullptr;
    }
    checkBlockContract(block->buffer, next_begin_, first_, sequence_);
    next_begin_ = block->buffer.end_time;
    first_ = false;
    if (block->buffer.end_time > window_.begin) break;
    followOverflow(block->buffer);
  }
  if (sequence_ == 0) stream_start_ = block->buffer.begin_time;
  if (duration_ps_ > 0 && block->buffer.end_time - stream_start_ >= duration_ps_) {
    const timestamp_t cut = stream_start_ + duration_ps_;
    if (block->buffer.end_time > cut) {
      keepRest(block->buffer, cut, carried_);
      has_carried_ = true;
    }
    cutBlock(block->buffer, cut);
    ended_ = true;
  }
  if (block->buffer.end_time >= window_.end) {
    cutBlock(block->buffer, window_.end);
    ended_ = true;
  }
  followOverflow(block->buffer);
  block->sequence = sequence_++;
  run_.produced.store(sequence_, std::memory_order_release);
  timer_.end(began, block->sequence, block->buffer.tags.size());
  block->published = Clock::now();
  profile_.stream_duration_ps = block->buffer.end_time - stream_start_;
  run_.stream_duration_ps.store(profile_.stream_duration_ps, std::memory_order_relaxed);
  reportProgress(block->published);
  release.block = nullptr;
  return block;
}

void SourceStage::followOverflow(const BlockBuffer& block) {
  for (const std::uint32_t index : block.special) {
    const TagType type = block.tags[index].type;
    if (type == TagType::OverflowBegin) stream_overflow_ = true;
    if (type == TagType::OverflowEnd) stream_overflow_ = false;
  }
}

bool SourceStage::nextBlock(BlockBuffer& out) {
  if (!has_carried_) {
    if (source_.next(out)) return true;
    stream_overflow_.reset();  // the stream is over: a later one starts afresh
    return false;
  }
  has_carried_ = false;
  out.storage.assign(carried_.tags.begin(), carried_.tags.end());
  out.publishStorage();
  out.begin_time = carried_.begin_time;
  out.end_time = carried_.end_time;
  return true;
}

void SourceStage::reportProgress(Clock::time_point now) {
  if (!options_.progress || secondsBetween(last_progress_, now) < options_.progress_interval_s) {
    return;
  }
  last_progress_ = now;
  const NodeProfile& source_profile = run_.profiles.front();
  options_.progress(Progress{source_profile.tags, source_profile.blocks,
                             profile_.stream_duration_ps, secondsBetween(run_.start, now)});
}

}  // namespace

void MeasurementGraph::connectConsumers(Run& run, std::size_t pool_blocks,
                                        bool starts_in_overflow) {
  std::vector<detail::TopologyNode> channel_nodes, measurement_nodes;
  for (const VirtualChannel* channel : channels_) channel_nodes.push_back(topologyNode(*channel));
  for (const Measurement* measurement : measurements_) {
    measurement_nodes.push_back(topologyNode(*measurement));
  }
  const detail::Topology topology =
      detail::planTopology(first_virtual_channel_, channel_nodes, measurement_nodes);
  std::lock_guard run_lock(run.mutex);
  run.virtual_parent = topology.virtual_parent;
  if (source_.channels().empty()) {
    run.virtual_channels_first = first_virtual_channel_;
    run.virtual_channels_end = next_virtual_channel_;
  }
  run.streams.resize(channels_.size() + 1);
  for (std::size_t node : topology.virtual_order) {
    VirtualChannel* channel = channels_[node];
    channel->streamStarting();
    Consumer& consumer = run.consumers.emplace_back();
    consumer.channel = channel;
    consumer.reads = topology.virtual_parent[node] + 1;
    consumer.publishes = static_cast<int>(node) + 1;
    consumer.pool = std::make_unique<BlockPool>(
        pool_blocks, VirtualChannel::outputBufferTags(source_.maxBlockTags()));
    run.connect(consumer, run.newTimer(channel->name(), channel->kind()));
  }
  for (std::size_t i = 0; i < measurements_.size(); ++i) {
    const std::vector<Measurement*> nodes = measurements_[i]->graphNodes();
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      nodes[k]->streamStarting(starts_in_overflow);
      Consumer& consumer = run.consumers.emplace_back();
      consumer.measurement = nodes[k];
      consumer.reads = topology.measurement_stream[i] + 1;
      run.connect(consumer, run.newTimer(nodeName(*measurements_[i], k), measurements_[i]->kind()));
    }
  }
  for (Consumer& consumer : run.consumers) {
    run.streams[static_cast<std::size_t>(consumer.reads)].push_back(&consumer);
  }
  run.shareChannels();
}

Profile MeasurementGraph::liveProfile() const {
  Profile profile;
  profile.threads = options_.threads > 0 ? options_.threads : tbb::info::default_concurrency();
  profile.max_blocks_in_flight = options_.max_blocks_in_flight;
  std::shared_ptr<Run> run;
  {
    std::lock_guard lock(mutex_);
    run = run_;
  }
  if (run == nullptr) return profile;
  std::lock_guard lock(run->mutex);
  for (const NodeTimer& timer : run->timers) profile.nodes.push_back(timer.live());
  const std::uint64_t produced = run->produced.load(std::memory_order_acquire);
  std::uint64_t oldest_unfinished = produced;
  for (const Consumer& consumer : run->consumers) {
    // A block is in flight until every measurement finished it (virtual channels come first).
    if (consumer.removed || consumer.measurement == nullptr) continue;
    oldest_unfinished =
        std::min(oldest_unfinished, consumer.next_unprocessed.load(std::memory_order_acquire));
  }
  profile.blocks_in_flight = static_cast<std::size_t>(produced - oldest_unfinished);
  profile.tags = profile.nodes.front().tags;
  profile.blocks = profile.nodes.front().blocks;
  profile.stream_duration_ps = run->stream_duration_ps.load(std::memory_order_relaxed);
  profile.wall_s = secondsBetween(run->start, Clock::now());
  return profile;
}

Profile MeasurementGraph::runRange(timestamp_t begin, timestamp_t end, timestamp_t origin) {
  // Before the plans, the source and the carried block are touched.
  if (running_.load()) throw InvalidArgument("the graph is already running");
  if (end <= begin) {
    throw InvalidArgument("time range [" + std::to_string(begin) + ", " + std::to_string(end) +
                          ") ps is empty (valid: end > begin)");
  }
  if (origin == ShardPlan::kStreamStart) {
    if (const std::optional<StreamSpan> span = source_.timeSpan()) origin = span->begin;
  }
  SplitSupport widest;
  // The virtual channels start this much before the measurements' margins and read this much
  // after them, so that their output there is one pass's; summed, as channels may read each
  // other's output. Saturating: delays and pattern offsets reach 2^62 ps.
  timestamp_t channels_look_back = 0;
  timestamp_t channels_look_ahead = 0;
  {
    std::lock_guard lock(mutex_);
    for (const VirtualChannel* channel : channels_) {
      const std::optional<timestamp_t> look_back = channel->lookBack();
      if (!look_back) {
        throw InvalidArgument(labelOf(*channel) +
                              ": a time range cannot be run through it (its output at the "
                              "range's start depends on the whole stream before it)");
      }
      channels_look_back = saturatingAdd(channels_look_back, *look_back);
      channels_look_ahead = saturatingAdd(channels_look_ahead, channel->lookAhead());
    }
    for (Measurement* measurement : measurements_) {
      for (Measurement* node : measurement->graphNodes()) {
        const std::optional<SplitSupport> support = node->splitSupport();
        if (!support) {
          throw InvalidArgument(labelOf(*measurement) +
                                " cannot be split by time, so the graph cannot run a time range "
                                "(run it on the whole stream)");
        }
        widest.before = std::max(widest.before, support->before);
        widest.after = std::max(widest.after, support->after);
      }
    }
    for (Measurement* measurement : measurements_) {
      for (Measurement* node : measurement->graphNodes()) {
        ShardPlan plan = node->shardPlan().value_or(ShardPlan{});
        plan.begin = begin;
        plan.end = end;
        plan.origin = origin;
        node->setShardPlan(plan);
      }
    }
  }
  const timestamp_t from = saturatingAdd(begin, -saturatingAdd(widest.before, channels_look_back));
  // A source that seeks starts afresh: the rest of a block an earlier run was cut in is gone.
  if (source_.seekTo(from)) {
    has_carried_ = false;
    stream_overflow_.reset();
  }
  stop_requested_.store(false, std::memory_order_relaxed);
  return runStream(
      -1, StreamSpan{from, saturatingAdd(saturatingAdd(end, widest.after), channels_look_ahead)});
}

Profile MeasurementGraph::runStream(timestamp_t duration_ps, StreamSpan window) {
  requireValidDuration(duration_ps);
  if (running_.exchange(true)) throw InvalidArgument("the graph is already running");
  auto run = std::make_shared<Run>();
  struct RunRegistration {
    MeasurementGraph& graph;
    Run& run;
    ~RunRegistration() {
      std::lock_guard lock(graph.mutex_);
      run.ended.store(true, std::memory_order_release);
      graph.run_.reset();
      graph.running_.store(false);
    }
  } registration{*this, *run};

  const int threads = options_.threads > 0 ? options_.threads : tbb::info::default_concurrency();
  Profile profile;
  profile.threads = threads;
  profile.max_blocks_in_flight = options_.max_blocks_in_flight;
  run->start = Clock::now();
  run->max_trace_spans = options_.max_trace_spans;

  // In flight: admitted by the limiter, plus one the input node holds back, plus slack. A
  // virtual channel's block holds its input block, so its pool needs no more.
  const std::size_t pool_blocks = options_.max_blocks_in_flight + 2;
  // A run that goes on with the stream the last one left starts in the state it was left in.
  const bool starts_in_overflow = stream_overflow_.value_or(source_.startsInOverflow());
  stream_overflow_ = starts_in_overflow;
  BlockPool pool(pool_blocks, source_.maxBlockTags());
  SourceStage produce{source_,
                      pool,
                      run->newTimer("source", "source"),
                      *run,
                      options_,
                      profile,
                      stop_requested_,
                      duration_ps,
                      window,
                      carried_,
                      has_carried_,
                      stream_overflow_};

  StreamEndNotifier notify_stream_end{*run};
  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::flow::graph graph;
    run->graph = &graph;
    tbb::flow::limiter_node<PooledBlock*, int> limiter(graph, options_.max_blocks_in_flight);
    std::atomic<bool> accepting_releases{true};
    pool.setReleaseHook([&] {
      if (accepting_releases.load(std::memory_order_acquire)) limiter.decrementer().try_put(1);
    });
    tbb::flow::input_node<PooledBlock*> input(graph, std::ref(produce));
    tbb::flow::function_node<PooledBlock*, tbb::flow::continue_msg> publish(
        graph, tbb::flow::unlimited, [&run](PooledBlock* block) {
          run->dispatch(kSourceStream, block);
          return tbb::flow::continue_msg();
        });
    tbb::flow::make_edge(input, limiter);
    tbb::flow::make_edge(limiter, publish);

    // Destroys the consumers' nodes before the flow graph they belong to, and stops releases
    // reaching the limiter before the nodes (and the blocks they still buffer) go.
    struct NodesGuard {
      Run& run;
      std::atomic<bool>& accepting;
      BlockPool& pool;
      ~NodesGuard() {
        accepting.store(false, std::memory_order_release);
        pool.setReleaseHook(nullptr);
        std::lock_guard lock(run.mutex);
        for (Consumer& consumer : run.consumers) {
          consumer.worker.reset();
          consumer.sequencer.reset();
        }
        run.graph = nullptr;
      }
    } guard{*run, accepting_releases, pool};

    {
      std::lock_guard lock(mutex_);
      if (measurements_.empty()) throw InvalidArgument("the graph has no measurements to run");
      connectConsumers(*run, pool_blocks, starts_in_overflow);
      run_ = run;
    }
    input.activate();
    graph.wait_for_all();
  });
  if (const std::exception_ptr error = produce.error()) std::rethrow_exception(error);

  profile.wall_s = secondsBetween(run->start, Clock::now());
  notify_stream_end.notifyAll();
  std::lock_guard run_lock(run->mutex);
  profile.nodes.assign(run->profiles.begin(), run->profiles.end());
  profile.tags = profile.nodes[0].tags;
  profile.blocks = profile.nodes[0].blocks;
  return profile;
}

}  // namespace tagflow
