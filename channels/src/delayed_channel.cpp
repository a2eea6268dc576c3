#include "tagflow/channels/delayed_channel.hpp"

#include <algorithm>
#include <string>

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

namespace {

// Longest delay, 2^62 ps (about 53 days): a delayed time stays within timestamp_t.
constexpr timestamp_t kMaxDelay = timestamp_t{1} << 62;

}  // namespace

const ParameterSchema& DelayedChannel::schema() {
  static const ParameterSchema schema(
      "DelayedChannel", "a copy of a channel shifted later in time",
      {ParameterSpec::channel("input_channel").help("channel to copy"),
       ParameterSpec::integer("delay")
           .unit("ps")
           .atLeast(0)
           .atMost(static_cast<double>(kMaxDelay))
           .help("delay; to move a channel earlier, delay the other channels instead")});
  return schema;
}

DelayedChannel::DelayedChannel(std::string name, channel_t input, timestamp_t delay)
    : VirtualChannel(schema(), std::move(name),
                     Parameters{{"input_channel", std::int64_t{input}}, {"delay", delay}}),
      input_(input),
      requested_delay_(delay),
      delay_(delay) {
  if (input == CHANNEL_UNUSED) {
    throw InvalidArgument("DelayedChannel '" + this->name() + "': input_channel is unused");
  }
}

void DelayedChannel::setDelay(timestamp_t delay) {
  schema().find("delay")->check(ParameterValue{delay}, "DelayedChannel '" + name() + "'", "delay");
  requested_delay_.store(delay, std::memory_order_release);
}

void DelayedChannel::setLiveSetting(const std::string& key, std::int64_t value) {
  if (key != "delay") return VirtualChannel::setLiveSetting(key, value);
  setDelay(value);
}

void DelayedChannel::applySettings() {
  const timestamp_t requested = requested_delay_.load(std::memory_order_acquire);
  if (requested == delay_) return;
  if (requested < delay_ && !owed_.empty()) earlier_.absorb(owed_);
  delay_ = requested;
  settingApplied("delay", requested);
}

// Branch-free compaction: every tag is written, only matches advance the end. The storage
// only grows, so no block pays for initialising it.
void DelayedChannel::consume(std::span<const Tag> time_tags, std::vector<Tag>& /*emitted*/) {
  std::size_t end = owed_.end;
  timestamp_t* out = owed_.reserve(time_tags.size());
  const timestamp_t delay = delay_;  // locals: the stores below could alias the members
  const channel_t input = input_;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    out[end] = tag.time + delay;
    end += tag.channel == input ? 1 : 0;
  }
  owed_.end = end;
}

// One pass: owed copies go out before the first input tag later than them, this block's
// matches join the owed queue.
Tag* DelayedChannel::transcribe(const TagBlock& block, Tag* out) {
  const std::size_t n = block.tags.size();
  timestamp_t* const owed = owed_.reserve(n);
  const channel_t output = outputChannel();
  const channel_t input = input_;
  const timestamp_t delay = delay_;
  std::size_t head = owed_.head;
  std::size_t end = owed_.end;
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    // Read before anything is stored (see InlineWriter).
    const timestamp_t time = tag.time;
    const channel_t channel = tag.channel;
    const TagRegister copied = TagRegister::load(&tag);
    while (head != end && owed[head] < time) {
      *out++ = Tag{TagType::TimeTag, 0, 0, output, owed[head++]};
    }
    copied.store(out++);
    owed[end] = time + delay;
    end += channel == input ? 1 : 0;
  }
  for (; head != end && owed[head] < block.end_time; ++head) {
    *out++ = Tag{TagType::TimeTag, 0, 0, output, owed[head]};
  }
  owed_.head = head;
  owed_.end = end;
  owed_.compact();
  return out;
}

void DelayedChannel::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  const auto take = [&](timestamp_t time) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, time});
  };
  owed_.takeBefore(until, take);
  earlier_.takeBefore(until, take);
  owed_.compact();
  earlier_.compact();
}

void DelayedChannel::onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) {
  if (tag.channel != input_) return;
  emitted.push_back(Tag{TagType::MissedEvents, 0, tag.missed_events, outputChannel(), tag.time});
}

void DelayedChannel::dropOwed() {
  owed_.clear();
  earlier_.clear();
}

}  // namespace tagflow
