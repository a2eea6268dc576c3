// VirtualChannel: a node that reads the stream and adds tags on channels of its own (a
// delayed copy, a gated input, coincidences, ...). The graph gives it its output channel
// numbers, above every physical channel, when it is added; read them with getChannel() /
// getChannels(). Each block is computed once and shared by every consumer downstream: the
// output block is the input block with the generated tags in place (the input tags stay, as
// in the reference engine).
//
// A concrete channel may write that block in one pass (transcribe(), for blocks without special
// tags). Otherwise, on the general path, it reads runs of TimeTags in consume() and appends what
// it owes to `emitted`; tags it owes later (a delayed copy) it keeps and hands out in emitOwed();
// the base class merges them into the block, and the output is the input block itself, not a copy,
// when nothing was generated. The base class owns the rules every channel shares: tags owed inside
// an overflow interval become MissedEvents (count 1) on their channel; an overflow makes the
// channel forget its history (gate state, partial coincidences, the last period), an Error tag
// also drops the tags it owes, since the time base is broken there. A tag owed before the start of
// the block in which it becomes known (a coincidence stamped with its first tag that completes in
// the next block) is placed at that block's start: blocks cannot reach back.
//
// Threading: process() runs on one thread at a time, in block order; clear() and the setters of
// a concrete channel (setDelay(), setCoincidenceWindow()) may come from any thread and take
// effect at the next block. parameters() keep the values given at construction; the changes
// are logged with the stream time they took effect at (settingChanges(), getResults()).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/result_set.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/tag_block.hpp"

namespace tagflow {

class VirtualChannel {
 public:
  // `parameters` are checked against the kind's declaration and kept with the defaults filled
  // in (InvalidArgument naming the key, the value and the valid range). The declaration must
  // outlive the node (a kind's static schema()).
  VirtualChannel(const ParameterSchema& schema, std::string name, const Parameters& parameters,
                 std::size_t output_count = 1);
  virtual ~VirtualChannel() = default;
  VirtualChannel(const VirtualChannel&) = delete;
  VirtualChannel& operator=(const VirtualChannel&) = delete;

  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const Parameters& parameters() const { return parameters_; }

  // The channels this node reads; the graph checks that each is produced upstream.
  virtual std::vector<channel_t> inputChannels() const = 0;

  // Stream time L such that, started fresh at any time s, this node's output from s + L on is
  // the output of one pass over the whole stream (a time range run starts it L earlier,
  // docs/parallel.md). nullopt (the default) when its state may depend on the whole past.
  virtual std::optional<timestamp_t> lookBack() const { return std::nullopt; }
  // Stream time A such that its output before any time e is complete once it has read the
  // input before e + A (a time range run reads that much further).
  virtual timestamp_t lookAhead() const { return 0; }

  // The first (or only) output channel; throws until the node is added to a graph.
  channel_t getChannel() const;
  std::vector<channel_t> getChannels() const;
  std::size_t outputCount() const { return output_count_; }
  bool hasChannels() const { return first_output_.has_value(); }

  // Returns the node to its initial state (pending tags and gate state dropped) at the next
  // block.
  void clear() { clear_requested_.store(true, std::memory_order_release); }

  // The settings that may change while the stream runs (the delay of a DelayedChannel, the
  // window of a coincidence), named as their parameters, with the values last set; the live
  // view's alignment controls read and set them. setLiveSetting() may come from any thread and
  // takes effect at the next block (InvalidArgument naming a key not among them, or the value
  // and its valid range).
  using LiveSettings = std::vector<std::pair<std::string, std::int64_t>>;
  virtual LiveSettings liveSettings() const { return {}; }
  virtual void setLiveSetting(const std::string& key, std::int64_t value);
  // A live setting that took a new value: from the block that began at `from` (stream time)
  // on, `key` was `value`.
  struct SettingChange {
    std::string key;
    std::int64_t value = 0;
    timestamp_t from = 0;
  };
  // Every change taken up since construction, in order (runs of the graph included); any
  // thread.
  std::vector<SettingChange> settingChanges() const;
  // What the results file keeps of the node: kind, name, the parameters as constructed (with
  // their units), the output channels and, per live setting, its changes (settingChanges()).
  ResultSet getResults() const;

