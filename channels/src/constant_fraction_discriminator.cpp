#include "tagflow/channels/constant_fraction_discriminator.hpp"

#include <algorithm>
#include <set>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

std::vector<channel_t> bothEdges(const std::vector<channel_t>& channels) {
  std::vector<channel_t> edges;
  for (channel_t channel : channels) {
    edges.push_back(channel);
    edges.push_back(-channel);
  }
  return edges;
}

std::vector<channel_t> checkedChannels(std::vector<channel_t> channels, const std::string& label) {
  if (channels.empty()) throw InvalidArgument(label + ": channels is empty (valid: one or more)");
  for (channel_t channel : channels) {
    if (channel <= 0) {
      throw InvalidArgument(label + ": channel " + std::to_string(channel) +
                            " is invalid (valid: rising-edge channels > 0; the falling edge "
                            "-channel is paired with it)");
    }
  }
  std::set<channel_t> seen;
  for (channel_t channel : channels) {
    if (!seen.insert(channel).second) {
      throw InvalidArgument(label + ": channel " + std::to_string(channel) +
                            " is listed twice (valid: distinct channels)");
    }
  }
  return channels;
}

}  // namespace

ConstantFractionDiscriminator::ConstantFractionDiscriminator(std::string name,
                                                             std::vector<channel_t> channels,
                                                             timestamp_t search_window)
    : VirtualChannel(
          "ConstantFractionDiscriminator", std::move(name),
          Parameters{{"channels", std::vector<std::int64_t>(channels.begin(), channels.end())},
                     {"search_window", search_window}},
          channels.size()),
      channels_(checkedChannels(std::move(channels),
                                "ConstantFractionDiscriminator '" + this->name() + "'")),
      search_window_(search_window),
      edges_(bothEdges(channels_), "ConstantFractionDiscriminator '" + this->name() + "'"),
      rising_(channels_.size()) {
  const std::string label = "ConstantFractionDiscriminator '" + this->name() + "'";
  if (search_window <= 0) {
    throw InvalidArgument(label + ": search_window " + std::to_string(search_window) +
                          " ps is invalid (valid: > 0)");
  }
}

std::vector<channel_t> ConstantFractionDiscriminator::inputChannels() const {
  return edges_.channels();
}

void ConstantFractionDiscriminator::consume(std::span<const Tag> time_tags,
                                            std::vector<Tag>& emitted) {
  if (selected_.size() < time_tags.size()) selected_.resize(time_tags.size());
  const std::size_t count = edges_.select(time_tags, selected_.data());
  for (std::size_t k = 0; k < count; ++k) {
    const auto [slot, time] = selected_[k];
    const std::size_t i = slot / 2;
    if (slot % 2 == 0) {
      rising_[i] = time;
    } else if (rising_[i]) {
      const timestamp_t width = time - *rising_[i];
      if (width <= search_window_) {
        emitted.push_back(Tag{TagType::TimeTag, 0, 0, outputChannel(i), *rising_[i] + width / 2});
      }
      rising_[i].reset();
    }
  }
}

void ConstantFractionDiscriminator::forgetHistory() {
  std::fill(rising_.begin(), rising_.end(), std::nullopt);
}

}  // namespace tagflow
