#include "tagflow/measurements/time_window.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

timestamp_t* TimeWindow::reserveFor(std::size_t count) {
  if (end_ + count + kReadSlack > capacity_) {
    const std::size_t kept = size();
    if (kept + count + kReadSlack <= capacity_ / 2) {
      // Plenty of room once the dropped front is reclaimed.
      std::memmove(data_.get(), data_.get() + head_, kept * sizeof(timestamp_t));
    } else {
      const std::size_t capacity = std::max<std::size_t>(2 * (kept + count + kReadSlack), 1024);
      auto grown = std::make_unique<timestamp_t[]>(capacity);
      // memcpy from the null pointer of a window never grown is undefined, even for 0 bytes.
      if (kept > 0) std::memcpy(grown.get(), data_.get() + head_, kept * sizeof(timestamp_t));
      data_ = std::move(grown);
      capacity_ = capacity;
    }
    head_ = 0;
    end_ = kept;
  }
  return data_.get() + end_;
}

void TimeWindow::seal() {
  timestamp_t* const past_end = reserveFor(0);
  std::fill(past_end, past_end + kSealTimes, std::numeric_limits<timestamp_t>::max());
}

namespace {

#if defined(__AVX2__)
// Four tags at a time: their times in lane order t0, t2, t1, t3 (how two unpacks leave them)
// and, per channel, which of them match; the matching times are packed to the front by a
// permutation from a table indexed by the match bits, stored whole, and the write position
// advances by their number.
class FourTagSplitter {
 public:
  FourTagSplitter() {
    for (unsigned mask = 0; mask < 16; ++mask) {
      std::int32_t* order = permutations_[mask];
      int filled = 0;
      for (const int lane : {0, 2, 1, 3}) {  // time order of the lanes
        if (mask & (1u << lane)) {
          order[2 * filled] = 2 * lane;
          order[2 * filled + 1] = 2 * lane + 1;
          ++filled;
        }
      }
    }
  }

  // Loads tags[0..3]; returns the times (lanes t0, t2, t1, t3) and sets the channel fields.
  static __m256i load(const Tag* tags, __m256i& channels) {
    const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags));
    const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags + 2));
    // The channel is the upper half of each tag's first eight bytes.
    channels = _mm256_srli_epi64(_mm256_unpacklo_epi64(first, second), 32);
    return _mm256_unpackhi_epi64(first, second);
  }

  // Stores the times whose channel matches at out; returns how many.
  std::size_t store(__m256i times, __m256i channels, __m256i channel, timestamp_t* out) const {
    const auto mask = static_cast<unsigned>(
        _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(channels, channel))));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out),
        _mm256_permutevar8x32_epi32(
            times, _mm256_load_si256(reinterpret_cast<const __m256i*>(permutations_[mask]))));
    return static_cast<std::size_t>(std::popcount(mask));
  }

 private:
  alignas(32) std::int32_t permutations_[16][8] = {};
};

const FourTagSplitter kSplitter;

__m256i channelLanes(channel_t channel) {
  return _mm256_set1_epi64x(static_cast<long long>(static_cast<std::uint32_t>(channel)));
}
#endif

}  // namespace

SplitCounts splitChannelsInto(std::span<const Tag> tags, channel_t channel_a, timestamp_t* out_a,
                              channel_t channel_b, timestamp_t* out_b) {
  std::size_t count_a = 0;
  std::size_t count_b = 0;
  std::size_t i = 0;
#if defined(__AVX2__)
  const __m256i lanes_a = channelLanes(channel_a);
  if (out_b == nullptr) {
    for (; i + 4 <= tags.size(); i += 4) {
      prefetchAhead(&tags[i]);
      __m256i channels;
      const __m256i times = FourTagSplitter::load(&tags[i], channels);
      count_a += kSplitter.store(times, channels, lanes_a, out_a + count_a);
    }
  } else {
    const __m256i lanes_b = channelLanes(channel_b);
    for (; i + 4 <= tags.size(); i += 4) {
      prefetchAhead(&tags[i]);
      __m256i channels;
      const __m256i times = FourTagSplitter::load(&tags[i], channels);
      count_a += kSplitter.store(times, channels, lanes_a, out_a + count_a);
      count_b += kSplitter.store(times, channels, lanes_b, out_b + count_b);
    }
  }
#endif
  for (; i < tags.size(); ++i) {
    const Tag& tag = tags[i];
    out_a[count_a] = tag.time;
    count_a += tag.channel == channel_a;
    if (out_b != nullptr) {
      out_b[count_b] = tag.time;
      count_b += tag.channel == channel_b;
    }
  }
  return {count_a, count_b};
}

void splitChannels(std::span<const Tag> tags, channel_t channel_a, TimeWindow& a,
                   channel_t channel_b, TimeWindow* b) {
  timestamp_t* const out_a = a.reserveFor(tags.size() + kSplitSpare);
  timestamp_t* const out_b = b != nullptr ? b->reserveFor(tags.size() + kSplitSpare) : nullptr;
  const SplitCounts counts = splitChannelsInto(tags, channel_a, out_a, channel_b, out_b);
  a.commit(counts.a);
  if (b != nullptr) b->commit(counts.b);
}

}  // namespace tagflow
