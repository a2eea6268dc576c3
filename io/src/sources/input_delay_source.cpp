#include "tagflow/io/sources/input_delay_source.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr channel_t kChannelLimit = channel_t{1} << 27;
constexpr std::size_t kBlockTagsWithoutBound = 32768;

}  // namespace

InputDelaySource::InputDelaySource(std::unique_ptr<Source> inner, std::vector<InputDelay> delays)
    : inner_(std::move(inner)), delays_(std::move(delays)) {
  if (!inner_) throw InvalidArgument("input delays: the source is null");
  // As large as the inner source's blocks; one that hands out views of its own memory names
  // no size.
  block_size_ = inner_->maxBlockTags() > 0 ? inner_->maxBlockTags() : kBlockTagsWithoutBound;
  const std::vector<channel_t> known = inner_->channels();
  lanes_.push_back(Lane{});
  near_lanes_.assign(2 * kDirectChannels + 1, 0);
  std::vector<channel_t> seen;
  for (const InputDelay& entry : delays_) {
    const channel_t channel = entry.channel;
    if (channel == 0 || channel <= -kChannelLimit || channel >= kChannelLimit) {
      throw InvalidArgument(fmt::format(
          "input delay of channel {} is invalid (valid channels: 1..{} and their falling edges)",
          channel, kChannelLimit - 1));
    }
    if (std::find(seen.begin(), seen.end(), channel) != seen.end()) {
      throw InvalidArgument(fmt::format("input delay of channel {} is given twice", channel));
    }
    seen.push_back(channel);
    if (!known.empty() && std::find(known.begin(), known.end(), channel) == known.end()) {
      throw InvalidArgument(
          fmt::format("input delay of channel {} is invalid: the source has no such channel "
                      "(valid: {})",
                      channel, fmt::join(known, ", ")));
    }
    // Strictly inside: a time and a delay that wrap their sum then always leave the range.
    if (entry.delay_ps <= -kStreamTimeLimit || entry.delay_ps >= kStreamTimeLimit) {
      throw InvalidArgument(
          fmt::format("input delay {} ps of channel {} is invalid (valid: -2^62 < delay < 2^62 ps)",
                      entry.delay_ps, channel));
    }
    if (entry.delay_ps == 0) continue;
    auto lane = std::find_if(lanes_.begin(), lanes_.end(),
                             [&](const Lane& l) { return l.delay == entry.delay_ps; });
    if (lane == lanes_.end()) lane = lanes_.insert(lanes_.end(), Lane{entry.delay_ps, {}, 0});
    const auto index = static_cast<std::uint16_t>(lane - lanes_.begin());
    if (channel > -kDirectChannels && channel < kDirectChannels) {
      near_lanes_[static_cast<std::size_t>(channel + kDirectChannels)] = index;
    } else {
      far_lanes_[channel] = index;
    }
    smallest_delay_ = std::min(smallest_delay_, entry.delay_ps);
    largest_delay_ = std::max(largest_delay_, entry.delay_ps);
  }
  staged_.reserve(block_size_);
}

std::string InputDelaySource::describe() const {
  std::string text = inner_->describe() + " with input delays";
  for (const InputDelay& entry : delays_) {
    text += fmt::format(" {}: {} ps", entry.channel, entry.delay_ps);
    if (&entry != &delays_.back()) text += ",";
  }
  return text;
}

std::uint16_t InputDelaySource::farLaneOf(channel_t channel) const {
  const auto found = far_lanes_.find(channel);
  return found == far_lanes_.end() ? 0 : found->second;
}

bool InputDelaySource::readInner() {
  if (!inner_->next(inner_block_)) return false;
  const std::span<const Tag> tags = inner_block_.tags;
  std::vector<Tag*>& ends = lane_ends_;
  ends.clear();
  for (Lane& lane : lanes_) {
    // The merged tags go; room for the whole block, and the one write past the lane's last
    // tag, follows the others.
    std::copy(lane.tags.begin() + static_cast<std::ptrdiff_t>(lane.head),
              lane.tags.begin() + static_cast<std::ptrdiff_t>(lane.size), lane.tags.begin());
    lane.size -= lane.head;
    lane.head = 0;
    if (lane.tags.size() < lane.size + tags.size() + 1) {
      lane.tags.resize(lane.size + tags.size() + 1);
    }
    ends.push_back(lane.tags.data() + lane.size);
  }
  // Every pass writes each tag and keeps those of its lane: no pass waits on a store of the
  // one before, as a write to the tag's own lane would. Delays are added as unsigned numbers,
  // which wrap; the range is checked after the pass.
  const auto delayed = [](const Tag& tag, std::uint64_t delay) {
    Tag out = tag;
    out.time = static_cast<timestamp_t>(static_cast<std::uint64_t>(tag.time) + delay);
    return out;
  };
  if (lanes_.size() == 2) {
    // One delay, the usual case: both lanes in one pass.
    Tag* undelayed = ends[0];
    Tag* moved = ends[1];
    const auto delay = static_cast<std::uint64_t>(lanes_[1].delay);
    for (const Tag& tag : tags) {
      const bool in_delayed = laneOf(tag) == 1;
      *undelayed = tag;
      *moved = delayed(tag, delay);
      undelayed += !in_delayed;
      moved += in_delayed;
    }
    ends[0] = undelayed;
    ends[1] = moved;
  } else {
    lane_of_.resize(tags.size());
    for (std::size_t i = 0; i < tags.size(); ++i) lane_of_[i] = laneOf(tags[i]);
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      Tag* out = ends[l];
      const auto delay = static_cast<std::uint64_t>(lanes_[l].delay);
      for (std::size_t i = 0; i < tags.size(); ++i) {
        *out = delayed(tags[i], delay);
        out += lane_of_[i] == l;
      }
      ends[l] = out;
    }
  }
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    Tag* const first = lane.tags.data() + lane.size;
    lane.size += static_cast<std::size_t>(ends[l] - first);
    if (lane.delay != 0) checkDelayedRange(std::span<const Tag>(first, ends[l]), lane.delay);
  }
  return true;
}

