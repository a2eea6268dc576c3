#include "tagflow/core/shared_times.hpp"

#include <algorithm>
#include <map>

namespace tagflow {

void SharedTimes::prepare(std::span<const channel_t> channels) {
  count_ = std::min(channels.size(), kMaxSplitChannels);
  std::copy_n(channels.begin(), count_, channels_.begin());
  gathered_.store(false, std::memory_order_relaxed);
}

std::optional<std::span<const timestamp_t>> SharedTimes::times(channel_t channel,
                                                               std::span<const Tag> tags) const {
  const auto end = channels_.begin() + static_cast<std::ptrdiff_t>(count_);
  const auto found = std::find(channels_.begin(), end, channel);
  if (found == end) return std::nullopt;
  if (!gathered_.load(std::memory_order_acquire)) {
    // A reader that finds another gathering splits the block itself: waiting would put its
    // thread to sleep for about as long as its own split takes.
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    if (!gathered_.load(std::memory_order_relaxed)) {
      gather(tags);
      gathered_.store(true, std::memory_order_release);
    }
  }
  const auto slot = static_cast<std::size_t>(found - channels_.begin());
  return std::span<const timestamp_t>(times_[slot].get(), sizes_[slot]);
}

void SharedTimes::gather(std::span<const Tag> tags) const {
  const std::size_t needed = tags.size() + kSplitSpare;
  std::array<timestamp_t*, kMaxSplitChannels> out{};
  for (std::size_t slot = 0; slot < count_; ++slot) {
    if (capacities_[slot] < needed) {
      times_[slot] = std::make_unique_for_overwrite<timestamp_t[]>(needed);
      capacities_[slot] = needed;
    }
    out[slot] = times_[slot].get();
  }
  splitTimes(tags, {channels_.data(), count_}, out.data(), sizes_.data());
}

std::vector<channel_t> channelsToShare(const std::vector<std::vector<channel_t>>& wanted) {
  std::vector<bool> counted(wanted.size(), true);
  std::vector<channel_t> shared;
  while (true) {
    std::map<channel_t, std::size_t> readers;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      if (!counted[i]) continue;
      std::vector<channel_t> channels = wanted[i];
      std::sort(channels.begin(), channels.end());
      channels.erase(std::unique(channels.begin(), channels.end()), channels.end());
      for (const channel_t channel : channels) ++readers[channel];
    }
    std::vector<std::pair<std::size_t, channel_t>> candidates;
    for (const auto& [channel, count] : readers) {
      if (count >= 2) candidates.emplace_back(count, channel);
    }
    // The most readers first, then the lower channel.
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    shared.clear();
    for (std::size_t k = 0; k < std::min(candidates.size(), kMaxSplitChannels); ++k) {
      shared.push_back(candidates[k].second);
    }
    // Readers left with a channel outside the set no longer count; the set can only shrink.
    bool changed = false;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      const bool covered =
          !wanted[i].empty() && std::all_of(wanted[i].begin(), wanted[i].end(), [&](channel_t c) {
            return std::find(shared.begin(), shared.end(), c) != shared.end();
          });
      if (counted[i] && !covered) {
        counted[i] = false;
        changed = true;
      }
    }
    if (!changed) return shared;
  }
}

}  // namespace tagflow
