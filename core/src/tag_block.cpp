#include "tagflow/core/tag_block.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

void BlockBuffer::publishStorage() {
  tags = storage;
  indexSpecialTags();
}

void BlockBuffer::indexSpecialTags() {
  special.clear();
  for (std::size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].type != TagType::TimeTag) special.push_back(static_cast<std::uint32_t>(i));
  }
}

std::size_t firstAtOrAfter(std::span<const Tag> tags, timestamp_t time) {
  std::size_t low = 0;  // every tag before `low` is earlier than `time`
  std::size_t step = 1;
  while (low + step <= tags.size() && tags[low + step - 1].time < time) {
    low += step;
    step *= 2;
  }
  const auto first = tags.begin() + static_cast<std::ptrdiff_t>(low);
  const auto last = tags.begin() + static_cast<std::ptrdiff_t>(std::min(tags.size(), low + step));
  return static_cast<std::size_t>(
      std::lower_bound(first, last, time,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      tags.begin());
}

std::size_t blockSplitPoint(std::span<const Tag> tags, std::size_t max_tags) {
  if (tags.size() <= max_tags) return tags.size();
  std::size_t count = max_tags;
  while (count > 0 && tags[count - 1].time == tags[count].time) --count;
  if (count > 0) return count;
  count = max_tags;
  while (count < tags.size() && tags[count].time == tags[0].time) ++count;
  return count;
}

std::size_t firstOnChannels(std::span<const Tag> tags, channel_t first, channel_t end) {
  // A channel c lies in [first, end) exactly when c - first, as unsigned, is below end - first.
  const auto count = static_cast<std::uint32_t>(end - first);
  const auto inside = [&](const Tag& tag) {
    return static_cast<std::uint32_t>(tag.channel - first) < count;
  };
  std::size_t i = 0;
#if defined(__AVX2__)
  // Two tags a vector, their channels in 32-bit lanes 1 and 5; the unsigned compare is a signed
  // one with the sign bits flipped. A group of eight is looked at tag by tag only when one hit.
  static_assert(sizeof(Tag) == 16 && offsetof(Tag, channel) == 4);
  const __m256i sign = _mm256_set1_epi32(std::numeric_limits<std::int32_t>::min());
  const __m256i lowest = _mm256_set1_epi32(first);
  const __m256i bound = _mm256_xor_si256(_mm256_set1_epi32(static_cast<std::int32_t>(count)), sign);
  const auto below = [&](std::size_t at) {
    const __m256i pair = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tags.data() + at));
    return _mm256_cmpgt_epi32(bound, _mm256_xor_si256(_mm256_sub_epi32(pair, lowest), sign));
  };
  constexpr int kChannelLanes = 0b0010'0010;
  for (; i + 8 <= tags.size(); i += 8) {
    const __m256i hits = _mm256_or_si256(_mm256_or_si256(below(i), below(i + 2)),
                                         _mm256_or_si256(below(i + 4), below(i + 6)));
    if ((_mm256_movemask_ps(_mm256_castsi256_ps(hits)) & kChannelLanes) != 0) break;
  }
#endif
  for (; i < tags.size(); ++i) {
    if (inside(tags[i])) return i;
  }
  return tags.size();
}

}  // namespace tagflow
