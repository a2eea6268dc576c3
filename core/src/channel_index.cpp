#include "tagflow/core/channel_index.hpp"

#include <algorithm>
#include <string>

#include "tagflow/core/error.hpp"

namespace tagflow {

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
      throw InvalidArgument(who + ": channel " + std::to_string(i) +
                            " is CHANNEL_UNUSED; list only channels to use");
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
