// Brute-force references for the virtual channels, written from the contracts in the channel
// headers and timetagger-semantics.md section 4 as plain loops over the whole stream, with no
// library code. Each reference lists the tags a channel owes (time, channel, type) and the
// stream time at which each becomes known; realize() then applies the rules every channel
// shares:
// - a tag owed before the start of the block in which it becomes known is placed at that
//   block's start (blocks cannot reach back);
// - a TimeTag that falls inside an overflow interval becomes MissedEvents with count 1; a
//   generated tag comes after the input tags of its time, so a tag at an OverflowBegin's time
//   is inside the interval and one at an OverflowEnd's time is outside;
// - nothing at or after the end of the stream is ever emitted.
// History (gate state, partial coincidences, open pulses, the last period, the divider count)
// is forgotten at OverflowBegin and at Error; an Error also drops the tags still owed at or
// after its time (delayed copies, pattern tags, predictions).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "support/drain.hpp"
#include "tagflow/channels/coincidences.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow::test {

struct Owed {
  channel_t channel = 0;
  timestamp_t time = 0;
  timestamp_t known_at = 0;  // the stream time of the tag that made it known
  bool cancellable = false;  // still pending: an Error (or a stop, an early input) drops it
  TagType type = TagType::TimeTag;
  std::uint16_t missed = 0;
};

// Drops the cancellable tags owed at or after `from`.
inline void cancelFrom(std::vector<Owed>& owed, timestamp_t from) {
  std::erase_if(owed, [&](const Owed& o) { return o.cancellable && o.time >= from; });
}

inline bool resetsHistory(const Tag& tag) {
  return tag.type == TagType::OverflowBegin || tag.type == TagType::Error;
}

inline std::vector<Tag> realize(const std::vector<Owed>& owed, const std::vector<Tag>& stream,
                                const std::vector<DrainedBlock>& blocks) {
  const timestamp_t end = blocks.back().end;
  std::vector<Tag> overflow_marks;
  for (const Tag& tag : stream) {
    if (tag.type == TagType::OverflowBegin || tag.type == TagType::OverflowEnd) {
      overflow_marks.push_back(tag);
    }
  }
  std::vector<Tag> out;
  for (const Owed& o : owed) {
    timestamp_t time = o.time;
    if (time < o.known_at) {
      for (const DrainedBlock& block : blocks) {
        if (block.begin <= o.known_at && o.known_at < block.end) time = std::max(time, block.begin);
      }
    }
    if (time >= end) continue;
    Tag tag{o.type, 0, o.missed, o.channel, time};
    if (tag.type == TagType::TimeTag) {
      bool inside = false;
      for (const Tag& mark : overflow_marks) {
        if (mark.time > time) break;
        inside = mark.type == TagType::OverflowBegin;
      }
      if (inside) tag = Tag{TagType::MissedEvents, 0, 1, o.channel, time};
    }
    out.push_back(tag);
  }
  return out;
}

// DelayedChannel: each input tag again `delay` later; missed events of the input passed on at
// once with their count.
// The delay of the tag i is delay_of(i).
inline std::vector<Owed> delayedReferenceBy(const std::vector<Tag>& stream, channel_t input,
                                            const std::function<timestamp_t(std::size_t)>& delay_of,
                                            channel_t output) {
  std::vector<Owed> owed;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const Tag& tag = stream[i];
    if (tag.type == TagType::Error) cancelFrom(owed, tag.time);
    if (tag.channel != input) continue;
    if (tag.type == TagType::TimeTag) {
      owed.push_back({output, tag.time + delay_of(i), tag.time, true});
    }
    if (tag.type == TagType::MissedEvents) {
      owed.push_back({output, tag.time, tag.time, false, TagType::MissedEvents, tag.missed_events});
    }
  }
  return owed;
}

inline std::vector<Owed> delayedReference(const std::vector<Tag>& stream, channel_t input,
                                          timestamp_t delay, channel_t output) {
  return delayedReferenceBy(
      stream, input, [delay](std::size_t) { return delay; }, output);
}

// GatedChannel: input tags while the gate is open; a tag is judged before it moves the gate.
inline std::vector<Owed> gatedReference(const std::vector<Tag>& stream, channel_t input,
                                        channel_t gate_start, channel_t gate_stop,
                                        bool initially_open, channel_t output) {
  std::vector<Owed> owed;
  bool open = initially_open;
  for (const Tag& tag : stream) {
    if (resetsHistory(tag)) open = initially_open;
    if (tag.type == TagType::MissedEvents && tag.channel == input && open) {
      owed.push_back({output, tag.time, tag.time, false, TagType::MissedEvents, tag.missed_events});
    }
    if (tag.type != TagType::TimeTag) continue;
    if (tag.channel == input && open) owed.push_back({output, tag.time, tag.time});
    if (tag.channel == gate_start) open = true;
    if (tag.channel == gate_stop) open = false;
  }
  return owed;
}

// Combiner: every tag of a listed channel, missed events with their count.
inline std::vector<Owed> combinerReference(const std::vector<Tag>& stream,
                                           const std::vector<channel_t>& channels,
                                           channel_t output) {
  std::vector<Owed> owed;
  for (const Tag& tag : stream) {
    if (std::find(channels.begin(), channels.end(), tag.channel) == channels.end()) continue;
    if (tag.type == TagType::TimeTag) owed.push_back({output, tag.time, tag.time});
    if (tag.type == TagType::MissedEvents) {
      owed.push_back({output, tag.time, tag.time, false, TagType::MissedEvents, tag.missed_events});
    }
  }
  return owed;
}

