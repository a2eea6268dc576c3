// Measurement: the base of everything that consumes the stream. The graph calls
// processBlock() for every block, in order, exactly once; the base class applies the
// lifecycle of the reference engine (start, stop, startFor cut exactly at the duration even
// inside a block, clear, capture duration), tracks overflow intervals, and splits each block
// into runs of pure TimeTags and the special tags between them, so that a concrete
// measurement only writes a tight loop over std::span<const Tag>.
//
// Threading: hooks run with the measurement's mutex held; every public getter takes the same
// mutex, so what a reader sees is a snapshot at a block boundary, also while the graph runs.
// A measurement is running from construction (auto-start), like the reference engine.
//
// Splitting by time (docs/parallel.md): a measurement that can split says how much stream time
// before and after a range it must see (splitSupport()); given a ShardPlan it counts only the
// plan's ranges, reading the margins around each range through processLeadIn/processLeadOut,
// and its partial state (getPartialState()) merges into another shard's (mergePartialState()).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/result_set.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/tag_block.hpp"

namespace tagflow {

class SynchronizedMeasurements;

// What a measurement needs to count a time range [begin, end) exactly as one pass would.
struct SplitSupport {
  timestamp_t before = 0;  // stream time before the range whose tags build up state
  timestamp_t after = 0;   // stream time after the range whose tags complete its events
  // Partial states are sums: shards may own interleaved chunks and merge in any order.
  // Otherwise a shard owns one range and states merge in time order.
  bool any_order = false;
};

// The stream time a shard counts: [begin, end) cut into chunks of `chunk` ps from `begin`, of
// which the shard owns those whose index % count == index (chunk 0: the one range [begin, end)).
// begin = kStreamStart: from the first block of each stream. `origin`: where one pass over the
// whole stream starts its capture, the time that grids of time bins (Counter's) align to, so
// that a shard of a later range bins as one pass would; kStreamStart: the shard's own capture
// start (right for the first range). Only measurements with such a grid read it (planOrigin()).
struct ShardPlan {
  static constexpr timestamp_t kStreamStart = std::numeric_limits<timestamp_t>::min();
  timestamp_t begin = kStreamStart;
  timestamp_t end = std::numeric_limits<timestamp_t>::max();
  timestamp_t chunk = 0;
  int index = 0;
  int count = 1;
  timestamp_t origin = kStreamStart;
};

class Measurement {
 public:
  // `parameters` are checked against the kind's declaration (InvalidArgument naming the key,
  // the value and the valid range) and kept with the defaults filled in.
  Measurement(const ParameterSchema& schema, std::string name, const Parameters& parameters);
  // A measurement without a declaration (one written outside the library): the parameters are
  // kept as given.
  Measurement(std::string kind, std::string name, Parameters parameters);
  virtual ~Measurement() = default;
  Measurement(const Measurement&) = delete;
  Measurement& operator=(const Measurement&) = delete;

  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const Parameters& parameters() const { return parameters_; }

  // Starts or continues; keeps data.
  virtual void start();
  // Optionally clears, then runs until `duration` ps of stream time were captured.
  virtual void startFor(timestamp_t duration, bool clear = true);
  // Stops at the next block boundary; keeps data.
  virtual void stop();
  // Drops data and state, resets the capture duration; the running state is unchanged.
  virtual void clear();
  virtual bool isRunning() const;
  // Blocks until a startFor() run has captured its duration. timeout_ms < 0 waits without
  // limit, 0 polls. Returns false on timeout, when no startFor() run is pending (an
  // unbounded run never finishes), or when the stream ended before the duration was reached.
  virtual bool waitUntilFinished(std::int64_t timeout_ms = -1);
  // Whether waitUntilFinished() can still return true: finished already, or a startFor() run
  // under way or pending on a stream that has not ended. A caller waiting in slices stops
  // when this turns false.
  virtual bool mayFinish() const;
  // Stream time processed while running since construction or the last clear(), in ps.
  virtual timestamp_t getCaptureDuration() const;
  // Overflow intervals that began while running, since the last clear().
  virtual std::uint64_t getOverflowCount() const;

