#include "tagflow/measurements/time_window.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tagflow/core/channel_split.hpp"

namespace tagflow {

timestamp_t* TimeWindow::reserveFor(std::size_t count) {
  if (end_ + count + kReadSlack > capacity_) {
    const std::size_t kept = size();
    if (kept + count + kReadSlack <= capacity_ / 2) {
      // Plenty of room once the dropped front is reclaimed.
      std::memmove(data_.get(), data_.get() + head_, kept * sizeof(timestamp_t));
    } else {
      const std::size_t capacity = std::max<std::size_t>(2 * (kept + count + kReadSlack), 1024);
      auto grown = std::make_unique<timestamp_t[]>(capacity);
      // memcpy from the null pointer of a window never grown is undefined, even for 0 bytes.
      if (kept > 0) std::memcpy(grown.get(), data_.get() + head_, kept * sizeof(timestamp_t));
      data_ = std::move(grown);
      capacity_ = capacity;
    }
    head_ = 0;
    end_ = kept;
  }
  return data_.get() + end_;
}

void TimeWindow::seal() {
  timestamp_t* const past_end = reserveFor(0);
  std::fill(past_end, past_end + kSealTimes, std::numeric_limits<timestamp_t>::max());
}

void splitChannels(std::span<const Tag> tags, channel_t channel_a, TimeWindow& a,
                   channel_t channel_b, TimeWindow* b) {
  const channel_t channels[] = {channel_a, channel_b};
  timestamp_t* const out[] = {a.reserveFor(tags.size() + kSplitSpare),
                              b != nullptr ? b->reserveFor(tags.size() + kSplitSpare) : nullptr};
  std::size_t counts[2] = {};
  splitTimes(tags, std::span<const channel_t>(channels, b != nullptr ? 2 : 1), out, counts);
  a.commit(counts[0]);
  if (b != nullptr) b->commit(counts[1]);
}

void appendTimes(std::span<const timestamp_t> times, TimeWindow& window) {
  std::copy(times.begin(), times.end(), window.reserveFor(times.size()));
  window.commit(times.size());
}

}  // namespace tagflow
