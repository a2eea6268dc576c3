#include "sources/sorted_runs.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <limits>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace tagflow::synthetic {

namespace {

// Major tags copied per minor tag in one go; a longer stretch takes a loop.
constexpr std::size_t kStretch = TagRun::kSlack;
// Major times compared with a minor tag's in one go.
constexpr std::size_t kLookahead = 8;

// Copies `count` tags in 32-byte moves (memcpy of a constant size compiles to 16-byte ones).
template <std::size_t count>
void copyTags(const Tag* from, Tag* to) {
  using Chunk = std::uint64_t __attribute__((vector_size(32)));
  static_assert(count * sizeof(Tag) % sizeof(Chunk) == 0);
  for (std::size_t offset = 0; offset < count * sizeof(Tag); offset += sizeof(Chunk)) {
    Chunk chunk;
    std::memcpy(&chunk, reinterpret_cast<const std::byte*>(from) + offset, sizeof chunk);
    std::memcpy(reinterpret_cast<std::byte*>(to) + offset, &chunk, sizeof chunk);
  }
}

// How many of the kLookahead times from `times` (sorted) are below `time`.
std::size_t countBelow(const timestamp_t* times, timestamp_t time) {
#ifdef __AVX2__
  const __m256i target = _mm256_set1_epi64x(time);
  const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(times));
  const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(times + 4));
  const auto below = static_cast<unsigned>(
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(target, low))) |
      _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(target, high))) << 4);
  return static_cast<std::size_t>(std::popcount(below));
#else
  std::size_t below = 0;
  for (std::size_t k = 0; k < kLookahead; ++k) below += times[k] < time;
  return below;
#endif
}

// The major tags before `tag`, from a lower bound `rank` of it; `times` are the major tags'
// times followed by kLookahead sentinels.
std::size_t rankFrom(std::size_t rank, const Tag& tag, const timestamp_t* times, const Tag* major) {
  // The run is sorted: the times below `tag` lead, so their count is the step to take.
  for (;;) {
    const std::size_t below = countBelow(times + rank, tag.time);
    rank += below;
    if (below < kLookahead) break;
  }
  // Equal times: the canonical order goes by channel (the sentinel ends the loop).
  while (times[rank] == tag.time && major[rank].channel < tag.channel) ++rank;
  return rank;
}

#ifdef __AVX2__
// For four tags loaded as two vectors a = (head0, time0 | head1, time1) and b = (head2, time2 |
// head3, time3), unpacking puts their times in the 64-bit lanes (time0, time2 | time1, time3)
// and their heads likewise, so a mask of the heads that match has its bits in that order. Entry
// m: the 32-bit lanes that move the times whose bit is set to the front, in tag order.
constexpr std::array<std::array<std::int32_t, 8>, 16> kPickedTimesFirst = [] {
  std::array<std::array<std::int32_t, 8>, 16> table{};
  for (std::size_t mask = 0; mask < 16; ++mask) {
    std::size_t next = 0;
    for (const std::int32_t lane : {0, 2, 1, 3}) {
      if ((mask >> lane) & 1) {
        table[mask][next++] = 2 * lane;
        table[mask][next++] = 2 * lane + 1;
      }
    }
  }
  return table;
}();
#endif

}  // namespace

std::size_t timesOnChannel(std::span<const Tag> tags, channel_t channel, timestamp_t* times) {
  std::size_t count = 0;
  std::size_t i = 0;
#ifdef __AVX2__
  // A tag matches where its first 8 bytes (all but the time) are those of a TimeTag on
  // `channel`.
  const Tag wanted = makeTimeTag(channel, 0);
  std::int64_t wanted_head = 0;
  std::memcpy(&wanted_head, &wanted, sizeof wanted_head);
  const __m256i head = _mm256_set1_epi64x(wanted_head);
  for (; i + 4 <= tags.size(); i += 4) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&tags[i]));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&tags[i + 2]));
    const auto mask = static_cast<unsigned>(_mm256_movemask_pd(
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_unpacklo_epi64(a, b), head))));
    const __m256i lanes =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kPickedTimesFirst[mask].data()));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(times + count),
                        _mm256_permutevar8x32_epi32(_mm256_unpackhi_epi64(a, b), lanes));
    count += static_cast<std::size_t>(std::popcount(mask));
  }
#endif
  for (; i < tags.size(); ++i) {
    times[count] = tags[i].time;
    count += tags[i].type == TagType::TimeTag && tags[i].missed_events == 0 &&
             tags[i].reserved == 0 && tags[i].channel == channel;
  }
  return count;
}

