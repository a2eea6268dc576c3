// TimeWindow: the recent event times of one channel, oldest first, for measurements that pair
// events with the events of a sliding window. Appending and dropping are O(1) amortised and
// storage is reused, so steady state allocates nothing. splitChannels() fills two windows from
// a block in one pass without a data-dependent branch per tag: with several channels mixed at
// random, that branch is what a per-tag loop spends most of its time mispredicting.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "tagflow/core/tag.hpp"

namespace tagflow {

class TimeWindow {
 public:
  std::size_t size() const { return end_ - head_; }
  bool empty() const { return end_ == head_; }
  timestamp_t operator[](std::size_t i) const { return data_[head_ + i]; }
  std::span<const timestamp_t> times() const { return {data_.get() + head_, size()}; }

  void push(timestamp_t time) {
    reserveFor(1);
    data_[end_++] = time;
  }
  // Forgets the `count` oldest times.
  void dropFront(std::size_t count) { head_ += count; }
  // Forgets every time earlier than `time`.
  void dropBefore(timestamp_t time) {
    std::size_t head = head_;  // a local: the compiler would store the member every step
    while (head < end_ && data_[head] < time) ++head;
    head_ = head;
  }
  void clear() { head_ = end_ = 0; }

  // Room for `count` more times at the end; returns where they go.
  timestamp_t* reserveFor(std::size_t count);
  // Makes `count` times written after reserveFor() part of the window.
  void commit(std::size_t count) { end_ += count; }

 private:
  std::unique_ptr<timestamp_t[]> data_;
  std::size_t capacity_ = 0;
  std::size_t head_ = 0;
  std::size_t end_ = 0;
};

// Appends the times of the tags on `channel_a` to `a` and of those on `channel_b` to `b`
// (`b` may be null). Tags on other channels are skipped.
void splitChannels(std::span<const Tag> tags, channel_t channel_a, TimeWindow& a,
                   channel_t channel_b, TimeWindow* b);

}  // namespace tagflow
