#include "tagflow/channels/frequency_multiplier.hpp"

#include <algorithm>

#include "tagflow/core/error.hpp"

namespace tagflow {

FrequencyMultiplier::FrequencyMultiplier(std::string name, channel_t input, std::int64_t multiplier)
    : VirtualChannel(
          "FrequencyMultiplier", std::move(name),
          Parameters{{"input_channel", std::int64_t{input}}, {"multiplier", multiplier}}),
      input_(input),
      multiplier_(multiplier) {
  if (input == CHANNEL_UNUSED) {
    throw InvalidArgument("FrequencyMultiplier '" + this->name() + "': input_channel is unused");
  }
  if (multiplier < 1 || multiplier > 1'000'000) {
    throw InvalidArgument("FrequencyMultiplier '" + this->name() + "': multiplier " +
                          std::to_string(multiplier) + " is invalid (valid: 1..1000000)");
  }
}

void FrequencyMultiplier::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  // The input's times first, branch-free; the loop below then only sees input tags.
  if (inputs_.size() < time_tags.size()) inputs_.resize(time_tags.size());
  std::size_t count = 0;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    inputs_[count] = tag.time;
    count += tag.channel == input_ ? 1 : 0;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const Tag tag{TagType::TimeTag, 0, 0, input_, inputs_[i]};
    emitOwed(tag.time, emitted);
    owed_.clear();  // predictions at or after this input are superseded
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, tag.time});
    if (last_input_ && multiplier_ > 1) {
      // k * period / m without overflowing k * period.
      const timestamp_t period = tag.time - *last_input_;
      const timestamp_t whole = period / multiplier_;
      const timestamp_t rest = period % multiplier_;
      for (std::int64_t k = 1; k < multiplier_; ++k) {
        owed_.push_back(tag.time + whole * k + rest * k / multiplier_);
      }
    }
    last_input_ = tag.time;
  }
}

void FrequencyMultiplier::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  const auto due = std::lower_bound(owed_.begin(), owed_.end(), until);
  for (auto it = owed_.begin(); it != due; ++it) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, *it});
  }
  owed_.erase(owed_.begin(), due);
}

}  // namespace tagflow
