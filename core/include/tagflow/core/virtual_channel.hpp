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
// Threading: process() runs on one thread at a time, in block order; clear() may come from
// any thread and takes effect at the next block.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "tagflow/core/branch_free.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/tag_block.hpp"
#include "tagflow/core/tag_register.hpp"

namespace tagflow {

class VirtualChannel {
 public:
  VirtualChannel(std::string kind, std::string name, Parameters parameters,
                 std::size_t output_count = 1);
  virtual ~VirtualChannel() = default;
  VirtualChannel(const VirtualChannel&) = delete;
  VirtualChannel& operator=(const VirtualChannel&) = delete;

  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const Parameters& parameters() const { return parameters_; }

  // The channels this node reads; the graph checks that each is produced upstream.
  virtual std::vector<channel_t> inputChannels() const = 0;

  // The first (or only) output channel; throws until the node is added to a graph.
  channel_t getChannel() const;
  std::vector<channel_t> getChannels() const;
  std::size_t outputCount() const { return output_count_; }
  bool hasChannels() const { return first_output_.has_value(); }

  // Returns the node to its initial state (pending tags and gate state dropped) at the next
  // block.
  void clear() { clear_requested_.store(true, std::memory_order_release); }

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
  // The first 8 bytes of a TimeTag on `channel`: type, no missed events, the channel.
  static std::uint64_t timeTagHeader(channel_t channel) {
    return std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
  }
  // Stores a TimeTag with two 8-byte stores (constructing a Tag field by field takes three).
  static void storeTimeTag(Tag* at, std::uint64_t header, timestamp_t time) {
    char* const bytes = reinterpret_cast<char*>(at);
    std::memcpy(bytes, &header, sizeof header);
    std::memcpy(bytes + offsetof(Tag, time), &time, sizeof time);
  }

  // The runs of equal times in which a fast path wrote a generated tag before an input tag of
  // its time. Rare, so a fast path notes them with a branch (by time, as a later
  // insertByTime() may move a run) and only they are put right at the end, generated tags behind
  // the run's input tags; every run of the output when there were too many to note.
  class MisplacedRuns {
   public:
    void note(timestamp_t time) {
      if (count_ < times_.size()) times_[count_] = time;
      ++count_;
    }
    // Generated tags are those on channels first_output .. first_output + outputs - 1. Inline:
    // a call would take the address of the writer holding this, which then stays in memory.
    void repair(Tag* begin, Tag* end, channel_t first_output, std::size_t outputs) const {
      if (count_ > times_.size()) {
        placeGeneratedAfterInput(begin, end, first_output, outputs);
        return;
      }
      for (std::size_t i = 0; i < count_; ++i) {
        const auto [run, run_end] =
            std::equal_range(begin, end, Tag{TagType::TimeTag, 0, 0, 0, times_[i]},
                             [](const Tag& a, const Tag& b) { return a.time < b.time; });
        placeGeneratedAfterInput(run, run_end, first_output, outputs);
      }
    }

   private:
    std::array<timestamp_t, 16> times_;
    std::size_t count_ = 0;
  };

  // A TimeTag on `channel` whose time an InlineWriter fills in: made once per block, held in a
  // register through the loop.
  static TagRegister tagTemplate(channel_t channel) {
    const Tag tag = makeTimeTag(channel, 0);
    return TagRegister::load(&tag);
  }

  // Writes the input and the generated tags to `out` in one pass, branch-free: a candidate is
  // stored after the input tag that causes it, at that tag's time, and kept only when the
  // condition holds, so an unpredictable condition costs no misprediction. A generated tag
  // belongs after every input tag of its time; the rare case of a next input tag at the same
  // time is noticed and put right in finish(). For channels whose tags come at the time of the
  // input tag that causes them: their fast path (transcribe), taken for blocks without special
  // tags while no overflow is open, saves the separate merge.
  //
  // A fast path reads what it needs of an input tag (its time, channel, the tag itself) before
  // it stores anything: the compiler cannot tell the output from the input, so a field read
  // after a store is loaded again, and that load may wait on the store (figures in
  // docs/benchmarks.md, "Virtual channels").
  class InlineWriter {
   public:
    // Generated tags are those on channels first_output .. first_output + outputs - 1.
    InlineWriter(Tag* out, channel_t first_output, std::size_t outputs = 1)
        : begin_(out), out_(out), first_output_(first_output), outputs_(outputs) {}
    void copy(const Tag& tag) {
      // Two input tags of one time are rare: a predictable branch, not arithmetic per tag.
      if (tag.time == time_) [[unlikely]] {
        noteIfGeneratedAt(tag.time);
      }
      time_ = tag.time;
      copied_ = TagRegister::load(&tag);
      copied_.store(out_++);
    }
    // copy() for a writer that only emits tags owed from earlier (emit(), emitFirstBytes()), never
    // one at the copied tag's time: nothing can be misplaced, and the test is left out.
    void copyAfterOwed(const Tag& tag) { *out_++ = tag; }
    void copyAfterOwed(TagRegister tag) { tag.store(out_++); }
    // A tag with the header of `header` (see tagTemplate()) at the time of the tag copied
    // last, if `condition`.
    void generateIf(bool condition, TagRegister header) {
      header.withTimeOf(copied_).store(out_);
      out_ += opaqueFlag(condition);
    }
    // The same with the condition `value >= bound`, where `value` is read from memory: on
    // x86-64 the comparison and a conditional move advance the output, three instructions
    // where a flag turned into an offset takes five.
    void generateIfNotBelow(const timestamp_t& value, timestamp_t bound, TagRegister header) {
      header.withTimeOf(copied_).store(out_);
#if defined(__x86_64__)
      Tag* const next = out_ + 1;
      asm("cmp %[bound], %[value]\n\tcmovge %[next], %[out]"
          : [out] "+r"(out_)
          : [value] "m"(value), [bound] "r"(bound), [next] "r"(next)
          : "cc");
#else
      out_ += opaqueFlag(value >= bound);
#endif
    }
    // A tag found now whose time is before the input tag copied last (a look-back time): put
    // in place among the tags written so far.
    void insertEarlier(const Tag& tag) {
      out_ = insertByTime(begin_, out_, tag);
    }
    // The first `bytes` of `tags`, tags owed from earlier and due before the next input tag
    // (counted in bytes, so that a loop that counts them so scales nothing): two stored as
    // candidates (`tags` must hold two), a third and more with a branch.
    void emitFirstBytes(const char* tags, std::uint64_t bytes) {
#if defined(__AVX__)
      // One 32-byte move (a memcpy of two tags becomes two 16-byte moves).
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out_),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags)));
#else
      std::memcpy(out_, tags, 2 * sizeof(Tag));
