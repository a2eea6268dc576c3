// Sorted runs of time tags, as the synthetic source builds its windows from them: each kind of
// channel yields a run in time order (or nearly, where jitter swaps neighbours), and a window
// is their merge in canonical order. Every tag of these runs is a TimeTag, so the canonical
// order is time, then channel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::synthetic {

// A run of tags or times in storage kept from one use to the next. Growing it initialises
// only storage it never had: std::vector::resize after a clear() would write every new
// element again, as much work as writing them. While it holds elements, its storage extends
// kSlack elements past them, so that a loop may copy a fixed number of elements from near the
// end (copying more than it keeps) without a check.
template <typename T>
class Run {
 public:
  static constexpr std::size_t kSlack = 8;

  std::size_t size() const { return size_; }
  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }
  std::span<const T> items() const { return {storage_.data(), size_}; }

  // Room for `count` elements after the run: write them, then add them with grow().
  T* room(std::size_t count) {
    if (storage_.size() < size_ + count + kSlack) storage_.resize(size_ + count + kSlack);
    return storage_.data() + size_;
  }
  void grow(std::size_t count) { size_ += count; }
  void push_back(const T& item) {
    *room(1) = item;
    ++size_;
  }
  void truncate(std::size_t size) { size_ = size; }
  void clear() { size_ = 0; }
  // Hands the run's elements over as the first size() of `into`, without a copy (the two
  // exchange their storage), and leaves the run empty. Neither storage shrinks, so that neither
  // is initialised again when it grows back.
  void handOver(std::vector<T>& into) {
    std::swap(storage_, into);
    size_ = 0;
  }
  std::size_t capacity() const { return storage_.capacity(); }
  void reserve(std::size_t capacity) { storage_.reserve(capacity); }
  // Gives the storage back (an empty run).
  void release() {
    storage_ = {};
    size_ = 0;
  }
  void eraseFront(std::size_t count) {
    if (count == 0) return;
    std::memmove(static_cast<void*>(storage_.data()), storage_.data() + count,
                 (size_ - count) * sizeof(T));
    size_ -= count;
  }

 private:
  std::vector<T> storage_;
  std::size_t size_ = 0;
};

using TagRun = Run<Tag>;
using TimeRun = Run<timestamp_t>;

// Sorts `run` given that run[0, sorted_prefix) is sorted and the rest was appended nearly in
// order: an insertion sort, one comparison per element plus one move per displacement. Past a
// budget of moves (jitter far larger than the gaps) it sorts the run outright instead.
void restoreOrder(TimeRun& run, std::size_t sorted_prefix);

// Writes the times of the TimeTags on `channel` to `times` (room for every tag and 4 more, which
// it may overwrite), in order; returns how many. The channels of a Poisson run alternate at random:
// this decides without a branch, four tags at a time where AVX2 is there.
std::size_t timesOnChannel(std::span<const Tag> tags, channel_t channel, timestamp_t* times);

// Merges two sorted runs. A plain merge decides, tag by tag, which run goes next; the order of
// the two is random here, so that decision is a mispredicted branch or a chain of dependent
// loads for every tag. This merge instead ranks each tag of the smaller (minor) run among the
// larger (major) one, counting the major times below it eight at a time from the previous
// tag's rank (in four independent chains, so that one's loads wait while the others count),
// and then copies the major tags between two minor ones in one stretch. Its cost is a few
// operations per major tag and a few dozen per minor tag.
class SparseMerge {
 public:
  // Appends the merge of the first `a_count` tags of `a` and the first `b_count` of `b`
  // (both sorted) to `out`.
  void append(const TagRun& a, std::size_t a_count, const TagRun& b, std::size_t b_count,
              TagRun& out);

 private:
  void appendMerged(const Tag* major, std::size_t major_count, const Tag* minor,
                    std::size_t minor_count, TagRun& out);
  // ranks_[j]: the major tags before minor tag j.
  void rankMinor(const Tag* major, std::size_t major_count, const Tag* minor,
                 std::size_t minor_count);

  std::vector<timestamp_t> major_times_;  // then kLookahead sentinels
  std::vector<std::size_t> ranks_;
};

}  // namespace tagflow::synthetic
