// SharedTimes: the times of a few channels in one block, gathered once for all the readers of
// the block that want them. Several measurements often read the same channels (a correlation
// and a lifetime histogram of one detector pair, two analyses of one clock), and each used to
// split the block into its channels itself. The graph names the channels that two or more
// readers of a stream gather before it publishes a block; the first reader to ask gathers all
// of them in one pass (splitTimes), and the others, on any thread, read the same arrays. Only
// blocks of TimeTags alone are gathered: a reader asks for the whole block's tags.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "tagflow/core/channel_split.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow {

class SharedTimes {
 public:
  // The channels the next block's readers share (the first kMaxSplitChannels). Called by the
  // block's publisher while no reader holds the block; forgets the times gathered before.
  void prepare(std::span<const channel_t> channels);

  // The times of `channel` among `tags`, the block's tags, or std::nullopt when the channel is
  // not shared, or while another reader is gathering (the caller then splits the block
  // itself). The first call gathers every shared channel.
  std::optional<std::span<const timestamp_t>> times(channel_t channel,
                                                    std::span<const Tag> tags) const;

 private:
  void gather(std::span<const Tag> tags) const;

  std::array<channel_t, kMaxSplitChannels> channels_{};
  std::size_t count_ = 0;
  mutable std::mutex mutex_;
  mutable std::atomic<bool> gathered_{false};
  mutable std::array<std::unique_ptr<timestamp_t[]>, kMaxSplitChannels> times_;
  mutable std::array<std::size_t, kMaxSplitChannels> capacities_{};
  mutable std::array<std::size_t, kMaxSplitChannels> sizes_{};
};

// The channels a stream's blocks gather once, given the channels each of its readers gathers:
// those that two or more readers want, the most wanted first, at most kMaxSplitChannels.
// Only readers whose channels are all gathered count, as the others split blocks themselves.
std::vector<channel_t> channelsToShare(const std::vector<std::vector<channel_t>>& wanted);

}  // namespace tagflow
