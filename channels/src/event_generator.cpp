#include "tagflow/channels/event_generator.hpp"

#include <algorithm>

#include "tagflow/core/error.hpp"

namespace tagflow {

EventGenerator::EventGenerator(std::string name, channel_t trigger,
                               std::vector<timestamp_t> pattern, std::int64_t trigger_divider,
                               std::int64_t divider_offset, channel_t stop_channel)
    : VirtualChannel(
          "EventGenerator", std::move(name),
          Parameters{{"trigger_channel", std::int64_t{trigger}},
                     {"pattern", std::vector<std::int64_t>(pattern.begin(), pattern.end())},
                     {"trigger_divider", trigger_divider},
                     {"divider_offset", divider_offset},
                     {"stop_channel", std::int64_t{stop_channel}}}),
      trigger_(trigger),
      pattern_(std::move(pattern)),
      divider_(trigger_divider),
      offset_(divider_offset),
      stop_(stop_channel) {
  const std::string label = "EventGenerator '" + this->name() + "'";
  if (trigger == CHANNEL_UNUSED) throw InvalidArgument(label + ": trigger_channel is unused");
  if (pattern_.empty()) throw InvalidArgument(label + ": pattern is empty (valid: one or more)");
  for (timestamp_t offset : pattern_) {
    if (offset < 0) {
      throw InvalidArgument(label + ": pattern offset " + std::to_string(offset) +
                            " ps is invalid (valid: >= 0)");
    }
  }
  if (trigger_divider < 1) {
    throw InvalidArgument(label + ": trigger_divider " + std::to_string(trigger_divider) +
                          " is invalid (valid: >= 1)");
  }
  if (divider_offset < 0 || divider_offset >= trigger_divider) {
    throw InvalidArgument(label + ": divider_offset " + std::to_string(divider_offset) +
                          " is invalid (valid: 0.." + std::to_string(trigger_divider - 1) + ")");
  }
  std::sort(pattern_.begin(), pattern_.end());
}

std::vector<channel_t> EventGenerator::inputChannels() const {
  if (stop_ == CHANNEL_UNUSED) return {trigger_};
  return {trigger_, stop_};
}

void EventGenerator::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    if (tag.channel == stop_) {
      emitOwed(tag.time + 1, emitted);  // pattern tags at the stop's time still count
      owed_ = {};
    }
    if (tag.channel == trigger_) {
      if (trigger_count_ % divider_ == offset_) {
        emitOwed(tag.time, emitted);
        for (timestamp_t offset : pattern_) owed_.push(tag.time + offset);
      }
      ++trigger_count_;
    }
  }
}

void EventGenerator::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  while (!owed_.empty() && owed_.top() < until) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, owed_.top()});
    owed_.pop();
  }
}

}  // namespace tagflow
