// TimeWindow: the recent event times of one channel, oldest first, for measurements that pair
// events with the events of a sliding window. Appending and dropping are O(1) amortised and
// storage is reused, so steady state allocates nothing. splitChannels() fills two windows from
// a block in one pass without a data-dependent branch per tag: with several channels mixed at
// random, that branch is what a per-tag loop spends most of its time mispredicting.
// kReadSlack times past the end are always readable (unspecified values), so that vector code
// may load whole registers, or a whole run of differences, at the end of the window; seal()
// makes the first kSealTimes of them the largest time, which ends the searches below without
// a check of the window's size.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "tagflow/core/tag.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

class TimeWindow {
 public:
  static constexpr std::size_t kReadSlack = 32;
  static constexpr std::size_t kSealTimes = 8;

  std::size_t size() const { return end_ - head_; }
  bool empty() const { return end_ == head_; }
  timestamp_t operator[](std::size_t i) const { return data_[head_ + i]; }
  std::span<const timestamp_t> times() const { return {data_.get() + head_, size()}; }

  void push(timestamp_t time) {
    reserveFor(1);
    data_[end_++] = time;
  }
  // Forgets the `count` oldest times.
  void dropFront(std::size_t count) { head_ += count; }
  // Forgets every time earlier than `time`. Steps of 1, 2, 4, ... times, then a binary
  // search within the last step: a few times dropped cost a few compares, a block's worth of
  // them a logarithm of it instead of one compare each.
  void dropBefore(timestamp_t time) {
    if (head_ == end_ || data_[head_] >= time) return;
    std::size_t below = head_;  // the last position known to hold a time before `time`
    std::size_t step = 1;
    while (below + step < end_ && data_[below + step] < time) {
      below += step;
      step *= 2;
    }
    const timestamp_t* const data = data_.get();
    head_ = static_cast<std::size_t>(
        std::lower_bound(data + below + 1, data + std::min(below + step, end_), time) - data);
  }
  void clear() { head_ = end_ = 0; }
  // Until the next push or commit, the kSealTimes times past the end read as the largest
  // time; may move the storage, so call it before times().
  void seal();

  // Room for `count` more times at the end; returns where they go.
  timestamp_t* reserveFor(std::size_t count);
  // Makes `count` times written after reserveFor() part of the window.
  void commit(std::size_t count) { end_ += count; }

 private:
  std::unique_ptr<timestamp_t[]> data_;
  std::size_t capacity_ = 0;
  std::size_t head_ = 0;
  std::size_t end_ = 0;
};

// The first position at or after `position` in the sorted `times` of a sealed window whose
// time is not below `bound` (times.size() if none). Steps of up to eight times at once without
// a branch per time: windows move by a few times per event, and a per-time loop mispredicts its
// exit once per event. The seal stops the steps at the end without a size check, which would
// lengthen the chain of dependent steps that a caller's run of searches forms.
inline std::size_t advanceBelow(std::span<const timestamp_t> times, std::size_t position,
                                timestamp_t bound) {
#if defined(__AVX2__)
  const __m256i bounds = _mm256_set1_epi64x(bound);
  for (;;) {
    const auto* at = reinterpret_cast<const __m256i*>(times.data() + position);
    const __m256i below_low = _mm256_cmpgt_epi64(bounds, _mm256_loadu_si256(at));
    const __m256i below_high = _mm256_cmpgt_epi64(bounds, _mm256_loadu_si256(at + 1));
    // Each 64-bit verdict is two equal 32-bit halves: one half of each gives all eight bits.
    const int below = std::popcount(static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_blend_epi32(below_low, below_high, 0xAA)))));
    position += static_cast<std::size_t>(below);
    if (below < 8) return position;
  }
#else
  while (position < times.size() && times[position] < bound) ++position;
  return position;
#endif
}

// The same for times not above `bound`.
inline std::size_t advanceNotAbove(std::span<const timestamp_t> times, std::size_t position,
                                   timestamp_t bound) {
  return bound == std::numeric_limits<timestamp_t>::max()
             ? times.size()
             : advanceBelow(times, position, bound + 1);
}

// With AVX2, writeMappedDifferences() writes at most this many values whenever it is asked
// for no more.
inline constexpr std::size_t kWholeDifferences = 32;

// The identity map of writeMappedDifferences().
struct PlainDifference {
#if defined(__AVX2__)
  static __m256i lanes(__m256i differences) {
    return differences;
  }
#endif
  static timestamp_t one(timestamp_t difference) {
    return difference;
  }
};

