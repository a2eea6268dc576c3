#include "tagflow/core/channel_split.hpp"

#include <array>
#include <bit>
#include <stdexcept>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

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
#endif

// The channel count as a constant: the compares and write positions stay in registers.
template <std::size_t N>
void splitFixed(std::span<const Tag> tags, const channel_t* channels, timestamp_t* const* out,
                std::size_t* counts) {
  std::array<std::size_t, N> count{};
  std::size_t i = 0;
#if defined(__AVX2__)
  __m256i lanes[N];
  for (std::size_t c = 0; c < N; ++c) {
    lanes[c] = _mm256_set1_epi64x(static_cast<long long>(static_cast<std::uint32_t>(channels[c])));
  }
  for (; i + 4 <= tags.size(); i += 4) {
    prefetchAhead(&tags[i]);
    __m256i tag_channels;
    const __m256i times = FourTagSplitter::load(&tags[i], tag_channels);
    for (std::size_t c = 0; c < N; ++c) {
      count[c] += kSplitter.store(times, tag_channels, lanes[c], out[c] + count[c]);
    }
  }
#endif
  for (; i < tags.size(); ++i) {
    const Tag& tag = tags[i];
    for (std::size_t c = 0; c < N; ++c) {
      out[c][count[c]] = tag.time;
      count[c] += tag.channel == channels[c];
    }
  }
  for (std::size_t c = 0; c < N; ++c) counts[c] = count[c];
}

}  // namespace

void splitTimes(std::span<const Tag> tags, std::span<const channel_t> channels,
                timestamp_t* const* out, std::size_t* counts) {
  switch (channels.size()) {
    case 1:
      return splitFixed<1>(tags, channels.data(), out, counts);
    case 2:
      return splitFixed<2>(tags, channels.data(), out, counts);
    case 3:
      return splitFixed<3>(tags, channels.data(), out, counts);
    case 4:
      return splitFixed<4>(tags, channels.data(), out, counts);
    default:
      throw std::logic_error("splitTimes: 1 to 4 channels");
  }
}

}  // namespace tagflow