  // Graph side.
  // The storage to give each output buffer for blocks of up to `block_tags` tags: the most a
  // fast path may use, so that no buffer grows, touching fresh memory, while the stream runs.
  static std::size_t outputBufferTags(std::size_t block_tags) {
    return kMaxTranscribeRoom * block_tags;
  }
  void assignChannels(channel_t first_output);
  void streamStarting();
  // Fills `out` with `in` plus the generated tags. When nothing was generated `out.tags`
  // views `in.tags` (the caller keeps `in` alive as long as `out`).
  void process(const TagBlock& in, BlockBuffer& out);

 protected:
  // The fast path: writes the block's tags (pure TimeTags) and the generated tags to `out` in
  // one pass and returns the end of the output. transcribeRoom() bounds how many tags it may
  // write for `block`, counting the candidate an InlineWriter stores past its end; 0 means no
  // fast path for this block, and so does a bound above kMaxTranscribeRoom tags per input tag
  // (the output storage would grow too large): the general path runs instead. transcribe()
  // may also give up with nullptr, having left the channel's state as it found it.
  static constexpr std::size_t kMaxTranscribeRoom = 3;
  virtual std::size_t transcribeRoom(const TagBlock& /*block*/) const { return 0; }
  virtual Tag* transcribe(const TagBlock& /*block*/, Tag* out) { return out; }

  // Reads a run of TimeTags (time-ordered, never before the previous run) and appends the
  // tags this node emits now, in any order.
  virtual void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) = 0;
  // Appends the tags kept for later whose time is before `until`.
  virtual void emitOwed(timestamp_t /*until*/, std::vector<Tag>& /*emitted*/) {}
  // A MissedEvents tag of the input: a channel that would have produced tags from the lost
  // ones passes the count on (a MissedEvents tag on its output channel, at the input tag's
  // time; the base class places it right after the input tag, inside the same interval).
  virtual void onMissedEvents(const Tag& /*tag*/, std::vector<Tag>& /*emitted*/) {}
  // Takes up what the setters asked for since the last block, before the next one, and calls
  // settingApplied() for each setting whose value changed.
  virtual void applySettings() {}
  void settingApplied(std::string key, std::int64_t value);
  // Forgets what decides future output (overflow begin, Error, clear()).
  virtual void forgetHistory() = 0;
  // Drops the tags kept for later (Error, clear()).
  virtual void dropOwed() {}

  channel_t outputChannel(std::size_t index = 0) const {
    return static_cast<channel_t>(*first_output_ + static_cast<channel_t>(index));
  }

 private:
  void generate(const TagBlock& in);
  void merge(const TagBlock& in, BlockBuffer& out);
  void findInsertionPoints(std::span<const Tag> input);
  void mergePlain(std::span<const Tag> input, Tag* out) const;

  std::string kind_;
  std::string name_;
  Parameters parameters_;
  const ParameterSchema& schema_;  // the kind's declaration, which lives as long as the program
  std::size_t output_count_;
  std::optional<channel_t> first_output_;
  std::atomic<bool> clear_requested_{false};
  bool in_overflow_ = false;  // at the start of the next block
  std::vector<Tag> emitted_;
  std::vector<std::size_t> insert_at_;     // per emitted tag: input tags before it
  std::vector<Tag> passed_on_;             // missed-event counts passed on
  std::vector<std::size_t> passed_on_at_;  // per passed-on tag: input tags before it
  timestamp_t block_begin_ = 0;            // of the block being processed
  mutable std::mutex changes_mutex_;       // settingChanges() may come from any thread
  std::vector<SettingChange> changes_;
};

}  // namespace tagflow
