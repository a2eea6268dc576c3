#include "tagflow/core/channel_index.hpp"

#include <algorithm>
#include <string>

#include "tagflow/core/error.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace tagflow {

namespace {

#if defined(__AVX2__)
// Eight tags a step for up to kMaxVectorSlots channels: their channel fields gathered into one
// register, compared with each channel, the matches counted in 32-bit lanes (a lane gains at
// most one a step, so it cannot wrap within any span held in memory). A few vector operations
// a tag, where the table look-up and the increment of a count in memory cost several cycles.
// Returns where it stopped (fewer than eight tags left); counts[size] gets the other tags.
template <std::size_t kSlots>
const Tag* countEightAtATime(const Tag* tag, const Tag* end, const channel_t* channels,
                             std::uint64_t* counts) {
  __m256i wanted[kSlots], matches[kSlots];
  for (std::size_t s = 0; s < kSlots; ++s) {
    wanted[s] = _mm256_set1_epi32(channels[s]);
    matches[s] = _mm256_setzero_si256();
  }
  const Tag* const begin = tag;
  for (; end - tag >= 8; tag += 8) {
    prefetchAhead(tag);
    prefetchAhead(tag + 4);
    const auto* words = reinterpret_cast<const __m256i*>(tag);
    // The first eight bytes of tags 0, 2 | 1, 3 and 4, 6 | 5, 7; a channel is the upper half.
    const __m256i front =
        _mm256_unpacklo_epi64(_mm256_loadu_si256(words), _mm256_loadu_si256(words + 1));
    const __m256i back =
        _mm256_unpacklo_epi64(_mm256_loadu_si256(words + 2), _mm256_loadu_si256(words + 3));
    const __m256i seen = _mm256_castps_si256(_mm256_shuffle_ps(
        _mm256_castsi256_ps(front), _mm256_castsi256_ps(back), _MM_SHUFFLE(3, 1, 3, 1)));
    for (std::size_t s = 0; s < kSlots; ++s) {
      matches[s] = _mm256_sub_epi32(matches[s], _mm256_cmpeq_epi32(seen, wanted[s]));
    }
  }
  std::uint64_t matched = 0;
  for (std::size_t s = 0; s < kSlots; ++s) {
    alignas(32) std::uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), matches[s]);
    std::uint64_t sum = 0;
    for (const std::uint32_t lane : lanes) sum += lane;
    counts[s] += sum;
    matched += sum;
  }
  counts[kSlots] += static_cast<std::uint64_t>(tag - begin) - matched;
  return tag;
}

const Tag* countVectorised(const Tag* tag, const Tag* end, const std::vector<channel_t>& channels,
                           std::uint64_t* counts) {
  const channel_t* wanted = channels.data();
  switch (channels.size()) {
    case 1:
      return countEightAtATime<1>(tag, end, wanted, counts);
    case 2:
      return countEightAtATime<2>(tag, end, wanted, counts);
    case 3:
      return countEightAtATime<3>(tag, end, wanted, counts);
    case 4:
      return countEightAtATime<4>(tag, end, wanted, counts);
    case 5:
      return countEightAtATime<5>(tag, end, wanted, counts);
    case 6:
      return countEightAtATime<6>(tag, end, wanted, counts);
    case 7:
      return countEightAtATime<7>(tag, end, wanted, counts);
    case 8:
      return countEightAtATime<8>(tag, end, wanted, counts);
    default:
      return tag;
  }
}
#endif

}  // namespace

ChannelIndex::ChannelIndex(std::span<const channel_t> channels, std::string_view owner)
    : channels_(channels.begin(), channels.end()) {
  const std::string who(owner);
  if (channels_.empty()) throw InvalidArgument(who + ": channels must not be empty");
  if (channels_.size() >= 0xFFFF) {
    throw InvalidArgument(who + ": " + std::to_string(channels_.size()) +
                          " channels is too many (valid: 1..65534)");
  }
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (channels_[i] == CHANNEL_UNUSED) {
      throw InvalidArgument(who + ": channels[" + std::to_string(i) + "] is CHANNEL_UNUSED (" +
                            std::to_string(CHANNEL_UNUSED) + "); list only channels to use");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (channels_[j] == channels_[i]) {
        throw InvalidArgument(who + ": duplicate channel " + std::to_string(channels_[i]) +
                              " (each channel may be listed once)");
      }
    }
  }
  const auto [low, high] = std::minmax_element(channels_.begin(), channels_.end());
  const std::int64_t span = static_cast<std::int64_t>(*high) - *low + 1;
  if (span > kMaxSpan) {
    throw InvalidArgument(who + ": channels " + std::to_string(*low) + " and " +
                          std::to_string(*high) + " are too far apart (valid: within " +
                          std::to_string(kMaxSpan) + " of each other)");
  }
  smallest_ = *low;
  discard_slot_ = static_cast<std::uint32_t>(channels_.size());
  // One entry past the span, the discard slot: Lookup clamps stray offsets onto it.
  table_.assign(static_cast<std::size_t>(span) + 1, static_cast<std::uint16_t>(discard_slot_));
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    table_[static_cast<std::size_t>(channels_[i] - smallest_)] = static_cast<std::uint16_t>(i);
  }
  lanes_.assign(4 * (channels_.size() + 1), 0);
}

std::size_t ChannelIndex::select(std::span<const Tag> tags, SelectedTag* out) const {
  const Lookup slot_of = lookup();
  const auto discard = discard_slot_;
  std::size_t count = 0;
  for (const Tag& tag : tags) {
    prefetchAhead(&tag);
    const std::uint32_t slot = slot_of(tag.channel);
    out[count] = SelectedTag{slot, tag.time};
    count += slot != discard ? 1 : 0;
  }
  return count;
}

void ChannelIndex::countTags(std::span<const Tag> tags, std::uint64_t* counts) const {
  const std::size_t stride = channels_.size() + 1;
  std::uint64_t* const lane0 = lanes_.data();
  std::uint64_t* const lane1 = lane0 + stride;
  std::uint64_t* const lane2 = lane1 + stride;
  std::uint64_t* const lane3 = lane2 + stride;
  const Lookup lookup = this->lookup();
  const Tag* tag = tags.data();
  const Tag* const end = tag + tags.size();
  if (tags.size() < 64) {  // too short to repay merging the lanes
    for (; tag != end; ++tag) ++counts[lookup(tag->channel)];
    return;
  }
#if defined(__AVX2__)
  if (channels_.size() <= kMaxVectorSlots) {
    tag = countVectorised(tag, end, channels_, counts);
    for (; tag != end; ++tag) ++counts[lookup(tag->channel)];
    return;
  }
#endif
  for (; end - tag >= 4; tag += 4) {
    prefetchAhead(tag);
    ++lane0[lookup(tag[0].channel)];
    ++lane1[lookup(tag[1].channel)];
    ++lane2[lookup(tag[2].channel)];
    ++lane3[lookup(tag[3].channel)];
  }
  for (; tag != end; ++tag) ++lane0[lookup(tag->channel)];
  for (std::size_t s = 0; s < stride; ++s) {
    counts[s] += lane0[s] + lane1[s] + lane2[s] + lane3[s];
    lane0[s] = lane1[s] = lane2[s] = lane3[s] = 0;
  }
}

}  // namespace tagflow
