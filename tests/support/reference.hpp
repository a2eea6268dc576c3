// Brute-force references: plain loops over a std::vector<Tag> that state what a measurement
// should report, written from the spec (timetagger-semantics.md 3.1, 3.2), not from the
// library's code.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::test {

struct Interval {
  timestamp_t begin = 0;
  timestamp_t end = 0;
};

// TimeTags of `channel` with from <= time < to.
inline std::uint64_t countTimeTags(const std::vector<Tag>& tags, channel_t channel,
                                   timestamp_t from, timestamp_t to) {
  std::uint64_t count = 0;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::TimeTag && tag.channel == channel && tag.time >= from &&
        tag.time < to) {
      ++count;
    }
  }
  return count;
}

// Sum of MissedEvents counts of `channel` with from <= time < to.
inline std::uint64_t countMissed(const std::vector<Tag>& tags, channel_t channel, timestamp_t from,
                                 timestamp_t to) {
  std::uint64_t count = 0;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::MissedEvents && tag.channel == channel && tag.time >= from &&
        tag.time < to) {
      count += tag.missed_events;
    }
  }
  return count;
}

// [OverflowBegin, OverflowEnd) pairs found in a stream.
inline std::vector<Interval> overflowIntervalsOf(const std::vector<Tag>& tags) {
  std::vector<Interval> intervals;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::OverflowBegin) intervals.push_back(Interval{tag.time, tag.time});
    if (tag.type == TagType::OverflowEnd) intervals.back().end = tag.time;
  }
  return intervals;
}

// What a Counter must hold after capturing [start, end) of `tags`: bin k covers
// [start + k*binwidth, start + (k+1)*binwidth); a bin is complete once `end` reached its end;
// a bin is in overflow if it overlaps an overflow interval [begin, end).
struct CounterReference {
  std::size_t n_values = 0;
  timestamp_t binwidth = 0;
  std::uint64_t completed = 0;
  std::vector<std::vector<std::int64_t>> bins;  // [channel][k], every completed bin
  std::vector<bool> overflow;                   // [k]
  std::vector<std::uint64_t> totals;            // per channel, integrating bin and missed events

  // Which completed bin a column of getData() shows, or -1 for an unfilled column.
  std::int64_t binOfColumn(std::size_t column, bool rolling) const {
    const auto n = static_cast<std::uint64_t>(n_values);
    if (rolling) {
      if (completed >= n) return static_cast<std::int64_t>(completed - n + column);
      const std::uint64_t unfilled = n - completed;
      return column < unfilled ? -1 : static_cast<std::int64_t>(column - unfilled);
    }
    if (column >= completed) return -1;
    // The newest completed bin whose index modulo n_values is `column`.
    return static_cast<std::int64_t>(column + n * ((completed - 1 - column) / n));
  }

  std::vector<std::int64_t> data(bool rolling) const {
    std::vector<std::int64_t> out;
    for (const auto& channel_bins : bins) {
      for (std::size_t column = 0; column < n_values; ++column) {
        const std::int64_t k = binOfColumn(column, rolling);
        out.push_back(k < 0 ? 0 : channel_bins[static_cast<std::size_t>(k)]);
      }
    }
    return out;
  }

  std::vector<double> normalized(bool rolling) const {
    std::vector<double> out;
    for (const auto& channel_bins : bins) {
      for (std::size_t column = 0; column < n_values; ++column) {
        const std::int64_t k = binOfColumn(column, rolling);
        if (k < 0 || overflow[static_cast<std::size_t>(k)]) {
          out.push_back(std::numeric_limits<double>::quiet_NaN());
        } else {
          out.push_back(static_cast<double>(channel_bins[static_cast<std::size_t>(k)]) /
                        (static_cast<double>(binwidth) * 1e-12));
        }
      }
    }
    return out;
  }

  std::vector<std::int8_t> mask(bool rolling) const {
    std::vector<std::int8_t> out;
    for (std::size_t column = 0; column < n_values; ++column) {
      const std::int64_t k = binOfColumn(column, rolling);
      out.push_back(k >= 0 && overflow[static_cast<std::size_t>(k)] ? 1 : 0);
    }
    return out;
  }
};

inline CounterReference counterReference(const std::vector<Tag>& tags,
                                         const std::vector<channel_t>& channels, timestamp_t start,
                                         timestamp_t end, timestamp_t binwidth,
                                         std::size_t n_values,
                                         const std::vector<Interval>& overflows = {}) {
  CounterReference ref;
  ref.n_values = n_values;
  ref.binwidth = binwidth;
  ref.completed = static_cast<std::uint64_t>((end - start) / binwidth);
  ref.bins.assign(channels.size(), std::vector<std::int64_t>(ref.completed, 0));
  ref.totals.assign(channels.size(), 0);
  for (std::size_t c = 0; c < channels.size(); ++c) {
    for (const Tag& tag : tags) {
      if (tag.channel != channels[c] || tag.time < start || tag.time >= end) continue;
      if (tag.type == TagType::MissedEvents) ref.totals[c] += tag.missed_events;
      if (tag.type != TagType::TimeTag) continue;
      ++ref.totals[c];
      const auto k = static_cast<std::uint64_t>((tag.time - start) / binwidth);
      if (k < ref.completed) ++ref.bins[c][k];
    }
  }
  for (std::uint64_t k = 0; k < ref.completed; ++k) {
    const timestamp_t bin_begin = start + static_cast<timestamp_t>(k) * binwidth;
    const timestamp_t bin_end = bin_begin + binwidth;
    bool touched = false;
    for (const Interval& o : overflows)
      touched = touched || (o.begin < bin_end && bin_begin < o.end);
    ref.overflow.push_back(touched);
  }
  return ref;
}

// Element-wise equal, NaN equal to NaN, numbers within a relative tolerance.
inline bool sameValues(const std::vector<double>& a, const std::vector<double>& b,
                       double relative_tolerance) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return false;
      continue;
    }
    if (std::abs(a[i] - b[i]) > relative_tolerance * std::max(std::abs(a[i]), std::abs(b[i]))) {
      return false;
    }
  }
  return true;
}

// Bit-for-bit equal (NaN payloads included).
inline bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace tagflow::test
