// TagStream: the tags of chosen channels, and every overflow, missed-events and error tag,
// handed in bulk to code of the user's own, like the reference software's TimeTagStream.
// getData() takes the tags gathered since the last call (at most max_tags; later ones are
// dropped and counted until the next call, so a reader that falls behind knows it). The
// capture stops and starts like any measurement's; the tags are copied once, into a buffer
// the caller then owns.
#pragma once

#include <cstdint>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/measurement.hpp"

namespace tagflow {

class TagStream : public Measurement {
 public:
  static const ParameterSchema& schema();

  TagStream(std::string name, std::vector<channel_t> channels, std::int64_t max_tags = 1 << 20);

  // The tags since the last call, in time order.
  std::vector<Tag> getData();
  // Tags dropped because the buffer was full, since construction or clear().
  std::uint64_t getDropped() const;

  std::optional<std::vector<channel_t>> inputChannels() const override { return index_.channels(); }

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void onOverflowBegin(const Tag& tag) override { appendOne(tag); }
  void onOverflowEnd(const Tag& tag) override { appendOne(tag); }
  void onMissedEvents(const Tag& tag) override { appendOne(tag); }
  void onError(const Tag& tag) override { appendOne(tag); }
  void clearData() override;
  void collectResults(ResultSet& out) const override;

 private:
  void appendOne(const Tag& tag);

  ChannelIndex index_;
  std::size_t max_tags_;
  std::vector<Tag> buffer_;  // capacity max_tags_ + one block's worth of candidate writes
  std::size_t size_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace tagflow