#endif
      if (bytes > 2 * sizeof(Tag)) [[unlikely]] {
        const auto* const first = reinterpret_cast<const Tag*>(tags);
        for (std::uint64_t i = 2; i < bytes / sizeof(Tag); ++i) out_[i] = first[i];
      }
      out_ = reinterpret_cast<Tag*>(reinterpret_cast<char*>(out_) + bytes);
    }
    // The end of what is written so far.
    const Tag* end() const {
      return out_;
    }
    // A tag owed from earlier, due before the next input tag (its time is earlier).
    void emit(timestamp_t time, channel_t channel) {
      *out_++ = Tag{TagType::TimeTag, 0, 0, channel, time};
    }
    // Returns the end of the output.
    Tag* finish() {
      misplaced_.repair(begin_, out_, first_output_, outputs_);
      return out_;
    }

   private:
    // Called before copying an input tag at `time` when the tag copied last had that time:
    // a generated tag written just before is misplaced. Only generated tags carry this
    // node's output channels, so the last tag out tells, without tracking per tag.
    void noteIfGeneratedAt(timestamp_t time) {
      if (out_ == begin_) return;
      const Tag& last = out_[-1];
      const std::uint32_t offset =
          static_cast<std::uint32_t>(last.channel) - static_cast<std::uint32_t>(first_output_);
      if (last.time == time && offset < outputs_) misplaced_.note(time);
    }

    Tag* begin_;
    Tag* out_;
    channel_t first_output_;
    std::size_t outputs_;
    timestamp_t time_ = 0;
    TagRegister copied_{};
    MisplacedRuns misplaced_;
  };
  // The fast path: writes the block's tags (pure TimeTags) and the generated tags to `out` in
  // one pass and returns the end of the output. transcribeRoom() bounds how many tags it may
  // write for `block`, counting the candidate an InlineWriter stores past its end; 0 means no
  // fast path for this block, and so does a bound above kMaxTranscribeRoom tags per input tag
  // (the output storage would grow too large): the general path runs instead. transcribe()
  // may also give up with nullptr, having left the channel's state as it found it.
  static constexpr std::size_t kMaxTranscribeRoom = 3;
  // Moves the generated tags (on channels first_output .. first_output + outputs - 1) of each
  // run of equal times in [begin, end) behind the run's input tags: the repair of a fast path
  // that wrote a generated tag before an input tag of its time.
  static void placeGeneratedAfterInput(Tag* begin, Tag* end, channel_t first_output,
                                       std::size_t outputs);
  // For a fast path that finds a tag after writing later ones (a look-back time): inserts `tag`
  // into the output written so far, [begin, end), after every tag at or before its time;
  // returns the new end.
  static Tag* insertByTime(Tag* begin, Tag* end, const Tag& tag);
  virtual std::size_t transcribeRoom(const TagBlock& /*block*/) const {
    return 0;
  }
  virtual Tag* transcribe(const TagBlock& /*block*/, Tag* out) {
    return out;
  }

  // Reads a run of TimeTags (time-ordered, never before the previous run) and appends the
  // tags this node emits now, in any order.
  virtual void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) = 0;
  // Appends the tags kept for later whose time is before `until`.
  virtual void emitOwed(timestamp_t /*until*/, std::vector<Tag>& /*emitted*/) {}
  // A MissedEvents tag of the input: a channel that would have produced tags from the lost
  // ones passes the count on (a MissedEvents tag on its output channel, at the input tag's
  // time; the base class places it right after the input tag, inside the same interval).
  virtual void onMissedEvents(const Tag& /*tag*/, std::vector<Tag>& /*emitted*/) {}
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
  std::size_t output_count_;
  std::optional<channel_t> first_output_;
  std::atomic<bool> clear_requested_{false};
  bool in_overflow_ = false;  // at the start of the next block
  std::vector<Tag> emitted_;
  std::vector<std::size_t> insert_at_;     // per emitted tag: input tags before it
  std::vector<Tag> passed_on_;             // missed-event counts passed on
  std::vector<std::size_t> passed_on_at_;  // per passed-on tag: input tags before it
};

}  // namespace tagflow
