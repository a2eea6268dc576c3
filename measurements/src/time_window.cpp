#include "tagflow/measurements/time_window.hpp"

#include <algorithm>
#include <cstring>

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

void splitChannels(std::span<const Tag> tags, channel_t channel_a, TimeWindow& a,
                   channel_t channel_b, TimeWindow* b) {
  // One spare slot: every tag is written, and only a match advances the write position.
  timestamp_t* const out_a = a.reserveFor(tags.size() + 1);
  std::size_t count_a = 0;
  if (b == nullptr) {
    for (const Tag& tag : tags) {
      prefetchAhead(&tag);
      out_a[count_a] = tag.time;
      count_a += tag.channel == channel_a;
    }
    a.commit(count_a);
    return;
  }
  timestamp_t* const out_b = b->reserveFor(tags.size() + 1);
  std::size_t count_b = 0;
  for (const Tag& tag : tags) {
    prefetchAhead(&tag);
    out_a[count_a] = tag.time;
    out_b[count_b] = tag.time;
    count_a += tag.channel == channel_a;
    count_b += tag.channel == channel_b;
  }
  a.commit(count_a);
  b->commit(count_b);
}

}  // namespace tagflow