// Coincidences: at each time tag of a group channel, the group is complete when every other
// channel of the group has an earlier tag (in stream order, since the last reset) at most
// the window before it, the window in force at the tag i being window_of(i); the group's tags
// are the latest of each channel and the current one.
inline std::vector<Owed> coincidencesReferenceBy(
    const std::vector<Tag>& stream, const std::vector<std::vector<channel_t>>& groups,
    const std::function<timestamp_t(std::size_t)>& window_of, CoincidenceTimestamp timestamp,
    channel_t first_output) {
  std::vector<Owed> owed;
  std::size_t history_begin = 0;  // index of the first tag after the last reset
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const Tag& tag = stream[i];
    if (resetsHistory(tag)) history_begin = i + 1;
    if (tag.type != TagType::TimeTag) continue;
    const timestamp_t window = window_of(i);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& group = groups[g];
      if (std::find(group.begin(), group.end(), tag.channel) == group.end()) continue;
      std::vector<timestamp_t> times;  // of the group's tags, in listed order
      for (channel_t member : group) {
        if (member == tag.channel) {
          times.push_back(tag.time);
          continue;
        }
        std::optional<timestamp_t> latest;
        for (std::size_t j = i; j-- > history_begin && tag.time - stream[j].time <= window;) {
          if (stream[j].type == TagType::TimeTag && stream[j].channel == member) {
            latest = stream[j].time;
            break;
          }
        }
        if (!latest || tag.time - *latest > window) break;
        times.push_back(*latest);
      }
      if (times.size() != group.size()) continue;
      timestamp_t stamp = tag.time;
      if (timestamp == CoincidenceTimestamp::First) {
        stamp = *std::min_element(times.begin(), times.end());
      } else if (timestamp == CoincidenceTimestamp::ListedFirst) {
        stamp = times.front();
      } else if (timestamp == CoincidenceTimestamp::Average) {
        timestamp_t sum = 0;
        for (timestamp_t t : times) sum += t;  // test times are small and positive
        stamp = sum / static_cast<timestamp_t>(times.size());
      }
      owed.push_back({first_output + static_cast<channel_t>(g), stamp, tag.time});
    }
  }
  return owed;
}

inline std::vector<Owed> coincidencesReference(const std::vector<Tag>& stream,
                                               const std::vector<std::vector<channel_t>>& groups,
                                               timestamp_t window, CoincidenceTimestamp timestamp,
                                               channel_t first_output) {
  return coincidencesReferenceBy(
      stream, groups, [window](std::size_t) { return window; }, timestamp, first_output);
}

// ConstantFractionDiscriminator: a rising edge on c and the next falling edge on -c, at most
// `search_window` apart, give their mean time (rounded down); a second rising edge replaces
// an open one.
inline std::vector<Owed> cfdReference(const std::vector<Tag>& stream,
                                      const std::vector<channel_t>& channels,
                                      timestamp_t search_window, channel_t first_output) {
  std::vector<Owed> owed;
  std::vector<std::optional<timestamp_t>> rising(channels.size());
  for (const Tag& tag : stream) {
    if (resetsHistory(tag)) std::fill(rising.begin(), rising.end(), std::nullopt);
    if (tag.type != TagType::TimeTag) continue;
    for (std::size_t c = 0; c < channels.size(); ++c) {
      if (tag.channel == channels[c]) rising[c] = tag.time;
      if (tag.channel == -channels[c] && rising[c]) {
        if (tag.time - *rising[c] <= search_window) {
          owed.push_back({first_output + static_cast<channel_t>(c),
                          *rising[c] + (tag.time - *rising[c]) / 2, tag.time});
        }
        rising[c].reset();
      }
    }
  }
  return owed;
}

// FrequencyMultiplier: every input tag, then multiplier - 1 tags at t + floor(k * P / m), P the
// time since the previous input (none after a reset); a prediction at or after the next input
// is dropped.
inline std::vector<Owed> frequencyMultiplierReference(const std::vector<Tag>& stream,
                                                      channel_t input, std::int64_t multiplier,
                                                      channel_t output) {
  std::vector<Owed> owed;
  std::optional<timestamp_t> previous;
  for (const Tag& tag : stream) {
    if (tag.type == TagType::Error) cancelFrom(owed, tag.time);
    if (resetsHistory(tag)) previous.reset();
    if (tag.type != TagType::TimeTag || tag.channel != input) continue;
    cancelFrom(owed, tag.time);
    owed.push_back({output, tag.time, tag.time});
    if (previous) {
      const timestamp_t period = tag.time - *previous;
      for (std::int64_t k = 1; k < multiplier; ++k) {
        owed.push_back({output, tag.time + k * period / multiplier, tag.time, true});
      }
    }
    previous = tag.time;
  }
  return owed;
}

// EventGenerator: after the triggers whose count since the last reset is `offset` modulo
// `divider`, the pattern at the trigger time plus each offset; a stop tag drops the pattern
// tags owed after its time (the stop is handled before the trigger when they are one channel).
inline std::vector<Owed> eventGeneratorReference(const std::vector<Tag>& stream, channel_t trigger,
                                                 const std::vector<timestamp_t>& pattern,
                                                 std::int64_t divider, std::int64_t offset,
                                                 channel_t stop, channel_t output) {
  std::vector<Owed> owed;
  std::int64_t count = 0;
  for (const Tag& tag : stream) {
    if (tag.type == TagType::Error) cancelFrom(owed, tag.time);
    if (resetsHistory(tag)) count = 0;
    if (tag.type != TagType::TimeTag) continue;
    if (tag.channel == stop) cancelFrom(owed, tag.time + 1);
    if (tag.channel == trigger) {
      if (count % divider == offset) {
        for (timestamp_t delta : pattern)
          owed.push_back({output, tag.time + delta, tag.time, true});
      }
      ++count;
    }
  }
  return owed;
}

}  // namespace tagflow::test
