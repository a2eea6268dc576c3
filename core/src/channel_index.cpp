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
  table_.assign(static_cast<std::size_t>(span), static_cast<std::uint16_t>(discard_slot_));
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    table_[static_cast<std::size_t>(channels_[i] - smallest_)] = static_cast<std::uint16_t>(i);
  }
}

}  // namespace tagflow
