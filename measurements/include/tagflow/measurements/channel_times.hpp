// ChannelTimes: gathers the times of the TimeTags of a few channels out of a run of tags, one
// array per channel, in a single pass without a branch per tag (every tag's time is stored at
// its channel's write position, which advances only for the wanted channels), so that the
// per-channel work afterwards runs over dense arrays. The arrays hold the last gather(), which
// may instead take them from the times a graph gathered once for all readers of the block.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow {

class ChannelTimes {
 public:
  // `owner` names the measurement in error messages (duplicates, CHANNEL_UNUSED).
  ChannelTimes(std::span<const channel_t> channels, std::string_view owner);

  void gather(std::span<const Tag> tags);
  // As gather(), but takes the times from `shared(channel)` (a Measurement's sharedTimes) when
  // it has every channel's.
  template <class Shared>
  void gather(std::span<const Tag> tags, Shared shared) {
    for (std::size_t slot = 0; slot < size(); ++slot) {
      const std::optional<std::span<const timestamp_t>> times = shared(channels()[slot]);
      if (!times) return gather(tags);
      views_[slot] = *times;
    }
  }

  // Times of the channel at `slot` (the position in the list given) in the last gather().
  std::span<const timestamp_t> times(std::size_t slot) const { return views_[slot]; }
  std::size_t size() const { return index_.size(); }
  const std::vector<channel_t>& channels() const { return index_.channels(); }

 private:
  void reserve(std::size_t tags);

  ChannelIndex index_;
  std::vector<std::vector<timestamp_t>> buffers_;  // per slot, plus the discard slot
  std::vector<std::size_t> counts_;
  std::vector<timestamp_t*> write_;
  std::vector<std::span<const timestamp_t>> views_;
};

}  // namespace tagflow