void InputDelaySource::checkDelayedRange(std::span<const Tag> delayed, timestamp_t delay) const {
  bool out_of_range = false;
  for (const Tag& tag : delayed) {
    out_of_range |= tag.time < -kStreamTimeLimit || tag.time > kStreamTimeLimit;
  }
  // A sum that wrapped lies outside too (the delay is below 2^62 in magnitude).
  if (!out_of_range) return;
  for (const Tag& tag : delayed) {
    const auto time = static_cast<timestamp_t>(static_cast<std::uint64_t>(tag.time) -
                                               static_cast<std::uint64_t>(delay));
    timestamp_t sum = 0;
    if (__builtin_add_overflow(time, delay, &sum) || sum < -kStreamTimeLimit ||
        sum > kStreamTimeLimit) {
      throw DataError(fmt::format(
          "input delays: the tag of channel {} at {} ps of {} leaves -2^62..2^62 ps when "
          "delayed by {} ps",
          tag.channel, time, inner_->describe(), delay));
    }
  }
}

namespace {

// Merges two time-ordered runs into `out` in the canonical order, without a branch on which
// comes next; returns the end of what it wrote.
Tag* mergeTwo(const Tag* a, const Tag* a_end, const Tag* b, const Tag* b_end, Tag* out) {
  while (a != a_end && b != b_end) {
    const bool take_b = b->time < a->time || (b->time == a->time && canonicalTagOrder(*b, *a));
    *out++ = *(take_b ? b : a);
    b += take_b;
    a += !take_b;
  }
  out = std::copy(a, a_end, out);
  return std::copy(b, b_end, out);
}

}  // namespace

void InputDelaySource::mergeUntil(timestamp_t until) {
  staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(staged_head_));
  staged_head_ = 0;
  // Each lane's tags before `until`; the delayed lanes merged one after another into
  // `delayed_`, which then merges with the undelayed lane into the staged tags.
  const auto cut = [until](Lane& lane) {
    const auto begin = lane.tags.begin() + static_cast<std::ptrdiff_t>(lane.head);
    const auto end = lane.tags.begin() + static_cast<std::ptrdiff_t>(lane.size);
    const auto stop =
        std::lower_bound(begin, end, until, [](const Tag& t, timestamp_t u) { return t.time < u; });
    const std::span<const Tag> ready(&*begin, static_cast<std::size_t>(stop - begin));
    lane.head += ready.size();
    return ready;
  };
  delayed_.clear();
  for (std::size_t l = 1; l < lanes_.size(); ++l) {
    const std::span<const Tag> ready = cut(lanes_[l]);
    merged_.resize(delayed_.size() + ready.size());
    mergeTwo(delayed_.data(), delayed_.data() + delayed_.size(), ready.data(),
             ready.data() + ready.size(), merged_.data());
    std::swap(delayed_, merged_);
  }
  const std::span<const Tag> undelayed = cut(lanes_[0]);
  const std::size_t had = staged_.size();
  staged_.resize(had + undelayed.size() + delayed_.size());
  mergeTwo(undelayed.data(), undelayed.data() + undelayed.size(), delayed_.data(),
           delayed_.data() + delayed_.size(), staged_.data() + had);
  staged_until_ = until;
}

bool InputDelaySource::next(BlockBuffer& out) {
  if (!started_) {
    started_ = true;
    if (!readInner()) return false;
    position_ = inner_block_.begin_time + smallest_delay_;
    staged_until_ = position_;
    mergeUntil(inner_block_.end_time + smallest_delay_);
  }
  // A later inner tag comes no earlier than the inner block's end plus the smallest delay.
  while (staged_head_ == staged_.size() && position_ >= staged_until_ && !inner_ended_) {
    if (readInner()) {
      mergeUntil(inner_block_.end_time + smallest_delay_);
    } else {
      inner_ended_ = true;
      mergeUntil(inner_block_.end_time + largest_delay_);
    }
  }
  if (staged_head_ == staged_.size() && position_ >= staged_until_) return false;
  const std::span<const Tag> ready(staged_.data() + staged_head_, staged_.size() - staged_head_);
  const std::size_t count = blockSplitPoint(ready, block_size_);
  out.begin_time = position_;
  out.end_time = count < ready.size() ? ready[count].time : staged_until_;
  position_ = out.end_time;
  if (staged_head_ == 0 && count == ready.size()) {
    // The whole staging is the block: the buffers trade places instead of copying.
    std::swap(out.storage, staged_);
    staged_.clear();
  } else {
    out.storage.assign(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(count));
    staged_head_ += count;
  }
  out.publishStorage();
  return true;
}

std::unique_ptr<Source> withInputDelays(std::unique_ptr<Source> source,
                                        std::vector<InputDelay> delays) {
  if (delays.empty()) return source;
  return std::make_unique<InputDelaySource>(std::move(source), std::move(delays));
}

}  // namespace tagflow
