#include "tagflow/io/sources/merged_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/format.hpp"

namespace tagflow {

namespace {

constexpr channel_t kChannelLimit = channel_t{1} << 27;

// c + offset for a rising edge, -(|c| + offset) for a falling one; false when the result
// leaves 1..2^27-1 in magnitude (or crosses zero).
bool shiftChannel(channel_t channel, channel_t offset, channel_t& out) {
  const std::int64_t magnitude = std::int64_t{channel < 0 ? -std::int64_t{channel} : channel};
  const std::int64_t moved = magnitude + offset;
  if (channel == 0 || moved < 1 || moved >= kChannelLimit) return false;
  out = static_cast<channel_t>(channel < 0 ? -moved : moved);
  return true;
}

bool shiftTime(timestamp_t time, timestamp_t offset, timestamp_t& out) {
  return !__builtin_add_overflow(time, offset, &out) && out >= -kStreamTimeLimit &&
         out <= kStreamTimeLimit;
}

bool carriesChannel(TagType type) {
  return type == TagType::TimeTag || type == TagType::MissedEvents;
}

}  // namespace

MergedSource::MergedSource(std::vector<MergedInput> inputs, bool overlap_only,
                           std::size_t block_size)
    : overlap_only_(overlap_only), block_size_(block_size) {
  if (inputs.empty()) throw InvalidArgument("merged source: no inputs (valid: one or more)");
  if (block_size_ < 1 || block_size_ > tagfile::kMaxBlockTags) {
    throw InvalidArgument(fmt::format("merged source: block_size {} is invalid (valid: 1..{})",
                                      block_size_, tagfile::kMaxBlockTags));
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    MergedInput& input = inputs[k];
    if (!input.source) throw InvalidArgument(fmt::format("merged source: input {} is null", k));
    if (input.time_offset < -kStreamTimeLimit || input.time_offset > kStreamTimeLimit) {
      throw InvalidArgument(fmt::format(
          "merged source: time offset {} ps of input {} is invalid (valid: -2^62..2^62 ps)",
          input.time_offset, k));
    }
    if (input.channel_offset <= -kChannelLimit || input.channel_offset >= kChannelLimit) {
      throw InvalidArgument(
          fmt::format("merged source: channel offset {} of input {} is invalid (valid: -{}..{})",
                      input.channel_offset, k, kChannelLimit - 1, kChannelLimit - 1));
    }
    for (channel_t channel : input.source->channels()) {
      channel_t moved = 0;
      if (!shiftChannel(channel, input.channel_offset, moved)) {
        throw InvalidArgument(fmt::format(
            "merged source: channel offset {} moves channel {} of input {} out of range (valid "
            "channels: 1..{} and their falling edges)",
            input.channel_offset, channel, k, kChannelLimit - 1));
      }
    }
    Lane& lane = lanes_.emplace_back();
    lane.input = std::move(input);
  }
  staged_.reserve(block_size_);
}

std::vector<channel_t> MergedSource::channels() const {
  std::vector<channel_t> all;
  for (const Lane& lane : lanes_) {
    const std::vector<channel_t> own = lane.input.source->channels();
    if (own.empty()) return {};
    for (channel_t channel : own) {
      channel_t moved = 0;
      if (shiftChannel(channel, lane.input.channel_offset, moved)) all.push_back(moved);
    }
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::string MergedSource::describe() const {
  std::string text = fmt::format("merged({}", overlap_only_ ? "overlap_only" : "union");
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    const MergedInput& input = lanes_[k].input;
    text += fmt::format("; input {}: {} with channel offset {}, time offset {} ps", k,
                        input.source->describe(), input.channel_offset, input.time_offset);
  }
  return text + ")";
}

void MergedSource::requestStop() {
  for (Lane& lane : lanes_) lane.input.source->requestStop();
}

Tag MergedSource::shifted(const Lane& lane, std::size_t index, const Tag& tag) const {
  Tag out = tag;
  const bool time_ok = shiftTime(tag.time, lane.input.time_offset, out.time);
  const bool channel_ok = !carriesChannel(tag.type) ||
                          shiftChannel(tag.channel, lane.input.channel_offset, out.channel);
  if (!time_ok || !channel_ok) {
    throw DataError(fmt::format(
        "merged source: input {} ({}): {} tag on channel {} at {} ps leaves the valid range "
        "when shifted by {} channels and {} ps (valid: channels 1..{} and their falling edges, "
        "times -2^62..2^62 ps)",
        index, lane.input.source->describe(), tagTypeName(tag.type), tag.channel, tag.time,
        lane.input.channel_offset, lane.input.time_offset, kChannelLimit - 1));
  }
  return out;
}

bool MergedSource::readLane(std::size_t index) {
  Lane& lane = lanes_[index];
  if (lane.ended) return false;
  if (!lane.input.source->next(lane.buffer)) {
    lane.ended = true;
    // Past its end the input is silent, not lost: an overflow it ended in closes there.
    if (lane.read_in_overflow && lane.started) {
      lane.pending.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, lane.covered});
      lane.read_in_overflow = false;
    }
    return false;
  }
  const auto shiftedTime = [&](timestamp_t time) {
    timestamp_t out = 0;
    if (!shiftTime(time, lane.input.time_offset, out)) {
      throw DataError(fmt::format(
          "merged source: input {} ({}): block time {} ps leaves -2^62..2^62 ps when shifted "
          "by {} ps",
          index, lane.input.source->describe(), time, lane.input.time_offset));
    }
    return out;
  };
  if (!lane.started) {
    lane.started = true;
    lane.begin = shiftedTime(lane.buffer.begin_time);
  }
  lane.covered = shiftedTime(lane.buffer.end_time);
  lane.pending.erase(lane.pending.begin(),
                     lane.pending.begin() + static_cast<std::ptrdiff_t>(lane.head));
  lane.head = 0;
  for (const Tag& tag : lane.buffer.tags) {
    lane.pending.push_back(shifted(lane, index, tag));
    if (tag.type == TagType::OverflowBegin) lane.read_in_overflow = true;
    if (tag.type == TagType::OverflowEnd) lane.read_in_overflow = false;
  }
  return true;
}

