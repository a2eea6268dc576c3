// OwedTimes: the times a channel has promised to emit later, ascending. A plain array with a
// live range [head, end): hot loops read and advance `head` and append at `end` themselves,
// in registers, and store them back. The storage only grows (no block pays for initialising
// it); compact() moves the live range to the front once half the storage is spent.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

struct OwedTimes {
  std::vector<timestamp_t> times;
  std::size_t head = 0;
  std::size_t end = 0;

  bool empty() const { return head == end; }
  std::size_t size() const { return end - head; }
  void clear() { head = end = 0; }

  // Makes room for `more` appends; returns the storage (valid until the next reserve).
  timestamp_t* reserve(std::size_t more) {
    if (times.size() < end + more) times.resize(end + more);
    return times.data();
  }

  // Adds `time` in order: appended when it is not earlier than the last owed time (the common
  // case), otherwise inserted after the owed times not later than it.
  void insert(timestamp_t time) {
    reserve(1);
    const auto first = times.begin() + static_cast<std::ptrdiff_t>(head);
    const auto last = times.begin() + static_cast<std::ptrdiff_t>(end);
    const auto at = std::upper_bound(first, last, time);
    std::copy_backward(at, last, last + 1);
    *at = time;
    ++end;
  }

  // Takes in every time `other` owes, in order (both ascending); `other` is left empty.
  void absorb(OwedTimes& other) {
    std::vector<timestamp_t> merged(size() + other.size());
    std::merge(times.begin() + static_cast<std::ptrdiff_t>(head),
               times.begin() + static_cast<std::ptrdiff_t>(end),
               other.times.begin() + static_cast<std::ptrdiff_t>(other.head),
               other.times.begin() + static_cast<std::ptrdiff_t>(other.end), merged.begin());
    times = std::move(merged);
    head = 0;
    end = times.size();
    other.clear();
  }

  // Hands each owed time before `until` to take(time), in order, and drops it.
  template <class Take>
  void takeBefore(timestamp_t until, Take take) {
    for (; head != end && times[head] < until; ++head) take(times[head]);
  }

  // Drops the owed times later than `time`.
  void dropAfter(timestamp_t time) {
    const auto first = times.begin() + static_cast<std::ptrdiff_t>(head);
    end = static_cast<std::size_t>(
        std::upper_bound(first, times.begin() + static_cast<std::ptrdiff_t>(end), time) -
        times.begin());
  }

  void compact() {
    if (head == end) {
      clear();
    } else if (head > end / 2) {
      std::copy(times.begin() + static_cast<std::ptrdiff_t>(head),
                times.begin() + static_cast<std::ptrdiff_t>(end), times.begin());
      end -= head;
      head = 0;
    }
  }
};

}  // namespace tagflow