// out[j] = map(from - times[j]) for j < count, the map applied by `map.lanes` to four
// differences at a time (AVX2) and by `map.one` to one. A count up to 8 is written as 8
// values, one up to kWholeDifferences as kWholeDifferences, without a loop (the extra ones
// unspecified), so that a caller writing one run after another has no loop exit to mispredict
// per run (which of the two sizes a run takes changes seldom for a given window). It reads as
// many times from `times` as it writes (within a TimeWindow's read slack when `times + count`
// is inside a window that holds times) and `out` must have room for them.
template <class Map>
inline void writeMappedDifferences(timestamp_t from, const timestamp_t* times, std::size_t count,
                                   timestamp_t* out, const Map& map) {
#if defined(__AVX2__)
  const auto write = [&](std::size_t whole) {
    const __m256i lanes = _mm256_set1_epi64x(from);
    for (std::size_t j = 0; j < whole; j += 4) {
      const __m256i differences =
          _mm256_sub_epi64(lanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(times + j)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), map.lanes(differences));
    }
  };
  if (count <= 8) return write(8);
  if (count <= kWholeDifferences) return write(kWholeDifferences);
#endif
  for (std::size_t j = 0; j < count; ++j) out[j] = map.one(from - times[j]);
}

// out[j] = from - times[j] for j < count, written as writeMappedDifferences() writes.
inline void writeDifferences(timestamp_t from, const timestamp_t* times, std::size_t count,
                             timestamp_t* out) {
  writeMappedDifferences(from, times, count, out, PlainDifference{});
}

// Pairs each of the sorted `events` with the sorted times of a sealed window, `partners`, that
// lie in [t + earliest, t + latest] for the event at t. Each event's run of pairs is written
// by write(t, partners + begin, count, out), which may write up to kWholeDifferences values
// past the run (as writeMappedDifferences() does), to `queue`, and the queue is counted by
// flush(span of values) when full and at the end: one flat counting loop, where a loop over
// each event's own partners would end at a different count every event, and mispredict there.
// The queue grows to hold any one run. Returns the first position of the last event's run.
template <class Write, class Flush>
std::size_t pairWindows(std::span<const timestamp_t> events, std::span<const timestamp_t> partners,
                        timestamp_t earliest, timestamp_t latest, std::vector<timestamp_t>& queue,
                        const Write& write, const Flush& flush) {
  if (events.empty() || partners.empty()) return 0;
  // The events are paired in four interleaved runs, a quarter of them each: each search
  // depends on the one before it, and independent chains let the core overlap them. Written
  // out, not as arrays, which the compiler left in memory.
  const std::size_t quarter = events.size() / 4;
  const auto windowStart = [&](std::size_t k) {
    return static_cast<std::size_t>(
        std::lower_bound(partners.begin(), partners.end(), events[k] + earliest) -
        partners.begin());
  };
  // Each chain's current window, partners[begin, end). `end` moves on from where it was, not
  // from `begin`: tying the two searches would make them one chain.
  std::size_t begin_0 = 0, end_0 = 0;
  std::size_t begin_1 = windowStart(quarter), end_1 = begin_1;
  std::size_t begin_2 = windowStart(2 * quarter), end_2 = begin_2;
  std::size_t begin_3 = windowStart(3 * quarter), end_3 = begin_3;
  // Locals, not the vector's fields: they would be reloaded after every store of a run.
  timestamp_t* out = queue.data();
  std::size_t room = queue.size() - kWholeDifferences;
  std::size_t written = 0;
  const auto make_room = [&](std::size_t count) {
    flush(std::span<const timestamp_t>(out, written));
    written = 0;
    if (count > room) queue.resize(count + kWholeDifferences);
    out = queue.data();
    room = queue.size() - kWholeDifferences;
  };
  // Inlined, or the positions would pass through memory, a store and a load longer per step.
  // clang-format off
  const auto pair = [&](timestamp_t t, std::size_t& begin, std::size_t& end)
      __attribute__((always_inline)) {
    // clang-format on
    begin = advanceBelow(partners, begin, t + earliest);
    end = advanceNotAbove(partners, end, t + latest);
    const std::size_t count = end - begin;
    if (written + count > room) [[unlikely]] {
      make_room(count);
    }
    write(t, partners.data() + begin, count, out + written);
    written += count;
  };
  for (std::size_t k = 0; k < quarter; ++k) {
    pair(events[k], begin_0, end_0);
    pair(events[quarter + k], begin_1, end_1);
    pair(events[2 * quarter + k], begin_2, end_2);
    pair(events[3 * quarter + k], begin_3, end_3);
  }
  for (std::size_t k = 4 * quarter; k < events.size(); ++k) pair(events[k], begin_3, end_3);
  flush(std::span<const timestamp_t>(out, written));
  return begin_3;
}

// Appends the times of the tags on `channel_a` to `a` and of those on `channel_b` to `b`
// (`b` may be null). Tags on other channels are skipped.
void splitChannels(std::span<const Tag> tags, channel_t channel_a, TimeWindow& a,
                   channel_t channel_b, TimeWindow* b);

// Appends `times` (sorted, none before the window's last) to `window`.
void appendTimes(std::span<const timestamp_t> times, TimeWindow& window);

}  // namespace tagflow