void MergedSource::start() {
  started_ = true;
  bool any = false;
  bool all = true;
  for (std::size_t k = 0; k < lanes_.size(); ++k) {
    readLane(k);
    const Lane& lane = lanes_[k];
    if (!lane.started) {
      all = false;
      continue;
    }
    begin_ = !any ? lane.begin
                  : (overlap_only_ ? std::max(begin_, lane.begin) : std::min(begin_, lane.begin));
    any = true;
  }
  empty_ = !any || (overlap_only_ && !all);
  position_ = begin_;
  staged_until_ = begin_;
}

timestamp_t MergedSource::completeUntil() {
  for (;;) {
    // The lane whose delivered stream ends first bounds what is complete; an ended lane
    // bounds it only for the overlap, whose end is the first input's end.
    std::size_t lagging = lanes_.size();
    timestamp_t until = std::numeric_limits<timestamp_t>::max();
    timestamp_t last_end = std::numeric_limits<timestamp_t>::min();
    for (std::size_t k = 0; k < lanes_.size(); ++k) {
      const Lane& lane = lanes_[k];
      if (!lane.started) continue;
      if (lane.ended) last_end = std::max(last_end, lane.covered);
      if (lane.ended && !overlap_only_) continue;
      if (lane.covered < until) {
        until = lane.covered;
        lagging = k;
      }
    }
    if (lagging == lanes_.size()) {  // every input has ended
      at_end_ = true;
      return last_end;
    }
    if (lanes_[lagging].ended) {  // the overlap ends with its first input
      at_end_ = true;
      return until;
    }
    if (until > position_) return until;
    readLane(lagging);
  }
}

void MergedSource::announceBegin() {
  if (begin_announced_) return;
  begin_announced_ = true;
  if (overflow_depth_ > 0) staged_.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, begin_});
}

void MergedSource::mergeUntil(timestamp_t until) {
  staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(staged_head_));
  staged_head_ = 0;
  for (;;) {
    Lane* first = nullptr;
    for (Lane& lane : lanes_) {
      if (lane.head == lane.pending.size()) continue;
      const Tag& candidate = lane.pending[lane.head];
      if (candidate.time >= until) continue;
      if (first == nullptr || canonicalTagOrder(candidate, first->pending[first->head])) {
        first = &lane;
      }
    }
    if (first == nullptr) break;
    const Tag tag = first->pending[first->head++];
    const bool before_begin = tag.time < begin_;
    // The state at begin_ is the one before the first tag there changes it.
    if (!before_begin) announceBegin();
    if (tag.type == TagType::OverflowBegin) {
      if (first->merged_in_overflow) continue;
      first->merged_in_overflow = true;
      if (overflow_depth_++ > 0 || before_begin) continue;
    } else if (tag.type == TagType::OverflowEnd) {
      if (!first->merged_in_overflow) continue;
      first->merged_in_overflow = false;
      if (--overflow_depth_ > 0 || before_begin) continue;
    }
    if (!before_begin) staged_.push_back(tag);
  }
  if (until > begin_) announceBegin();
  staged_until_ = until;
}

bool MergedSource::next(BlockBuffer& out) {
  if (!started_) start();
  if (empty_) return false;
  if (staged_head_ == staged_.size()) {
    if (!at_end_) mergeUntil(completeUntil());
    if (staged_head_ == staged_.size() && position_ >= staged_until_) return false;
  }
  const std::span<const Tag> ready(staged_.data() + staged_head_, staged_.size() - staged_head_);
  const std::size_t count = blockSplitPoint(ready, block_size_);
  out.storage.assign(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(count));
  out.publishStorage();
  out.begin_time = position_;
  out.end_time = count < ready.size() ? ready[count].time : staged_until_;
  staged_head_ += count;
  position_ = out.end_time;
  return true;
}

}  // namespace tagflow
