// Hand-made tag streams for tests, built with the standard library only (no library code):
// random Poisson-like streams, bursty streams with long silent gaps, and a helper that turns a
// stream into one with an overflow interval the way a time tagger reports it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::test {

inline void sortStream(std::vector<Tag>& tags) {
  std::stable_sort(tags.begin(), tags.end(), canonicalTagOrder);
}

// Independent exponential gaps (mean `mean_gap_ps`, at least 1 ps) per channel in [begin, end).
inline std::vector<Tag> randomTags(std::uint64_t seed, const std::vector<channel_t>& channels,
                                   timestamp_t begin, timestamp_t end, double mean_gap_ps) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<Tag> tags;
  for (channel_t channel : channels) {
    timestamp_t time = begin + static_cast<timestamp_t>(uniform(random) * mean_gap_ps);
    while (time < end) {
      tags.push_back(makeTimeTag(channel, time));
      const double gap = -mean_gap_ps * std::log(1.0 - uniform(random));
      time += std::max<timestamp_t>(1, static_cast<timestamp_t>(gap));
    }
  }
  sortStream(tags);
  return tags;
}

// `bursts` bursts of `tags_per_burst` tags spread uniformly over `burst_ps`, separated by
// `gap_ps` of silence; channels drawn uniformly from `channels`.
inline std::vector<Tag> burstyTags(std::uint64_t seed, const std::vector<channel_t>& channels,
                                   timestamp_t begin, int bursts, int tags_per_burst,
                                   timestamp_t burst_ps, timestamp_t gap_ps) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<timestamp_t> offset(0, burst_ps - 1);
  std::uniform_int_distribution<std::size_t> pick(0, channels.size() - 1);
  std::vector<Tag> tags;
  for (int b = 0; b < bursts; ++b) {
    const timestamp_t burst_begin = begin + b * (burst_ps + gap_ps);
    for (int i = 0; i < tags_per_burst; ++i) {
      tags.push_back(makeTimeTag(channels[pick(random)], burst_begin + offset(random)));
    }
  }
  sortStream(tags);
  return tags;
}

// Drops the TimeTags in [begin, end) and reports them the way a time tagger does:
// OverflowBegin at `begin`, MissedEvents per channel (split at 65535) and OverflowEnd at `end`.
inline std::vector<Tag> withOverflow(const std::vector<Tag>& tags, timestamp_t begin,
                                     timestamp_t end) {
  std::vector<Tag> out;
  std::vector<std::pair<channel_t, std::uint64_t>> lost;
  for (const Tag& tag : tags) {
    if (tag.type == TagType::TimeTag && tag.time >= begin && tag.time < end) {
      auto it = std::find_if(lost.begin(), lost.end(),
                             [&](const auto& entry) { return entry.first == tag.channel; });
      if (it == lost.end()) {
        lost.emplace_back(tag.channel, 1);
      } else {
        ++it->second;
      }
    } else {
      out.push_back(tag);
    }
  }
  out.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, begin});
  for (auto [channel, count] : lost) {
    while (count > 0) {
      const auto chunk = static_cast<std::uint16_t>(std::min<std::uint64_t>(count, 0xFFFF));
      out.push_back(Tag{TagType::MissedEvents, 0, chunk, channel, end});
      count -= chunk;
    }
  }
  out.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, end});
  sortStream(out);
  return out;
}

}  // namespace tagflow::test
