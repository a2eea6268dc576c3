#include "tagflow/channels/delayed_channel.hpp"

#include <algorithm>

#include "tagflow/core/error.hpp"

namespace tagflow {

DelayedChannel::DelayedChannel(std::string name, channel_t input, timestamp_t delay)
    : VirtualChannel("DelayedChannel", std::move(name),
                     Parameters{{"input_channel", std::int64_t{input}}, {"delay", delay}}),
      input_(input),
      delay_(delay) {
  if (input == CHANNEL_UNUSED) {
    throw InvalidArgument("DelayedChannel '" + this->name() + "': input_channel is unused");
  }
  if (delay < 0) {
    throw InvalidArgument("DelayedChannel '" + this->name() + "': delay " + std::to_string(delay) +
                          " ps is invalid (valid: >= 0; to move a channel earlier, delay the "
                          "other channels instead)");
  }
}

// Branch-free compaction: every tag is written, only matches advance the end. The storage
// only grows (owed_end_ marks the end), so no block pays for initialising it.
void DelayedChannel::consume(std::span<const Tag> time_tags, std::vector<Tag>& /*emitted*/) {
  std::size_t end = owed_end_;
  if (owed_.size() < end + time_tags.size()) owed_.resize(end + time_tags.size());
  timestamp_t* out = owed_.data();
  const timestamp_t delay = delay_;  // locals: the stores below could alias the members
  const channel_t input = input_;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    out[end] = tag.time + delay;
    end += tag.channel == input ? 1 : 0;
  }
  owed_end_ = end;
}

// One pass: owed copies go out before the first input tag later than them, this block's
// matches join the owed queue. Taken while the copies still owed fit the output's room.
Tag* DelayedChannel::transcribe(const TagBlock& block, Tag* out) {
  const std::size_t n = block.tags.size();
  if (owed_end_ - owed_head_ > n) return nullptr;
  if (owed_.size() < owed_end_ + n) owed_.resize(owed_end_ + n);
  const channel_t output = outputChannel();
  const channel_t input = input_;
  const timestamp_t delay = delay_;
  timestamp_t* const owed = owed_.data();
  std::size_t head = owed_head_;
  std::size_t end = owed_end_;
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    while (head != end && owed[head] < tag.time) {
      *out++ = Tag{TagType::TimeTag, 0, 0, output, owed[head++]};
    }
    *out++ = tag;
    owed[end] = tag.time + delay;
    end += tag.channel == input ? 1 : 0;
  }
  for (; head != end && owed[head] < block.end_time; ++head) {
    *out++ = Tag{TagType::TimeTag, 0, 0, output, owed[head]};
  }
  owed_head_ = head;
  owed_end_ = end;
  compactOwed();
  return out;
}

void DelayedChannel::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  for (; owed_head_ < owed_end_ && owed_[owed_head_] < until; ++owed_head_) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, owed_[owed_head_]});
  }
  compactOwed();
}

void DelayedChannel::compactOwed() {
  if (owed_head_ == owed_end_) {
    owed_end_ = 0;
    owed_head_ = 0;
  } else if (owed_head_ > owed_end_ / 2) {
    std::copy(owed_.begin() + static_cast<std::ptrdiff_t>(owed_head_),
              owed_.begin() + static_cast<std::ptrdiff_t>(owed_end_), owed_.begin());
    owed_end_ -= owed_head_;
    owed_head_ = 0;
  }
}

void DelayedChannel::onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) {
  if (tag.channel != input_) return;
  emitted.push_back(Tag{TagType::MissedEvents, 0, tag.missed_events, outputChannel(), tag.time});
}

void DelayedChannel::dropOwed() {
  owed_end_ = 0;
  owed_head_ = 0;
}

}  // namespace tagflow