  // The channels this measurement reads, so the graph can wire the virtual channels it needs
  // and check that each is produced. nullopt (the default, for measurements that do not say)
  // means every channel of the stream: the measurement then reads a stream holding the output
  // of every virtual channel in the graph.
  virtual std::optional<std::vector<channel_t>> inputChannels() const { return std::nullopt; }
  // The channels whose times this measurement gathers from every block of TimeTags. Where two
  // or more readers of a stream gather a channel, the graph gathers it once per block for all
  // of them (SharedTimes, read through sharedTimes()). None by default.
  virtual std::vector<channel_t> gatheredChannels() const { return {}; }

  // Consistent snapshot of the results, with parameters and run facts.
  virtual ResultSet getResults() const;

  // How this kind splits by time, or nullopt when it runs only as one (the default).
  virtual std::optional<SplitSupport> splitSupport() const { return std::nullopt; }
  // Counts only the plan's ranges from the next stream on. Throws InvalidArgument when the
  // kind cannot split, or cannot own interleaved chunks, or the chunks are shorter than the
  // margins around them.
  void setShardPlan(const ShardPlan& plan);
  std::optional<ShardPlan> shardPlan() const;
  // The raw sums of what this measurement counted (for mergePartialState(), or to send to
  // another process), with the capture duration and overflow count.
  virtual ResultSet getPartialState() const;
  // Adds another shard's partial state of the same kind and parameters: one that counted the
  // range right after this one's, or any range when the kind merges in any order.
  virtual void mergePartialState(const ResultSet& later);

  // The nodes that do this measurement's work in a graph: itself, or its shards.
  virtual std::vector<Measurement*> graphNodes() { return {this}; }

  // Graph side: called for every block in sequence order, from one thread at a time.
  void processBlock(const TagBlock& block);
  // Graph side: the stream has ended (or a new run of the graph begins).
  void streamEnded();
  // `in_overflow`: the stream begins inside an overflow interval (a source that seeked).
  void streamStarting(bool in_overflow = false);

 protected:
  // Only TimeTag records, time-ordered; the run lies inside the current capture interval.
  virtual void processTimeTags(std::span<const Tag> tags) = 0;
  // Stream time has advanced to `time` (exclusive): called before every special tag and at
  // the end of every captured (partial) block.
  virtual void advanceTime(timestamp_t /*time*/) {}
  // Capture begins at stream time `time`: after construction or clear() (`fresh`), or when
  // resuming after stop() (not fresh: the stopped stretch of stream time is skipped).
  virtual void onCaptureStart(timestamp_t /*time*/, bool /*fresh*/) {}
  // Capture stops: stop(), a startFor() run completed, or the stream ended. Measurements that
  // hold events back waiting for later partners count them now.
  virtual void onCaptureEnd() {}
  virtual void onOverflowBegin(const Tag& /*tag*/) {}
  virtual void onOverflowEnd(const Tag& /*tag*/) {}
  virtual void onMissedEvents(const Tag& /*tag*/) {}
  // The time base is not trustworthy across an Error tag: drop state that spans it.
  virtual void onError(const Tag& /*tag*/) {}
  virtual void clearData() = 0;
  virtual void collectResults(ResultSet& out) const = 0;

  // Splitting (see splitSupport()): the time tags of the margins before and after a counted
  // range, which build up or complete state but are counted by the neighbouring shards. The
  // special tags there reach the overflow and Error hooks; MissedEvents counts do not.
  virtual void processLeadIn(std::span<const Tag> /*tags*/) {}
  virtual void processLeadOut(std::span<const Tag> /*tags*/) {}
  virtual void savePartialState(ResultSet& /*out*/) const {}
  virtual void mergePartial(const ResultSet& /*later*/) {}
  // The end of the range being counted now (events from there on are the next shard's), and
  // how much of [from, to) lies inside it; without a plan every time counts.
  timestamp_t countedEnd() const { return window_.counted_end; }
  timestamp_t countedOverlap(timestamp_t from, timestamp_t to) const {
    return std::max<timestamp_t>(
        0, std::min(to, window_.counted_end) - std::max(from, window_.counted_begin));
  }
  // Whether the capture starts after stream that one pass would have read first: a range of a
  // split run other than the first, whose state at its start is not known.
  bool startsMidStream() const {
    return plan_ && plan_->begin != ShardPlan::kStreamStart &&
           (plan_->origin == ShardPlan::kStreamStart || plan_->begin > plan_->origin);
  }
  // The plan's origin (see ShardPlan); nullopt without a plan or when it is the capture start.
  std::optional<timestamp_t> planOrigin() const {
    if (!plan_ || plan_->origin == ShardPlan::kStreamStart) return std::nullopt;
    return plan_->origin;
  }

