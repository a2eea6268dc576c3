// ChannelIndex: maps channel numbers to dense slots 0..n-1 in the order given, through a
// small table indexed by (channel - smallest channel), so a hot loop looks a channel up with
// one subtraction, one compare and one load. Channels not in the list map to slot n, which
// measurements use as a discard slot. Duplicates and CHANNEL_UNUSED are rejected.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow {

// A tag of an indexed channel, reduced to what a loop over the selection needs.
struct SelectedTag {
  std::uint32_t slot;
  timestamp_t time;
};

class ChannelIndex {
 public:
  // Largest distance between the smallest and the largest channel in one index.
  static constexpr std::int64_t kMaxSpan = 1 << 16;

  // `owner` names the measurement in error messages.
  ChannelIndex(std::span<const channel_t> channels, std::string_view owner);

  // A copy of the table's handle for hot loops: held in registers, where the index's members
  // would be read again after every store of a tag (its one-byte fields may alias anything).
  class Lookup {
   public:
    explicit Lookup(const ChannelIndex& index)
        : table_(index.table_.data()),
          table_size_(static_cast<std::uint32_t>(index.table_.size() - 1)),
          smallest_(static_cast<std::uint32_t>(index.smallest_)) {}
    // Branch-free: an offset beyond the table is clamped onto its last entry, the discard
    // slot, so channels outside the index cost no misprediction.
    std::uint32_t operator()(channel_t channel) const {
      const std::uint32_t offset = static_cast<std::uint32_t>(channel) - smallest_;
      return table_[std::min(offset, table_size_)];
    }

   private:
    const std::uint16_t* table_;
    std::uint32_t table_size_;
    std::uint32_t smallest_;
  };
  Lookup lookup() const { return Lookup(*this); }

  std::uint32_t slot(channel_t channel) const { return lookup()(channel); }

  // Adds the number of tags of each slot to counts[slot] (counts has size() + 1 entries, the
  // last one the discard slot). Up to kMaxVectorSlots channels compare eight tags at a time
  // in vector registers; more go through the table into four interleaved count arrays, which
  // break the store-to-load dependency when consecutive tags hit the same channel.
  static constexpr std::size_t kMaxVectorSlots = 8;
  void countTags(std::span<const Tag> tags, std::uint64_t* counts) const;

  // The tags of indexed channels, in order, written to `out` (room for tags.size()); returns
  // how many. Branch-free, so a loop over a sparse selection does not pay a misprediction for
  // every tag it skips.
  std::size_t select(std::span<const Tag> tags, SelectedTag* out) const;

  std::size_t size() const { return channels_.size(); }
  std::uint32_t discardSlot() const { return discard_slot_; }
  const std::vector<channel_t>& channels() const { return channels_; }

 private:
  std::vector<channel_t> channels_;
  std::vector<std::uint16_t> table_;
  mutable std::vector<std::uint64_t> lanes_;  // scratch of countTags: 4 x (size() + 1)
  channel_t smallest_ = 0;
  std::uint32_t discard_slot_ = 0;
};

}  // namespace tagflow
