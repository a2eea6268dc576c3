#include "tagflow/io/sources/memory_source.hpp"

#include <algorithm>
#include <limits>

#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

constexpr timestamp_t kTimeLimit = kStreamTimeLimit;
constexpr const char* kValidTimes = " ps is invalid (valid: -2^62..2^62 ps, about +-53 days)";

timestamp_t firstTime(const std::vector<Tag>& tags) {
  return tags.empty() ? 0 : tags.front().time;
}
// Saturating: a last time at the type's end is refused by the range check, not wrapped.
timestamp_t afterLast(const std::vector<Tag>& tags) {
  if (tags.empty()) return 1;
  const timestamp_t last = tags.back().time;
  return last < std::numeric_limits<timestamp_t>::max() ? last + 1 : last;
}

}  // namespace

MemorySource::MemorySource(std::shared_ptr<const std::vector<Tag>> tags, std::size_t block_size)
    : MemorySource(tags, block_size, firstTime(*tags), afterLast(*tags)) {}

MemorySource::MemorySource(std::shared_ptr<const std::vector<Tag>> tags, std::size_t block_size,
                           timestamp_t begin_time, timestamp_t end_time)
    : tags_(std::move(tags)),
      block_size_(block_size),
      begin_time_(begin_time),
      end_time_(end_time) {
  if (block_size_ < 1)
    throw InvalidArgument("memory source: block_size 0 is invalid (valid: >= 1)");
  const auto& all = *tags_;
  if (all.size() >= 0xFFFFFFFFull) throw InvalidArgument("memory source: more than 2^32-1 tags");
  // Order first: the default interval ends after the last tag, so an unsorted vector would
  // otherwise be reported as a tag outside the interval instead of naming the unsorted tag.
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].time < all[i - 1].time) {
      throw DataError("memory source: tag " + std::to_string(i) + " at " +
                      std::to_string(all[i].time) + " ps is earlier than tag " +
                      std::to_string(i - 1) + " at " + std::to_string(all[i - 1].time) +
                      " ps (tags must be sorted by time)");
    }
  }
  // Stream times stay within +-2^62 ps, as every source's do, so that a delay, a bin or a
  // window added to a time cannot overflow. Sorted: the ends bound the rest.
  for (const std::size_t i : {std::size_t{0}, all.size() - 1}) {
    if (i < all.size() && (all[i].time < -kTimeLimit || all[i].time > kTimeLimit)) {
      throw DataError("memory source: tag " + std::to_string(i) + " at " +
                      std::to_string(all[i].time) + kValidTimes);
    }
  }
  for (const timestamp_t bound : {begin_time_, end_time_}) {
    if (bound < -kTimeLimit || bound > kTimeLimit + 1) {
      throw InvalidArgument("memory source: interval bound " + std::to_string(bound) + kValidTimes);
    }
  }
  if (end_time_ <= begin_time_) {
    throw InvalidArgument("memory source: interval [" + std::to_string(begin_time_) + ", " +
                          std::to_string(end_time_) + ") ps is empty");
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].time < begin_time_ || all[i].time >= end_time_) {
      throw DataError("memory source: tag " + std::to_string(i) + " at " +
                      std::to_string(all[i].time) + " ps lies outside [" +
                      std::to_string(begin_time_) + ", " + std::to_string(end_time_) + ") ps");
    }
    if (all[i].type != TagType::TimeTag) special_.push_back(static_cast<std::uint32_t>(i));
  }
  rewind();
}

void MemorySource::rewind() {
  position_ = 0;
  next_begin_ = begin_time_;
}

bool MemorySource::next(BlockBuffer& out) {
  if (next_begin_ >= end_time_) return false;
  const std::span<const Tag> rest = std::span<const Tag>(*tags_).subspan(position_);
  const std::size_t count = blockSplitPoint(rest, block_size_);
  out.tags = rest.first(count);
  out.begin_time = next_begin_;
  out.end_time = count < rest.size() ? rest[count].time : end_time_;

  out.special.clear();
  const auto first = std::lower_bound(special_.begin(), special_.end(), position_);
  for (auto it = first; it != special_.end() && *it < position_ + count; ++it) {
    out.special.push_back(static_cast<std::uint32_t>(*it - position_));
  }
  position_ += count;
  next_begin_ = out.end_time;
  return true;
}

std::optional<StreamSpan> MemorySource::timeSpan() {
  return StreamSpan{begin_time_, end_time_};
}

bool MemorySource::seekTo(timestamp_t time) {
  const timestamp_t start = std::clamp(time, begin_time_, end_time_);
  position_ = static_cast<std::size_t>(
      std::lower_bound(tags_->begin(), tags_->end(), start,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      tags_->begin());
  next_begin_ = start;
  return true;
}

bool MemorySource::startsInOverflow() const {
  bool inside = false;
  for (const std::uint32_t index : special_) {
    if (index >= position_) break;
    const TagType type = (*tags_)[index].type;
    if (type == TagType::OverflowBegin) inside = true;
    if (type == TagType::OverflowEnd) inside = false;
  }
  return inside;
}

std::string MemorySource::describe() const {
  return "memory tags=" + std::to_string(tags_->size()) +
         " block_size=" + std::to_string(block_size_);
}

}  // namespace tagflow
