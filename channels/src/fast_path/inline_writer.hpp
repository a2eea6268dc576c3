// The one-pass writers of the virtual channels' fast paths (VirtualChannel::transcribe): an
// output written in the same pass that reads the input, branch-free, bound by how many
// instructions the core issues per tag. Internal to the channels library: not installed, and
// not part of the public interface.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "fast_path/branch_free.hpp"
#include "fast_path/tag_register.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow::fast_path {

// Moves the generated tags (on channels first_output .. first_output + outputs - 1) of each
// run of equal times in [begin, end) behind the run's input tags: the repair of a fast path
// that wrote a generated tag before an input tag of its time.
void placeGeneratedAfterInput(Tag* begin, Tag* end, channel_t first_output, std::size_t outputs);
// For a fast path that finds a tag after writing later ones (a look-back time): inserts `tag`
// into the output written so far, [begin, end), after every tag at or before its time;
// returns the new end.
Tag* insertByTime(Tag* begin, Tag* end, const Tag& tag);

// The first 8 bytes of a TimeTag on `channel`: type, no missed events, the channel.
inline std::uint64_t timeTagHeader(channel_t channel) {
  return std::uint64_t{static_cast<std::uint32_t>(channel)} << 32;
}
// Stores a TimeTag with two 8-byte stores (constructing a Tag field by field takes three).
inline void storeTimeTag(Tag* at, std::uint64_t header, timestamp_t time) {
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
inline TagRegister tagTemplate(channel_t channel) {
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

}  // namespace tagflow::fast_path
