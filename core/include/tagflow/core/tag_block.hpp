// TagBlock: an immutable, time-ordered run of tags covering the stream interval
// [begin_time, end_time). Blocks tile stream time without gaps: a block's end_time is the next
// block's begin_time, and an empty block still advances time. `sequence` counts blocks from 0
// without gaps. `special` lists, in order, the indices of every tag that is not a TimeTag
// (overflow marks, missed events, errors), so hot loops can run over pure time-tag stretches.
// `shared` holds the times of the channels that several of the block's readers gather.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tagflow/core/shared_times.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow {

struct TagBlock {
  std::span<const Tag> tags;
  std::span<const std::uint32_t> special;
  timestamp_t begin_time = 0;
  timestamp_t end_time = 0;
  std::uint64_t sequence = 0;
  // The times of the channels that several readers gather, gathered once (null: none).
  const SharedTimes* shared = nullptr;
};

// The writable side of a block, filled by a Source. Tags either live in `storage` (reused
// between blocks: its capacity is reserved once) or in memory the source owns for longer,
// in which case the source points `tags` there and leaves `storage` alone.
struct BlockBuffer {
  std::vector<Tag> storage;
  std::vector<std::uint32_t> special;
  std::span<const Tag> tags;
  timestamp_t begin_time = 0;
  timestamp_t end_time = 0;

  // Makes `tags` view `storage` and rebuilds `special` from it.
  void publishStorage();
  // Rebuilds `special` from `tags`.
  void indexSpecialTags();

  TagBlock view(std::uint64_t sequence) const {
    return TagBlock{tags, special, begin_time, end_time, sequence};
  }
};

// Index of the first tag at or after `time` in a time-ordered run, found by galloping from
// the front: cost grows with the log of the answer, not of the run, which suits loops that
// step through a block in short stretches (bins, windows).
std::size_t firstAtOrAfter(std::span<const Tag> tags, timestamp_t time);

// How many of the first tags of a time-ordered run may form a block of at most `max_tags`
// tags such that the next tag is strictly later than the block's last (a block covers
// [begin, end) and the next block begins at its next tag's time). Tags sharing one time are
// never split; if the first `max_tags + 1` share a time the run of equal times is returned
// whole, so the result can exceed `max_tags` only then.
std::size_t blockSplitPoint(std::span<const Tag> tags, std::size_t max_tags);

// The index of the first tag whose channel lies in [first, end), or tags.size(). Runs at about
// the pace of reading the tags (eight at a time where AVX2 is there) when none does.
std::size_t firstOnChannels(std::span<const Tag> tags, channel_t first, channel_t end);

}  // namespace tagflow
