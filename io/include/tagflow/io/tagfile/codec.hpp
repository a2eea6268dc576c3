// The packed payload of a tags block, before the general compressor. Two planes: each tag's
// channel as a code into the block's channel table, packed at 0, 1, 2, 4, 8, 16 or 32 bits
// (the narrowest that holds the table), and each tag's time delta minus the block's smallest
// delta (frame of reference) at a whole number of bytes, 0 to 8, chosen per block. Deltas
// wider than that keep their low bytes in the plane and list the rest as exceptions; tags
// that are not plain TimeTags list their type, reserved byte and missed-event count. Whole
// bytes and power-of-two code widths keep both loops free of bit juggling (the encoder packs
// hundreds of millions of tags per second); a Poisson stream costs a few tenths of a byte per
// tag above its entropy, a clock almost nothing, and every field of every tag (any channel,
// any time, any type) comes back exactly. The decoder checks the payload completely and
// yields times non-decreasing inside the block's [begin, end), or throws DataError.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "tagflow/core/tag.hpp"

namespace tagflow::tagfile {

// Reusable: keeps its scratch memory between blocks. One encoder per thread.
// What the first pass over a block finds (defined with the encoder).
struct ScanSummary;

class TagBlockEncoder {
 public:
  TagBlockEncoder();

  // Replaces `out` with the payload of `tags`, whose times are taken relative to `begin_time`.
  void encode(std::span<const Tag> tags, timestamp_t begin_time, std::vector<std::uint8_t>& out);
  // The indices of the last encoded block's tags that are not plain TimeTags, in order.
  std::span<const std::uint32_t> specials() const { return specials_; }

 private:
  // Channels in [-1024, 1024) find their code in a table, others in a map.
  static constexpr std::int32_t kDirectHalf = 1024;
  static constexpr std::uint32_t kDirectSize = 2 * kDirectHalf;
  static std::uint32_t directSlot(channel_t channel);
  // Gives `channel` the next code (it has none yet in this block) and returns it.
  std::uint32_t newCode(channel_t channel);
  ScanSummary scanTags(std::span<const Tag> tags);
  bool buildChannelTable(std::span<const Tag> tags, channel_t min_channel, channel_t max_channel);
  void putExceptionsAndSpecials(std::span<const Tag> tags, std::size_t exception_count,
                                std::uint64_t min_delta, unsigned delta_bytes,
                                std::vector<std::uint8_t>& out) const;

  std::vector<std::uint32_t> direct_;  // code + 1, 0: none yet
  std::unordered_map<channel_t, std::uint32_t> other_;
  std::vector<channel_t> channels_;  // by code
  std::vector<std::uint64_t> deltas_;
  std::vector<std::uint32_t> codes_;
  std::vector<std::uint32_t> exceptions_;
  std::vector<std::uint32_t> specials_;
};

// Reusable decoder scratch memory. One per thread.
class TagBlockDecoder {
 public:
  // Decodes `tag_count` tags of a block [begin_time, end_time) from `payload` into `out`;
  // `specials` receives the indices of the tags that are not TimeTags, in order.
  void decode(std::span<const std::uint8_t> payload, std::uint32_t tag_count,
              timestamp_t begin_time, timestamp_t end_time, Tag* out,
              std::vector<std::uint32_t>& specials);

 private:
  std::vector<channel_t> table_;
};

}  // namespace tagflow::tagfile
