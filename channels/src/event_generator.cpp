#include "tagflow/channels/event_generator.hpp"

#include <algorithm>
#include <string>

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

namespace {

// Longest pattern offset, 2^62 ps (about 53 days): a pattern time stays within timestamp_t.
constexpr timestamp_t kMaxOffset = timestamp_t{1} << 62;
// Most pattern tags the general path may hold for one block, owed and emitted (256 MiB): a
// long pattern times many triggers is refused instead of exhausting memory.
constexpr std::size_t kMaxPendingTags = std::size_t{1} << 24;

}  // namespace

const ParameterSchema& EventGenerator::schema() {
  static const ParameterSchema schema(
      "EventGenerator", "a pattern of tags after every n-th trigger",
      {ParameterSpec::channel("trigger_channel").help("channel that triggers the pattern"),
       ParameterSpec::integers("pattern")
           .unit("ps")
           .atLeast(0)
           .sizeBetween(1, SIZE_MAX)
           .help("offsets of the tags after a trigger"),
       ParameterSpec::integer("trigger_divider")
           .atLeast(1)
           .byDefault(std::int64_t{1})
           .help("use every n-th trigger"),
       ParameterSpec::integer("divider_offset")
           .byDefault(std::int64_t{0})
           .help("which of the n triggers, 0..trigger_divider - 1"),
       ParameterSpec::channel("stop_channel")
           .optional()
           .help("channel that aborts pending patterns")});
  return schema;
}

EventGenerator::EventGenerator(std::string name, channel_t trigger,
                               std::vector<timestamp_t> pattern, std::int64_t trigger_divider,
                               std::int64_t divider_offset, channel_t stop_channel)
    : VirtualChannel(
          schema(), std::move(name),
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
  if (divider_offset < 0 || divider_offset >= trigger_divider) {
    throw InvalidArgument(label + ": divider_offset " + std::to_string(divider_offset) +
                          " is invalid (valid: 0.." + std::to_string(trigger_divider - 1) + ")");
  }
  std::sort(pattern_.begin(), pattern_.end());
  if (pattern_.back() > kMaxOffset) {
    throw InvalidArgument(label + ": pattern offset " + std::to_string(pattern_.back()) +
                          " ps is too long (valid: 0.." + std::to_string(kMaxOffset) +
                          ", about 53 days)");
  }
}

std::optional<timestamp_t> EventGenerator::lookBack() const {
  if (divider_ > 1) return std::nullopt;
  return pattern_.back();
}

std::vector<channel_t> EventGenerator::inputChannels() const {
  if (stop_ == CHANNEL_UNUSED) return {trigger_};
  return {trigger_, stop_};
}

void EventGenerator::startPattern(timestamp_t trigger_time) {
  for (timestamp_t offset : pattern_) owed_.insert(trigger_time + offset);
}

void EventGenerator::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const auto divider = static_cast<std::uint64_t>(divider_);
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    if (tag.channel == stop_) {
      emitOwed(tag.time + 1, emitted);  // pattern tags at the stop's time still count
      owed_.clear();
    }
    if (tag.channel == trigger_) {
      if (phase_ == static_cast<std::uint64_t>(offset_)) {
        emitOwed(tag.time, emitted);
        const std::size_t pending = emitted.size() + owed_.size() + pattern_.size();
        if (pending > kMaxPendingTags) {
          throw DataError("EventGenerator '" + name() + "': a pattern of " +
                          std::to_string(pattern_.size()) + " tags at the trigger at " +
                          std::to_string(tag.time) + " ps makes " + std::to_string(pending) +
                          " pending in one block (valid: at most " +
                          std::to_string(kMaxPendingTags) +
                          "; give the source a smaller block_size, or use a shorter pattern)");
        }
        startPattern(tag.time);
      }
      phase_ = phase_ + 1 == divider ? 0 : phase_ + 1;
    }
  }
}

std::size_t EventGenerator::transcribeRoom(const TagBlock& block) const {
  const std::size_t n = block.tags.size();
  const auto divider = static_cast<std::size_t>(divider_);
  return n + owed_.size() + (n + divider - 1) / divider * pattern_.size();
}

// One pass: owed pattern tags go out before the first input tag later than them. The trigger
// count advances without a branch; only a firing trigger (one in `trigger_divider`) and a stop
// take one.
Tag* EventGenerator::transcribe(const TagBlock& block, Tag* out) {
  const channel_t output = outputChannel();
  InlineWriter writer(out, output);
  const auto trigger = static_cast<std::uint32_t>(trigger_);
  const auto stop = static_cast<std::uint32_t>(stop_);
  const auto fire_phase = static_cast<std::uint64_t>(offset_);
  const auto last_phase = static_cast<std::uint64_t>(divider_ - 1);
  std::uint64_t phase = phase_;
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    owed_.takeBefore(tag.time, [&](timestamp_t time) { writer.emit(time, output); });
    writer.copyAfterOwed(tag);
    const auto channel = static_cast<std::uint32_t>(tag.channel);
    if (flagIfEqual(channel, stop) != 0) [[unlikely]] {
      owed_.dropAfter(tag.time);  // those at the stop's time still count
    }
    const std::uint64_t is_trigger = flagIfEqual(channel, trigger);
    if ((is_trigger & (phase == fire_phase ? 1 : 0)) != 0) [[unlikely]] {
      startPattern(tag.time);
    }
    phase = selectByFlag(is_trigger & (phase == last_phase ? 1 : 0), std::uint64_t{0},
                         phase + is_trigger);
  }
  phase_ = phase;
  owed_.takeBefore(block.end_time, [&](timestamp_t time) { writer.emit(time, output); });
  owed_.compact();
  return writer.finish();
}

void EventGenerator::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  owed_.takeBefore(until, [&](timestamp_t time) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, time});
  });
  owed_.compact();
}

}  // namespace tagflow
