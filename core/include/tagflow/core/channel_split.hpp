// splitTimes: the times of the tags of up to four channels out of a run of TimeTags, one array
// per channel, in one pass without a branch per tag. Four tags at a time sit in vector
// registers; per channel, a compare finds the matching tags and a permutation packs their times
// to the front of a register that is stored whole, the write position advancing by their
// number. A per-tag branch on the channel is what a loop over randomly mixed channels spends
// most of its time mispredicting; the measurements then work over dense arrays of one
// channel's times.
#pragma once

#include <cstddef>
#include <span>

#include "tagflow/core/tag.hpp"

namespace tagflow {

inline constexpr std::size_t kMaxSplitChannels = 4;
// Room each output needs past the run's count of tags: whole vectors are stored.
inline constexpr std::size_t kSplitSpare = 4;

// Writes the times of the tags on channels[k] to out[k], in order, and their number to
// counts[k], for 1 to kMaxSplitChannels channels; every out[k] needs room for tags.size() +
// kSplitSpare times. Tags of other channels are skipped; the tags' types are not looked at.
void splitTimes(std::span<const Tag> tags, std::span<const channel_t> channels,
                timestamp_t* const* out, std::size_t* counts);

}  // namespace tagflow