  bool inOverflow() const { return in_overflow_; }
  // The times of `channel` in `tags` from the block's shared gathering: when `tags` is the
  // whole block being processed and the graph gathers the channel for several of its readers.
  // std::nullopt otherwise, and the measurement splits the tags itself.
  std::optional<std::span<const timestamp_t>> sharedTimes(std::span<const Tag> tags,
                                                          channel_t channel) const;
  timestamp_t captureDurationLocked() const { return capture_duration_; }
  std::unique_lock<std::mutex> lockData() const { return std::unique_lock(mutex_); }

 private:
  friend class SynchronizedMeasurements;

  enum class Action { None, Start, StartFor, Stop, Clear };
  struct PendingAction {
    Action action = Action::None;
    std::uint64_t at_sequence = 0;
    timestamp_t duration = 0;
    bool clear = false;
  };

  // Kind, name, parameters and the facts every measurement reports.
  ResultSet runFactsLocked() const;
  void applyLocked(Action action, timestamp_t duration, bool clear);
  bool startForPendingLocked() const;  // a group's startFor() waits for its block
  void clearLocked();
  void endCaptureLocked();
  // `counted`: inside a counted range. In a margin the state reaches the hooks, but overflow
  // intervals and MissedEvents counts are the neighbouring shard's.
  void handleSpecial(const Tag& tag, bool counted);
  // Follows the overflow state through tags [from, to) without calling any hook.
  void trackOverflow(const TagBlock& block, std::size_t from, std::size_t to);
  void dispatchPlanned(const TagBlock& block, std::size_t tag_count, timestamp_t end);
  // Hands tags [from, to) of the block to the hooks of `part` (lead-in, counted, lead-out),
  // the special tags between them included, then advances time to `segment_end`.
  void dispatchSegment(const TagBlock& block, std::size_t from, std::size_t to,
                       timestamp_t segment_end, int part);
  // The window around the first owned range whose window ends after `time`.
  struct Window {
    timestamp_t begin = std::numeric_limits<timestamp_t>::min();
    timestamp_t counted_begin = std::numeric_limits<timestamp_t>::min();
    timestamp_t counted_end = std::numeric_limits<timestamp_t>::max();
    timestamp_t end = std::numeric_limits<timestamp_t>::max();
  };
  std::optional<Window> windowAfter(timestamp_t time) const;

  std::string kind_;
  std::string name_;
  Parameters parameters_;
  std::vector<std::pair<std::string, std::string>> parameter_units_;

  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool running_ = true;
  bool capturing_ = false;  // onCaptureStart() was called for the current running stretch
  bool fresh_ = true;       // nothing captured since construction or clear()
  bool stream_ended_ = false;
  bool in_overflow_ = false;
  const TagBlock* block_ = nullptr;  // the block processBlock() is processing
  timestamp_t remaining_ = -1;       // of a startFor() run; < 0 means unbounded
  timestamp_t capture_duration_ = 0;
  std::uint64_t overflow_count_ = 0;
  std::uint64_t next_sequence_ = 0;
  // Group actions (SynchronizedMeasurements) waiting for their block, oldest first: a member
  // that lags behind may have several, and each must take effect at its own block.
  std::vector<PendingAction> pending_;

  std::optional<ShardPlan> plan_;
  SplitSupport split_;
  timestamp_t plan_begin_ = 0;  // the plan's begin, resolved at a stream's first block
  bool plan_started_ = false;
  Window window_;  // the one being captured; everything counts without a plan
};

}  // namespace tagflow