void restoreOrder(TimeRun& run, std::size_t sorted_prefix) {
  timestamp_t* const times = run.data();
  const std::size_t size = run.size();
  const std::size_t first = std::max<std::size_t>(sorted_prefix, 1);
  if (first >= size || std::is_sorted(times + first - 1, times + size)) return;
  const std::size_t move_budget = 8 * size + 64;
  std::size_t moves = 0;
  for (std::size_t i = first; i < size; ++i) {
    const timestamp_t value = times[i];
    std::size_t j = i;
    for (; j > 0 && times[j - 1] > value; --j) times[j] = times[j - 1];
    times[j] = value;
    moves += i - j;
    if (moves > move_budget) {
      std::sort(times, times + size);
      return;
    }
  }
}

void SparseMerge::append(const TagRun& a, std::size_t a_count, const TagRun& b, std::size_t b_count,
                         TagRun& out) {
  if (a_count == 0 || b_count == 0) {
    const Tag* const only = a_count == 0 ? b.data() : a.data();
    const std::size_t count = a_count + b_count;
    if (count > 0) std::memcpy(out.room(count), only, count * sizeof(Tag));
    out.grow(count);
  } else if (a_count >= b_count) {
    appendMerged(a.data(), a_count, b.data(), b_count, out);
  } else {
    appendMerged(b.data(), b_count, a.data(), a_count, out);
  }
}

void SparseMerge::rankMinor(const Tag* major, std::size_t major_count, const Tag* minor,
                            std::size_t minor_count) {
  if (major_times_.size() < major_count + kLookahead) {
    major_times_.resize(major_count + kLookahead);
  }
  for (std::size_t i = 0; i < major_count; ++i) major_times_[i] = major[i].time;
  std::fill_n(major_times_.data() + major_count, kLookahead,
              std::numeric_limits<timestamp_t>::max());
  if (ranks_.size() < minor_count) ranks_.resize(minor_count);
  // Four chains: chain c ranks the minor tags [c * length, (c + 1) * length), the last one the
  // rest too; each starts from a binary search. Written out, so that the four ranks stay in
  // registers.
  const std::size_t length = minor_count / 4;
  const timestamp_t* const times = major_times_.data();
  std::size_t* const ranks = ranks_.data();
  const auto lowerBound = [&](std::size_t j) {
    return static_cast<std::size_t>(
        std::lower_bound(times, times + major_count, minor[std::min(j, minor_count - 1)].time) -
        times);
  };
  std::size_t rank0 = lowerBound(0), rank1 = lowerBound(length);
  std::size_t rank2 = lowerBound(2 * length), rank3 = lowerBound(3 * length);
  for (std::size_t k = 0; k < length; ++k) {
    rank0 = ranks[k] = rankFrom(rank0, minor[k], times, major);
    rank1 = ranks[length + k] = rankFrom(rank1, minor[length + k], times, major);
    rank2 = ranks[2 * length + k] = rankFrom(rank2, minor[2 * length + k], times, major);
    rank3 = ranks[3 * length + k] = rankFrom(rank3, minor[3 * length + k], times, major);
  }
  for (std::size_t j = 4 * length; j < minor_count; ++j) {
    rank3 = ranks[j] = rankFrom(rank3, minor[j], times, major);
  }
}

void SparseMerge::appendMerged(const Tag* major, std::size_t major_count, const Tag* minor,
                               std::size_t minor_count, TagRun& out) {
  rankMinor(major, major_count, minor, minor_count);
  // Stretches are copied kStretch tags at a time, past their end: reads stay inside the major
  // run's slack, writes inside the room asked for here.
  Tag* next = out.room(major_count + minor_count + kStretch);
  const std::size_t* const ranks = ranks_.data();
  std::size_t copied = 0;  // major tags written so far
  for (std::size_t j = 0; j < minor_count; ++j) {
    const std::size_t stretch = ranks[j] - copied;
    copyTags<kStretch>(major + copied, next);
    for (std::size_t k = kStretch; k < stretch; k += kStretch) {
      copyTags<kStretch>(major + copied + k, next + k);
    }
    next += stretch;
    *next++ = minor[j];
    copied = ranks[j];
  }
  std::memcpy(next, major + copied, (major_count - copied) * sizeof(Tag));
  out.grow(major_count + minor_count);
}

}  // namespace tagflow::synthetic
