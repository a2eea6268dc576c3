// InputDelaySource: another source's stream with per-channel input delays, as a time tagger's
// setInputDelay() applies them to align cables and detectors: every time tag of a listed
// channel is moved by its delay in ps, which may be negative. A channel number is one edge, as
// on the tagger: delaying 2 leaves its falling edge -2 alone. Special tags (overflow marks,
// missed-event counts, errors) keep their times, since they mark the link's state, not a
// channel's; a delayed tag that lands inside an overflow interval is read there as any tag
// inside one. The stream stays in time order, at equal times in the canonical order. It begins
// at the inner stream's begin plus the smallest delay (zero for unlisted channels) and ends at
// its end plus the largest, so that every delayed tag is kept. Tags wait in memory for the
// span between the smallest and largest delay. The stream cannot seek: a range run reads it
// from its start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tagflow/core/source.hpp"

namespace tagflow {

struct InputDelay {
  channel_t channel = 0;
  timestamp_t delay_ps = 0;
};

class InputDelaySource : public Source {
 public:
  // InvalidArgument for a null source, a channel that is 0, out of 1..2^27-1 in magnitude,
  // listed twice or not among the inner source's channels (when it knows them), or a delay
  // of 2^62 ps or more in magnitude. next() throws DataError naming the tag when a delayed time
  // leaves
  // +-2^62 ps, and passes on the inner source's errors.
  InputDelaySource(std::unique_ptr<Source> inner, std::vector<InputDelay> delays);

  bool next(BlockBuffer& out) override;
  std::size_t maxBlockTags() const override { return block_size_; }
  std::vector<channel_t> channels() const override { return inner_->channels(); }
  std::string describe() const override;
  void requestStop() override { inner_->requestStop(); }

  // The undelayed source (its statistics, its file).
  const Source& inner() const { return *inner_; }
  const std::vector<InputDelay>& delays() const { return delays_; }

 private:
  // The tags of the channels that share one delay, delayed, in time order: [head, size) of
  // `tags`, which only grows.
  struct Lane {
    timestamp_t delay = 0;
    std::vector<Tag> tags;
    std::size_t head = 0;
    std::size_t size = 0;
  };

  std::uint16_t laneOf(const Tag& tag) const {
    if (tag.channel > -kDirectChannels && tag.channel < kDirectChannels) {
      const std::uint16_t lane =
          near_lanes_[static_cast<std::size_t>(tag.channel + kDirectChannels)];
      return tag.type == TagType::TimeTag ? lane : 0;
    }
    return tag.type == TagType::TimeTag ? farLaneOf(tag.channel) : 0;
  }
  std::uint16_t farLaneOf(channel_t channel) const;
  // Throws DataError naming the first tag that `delay` moved out of the range of times.
  void checkDelayedRange(std::span<const Tag> delayed, timestamp_t delay) const;
  // Reads the inner source's next block into the lanes; false once its stream has ended.
  bool readInner();
  // Merges the lanes' tags before `until` into `staged_`.
  void mergeUntil(timestamp_t until);

  std::unique_ptr<Source> inner_;
  std::vector<InputDelay> delays_;
  std::size_t block_size_;
  std::vector<Lane> lanes_;  // lane 0: delay 0 (unlisted channels and special tags)
  // Channel -> lane for channels of small magnitude, by channel + kDirectChannels; larger
  // ones in `far_lanes_`.
  static constexpr channel_t kDirectChannels = 4096;
  std::vector<std::uint16_t> near_lanes_;
  std::unordered_map<channel_t, std::uint16_t> far_lanes_;
  timestamp_t smallest_delay_ = 0;
  timestamp_t largest_delay_ = 0;
  BlockBuffer inner_block_;
  std::vector<std::uint16_t> lane_of_;  // of each tag of the inner block
  std::vector<Tag*> lane_ends_;         // where readInner() writes each lane's next tag
  std::vector<Tag> delayed_;            // the delayed lanes' ready tags, merged
  std::vector<Tag> merged_;
  bool started_ = false;
  bool inner_ended_ = false;
  timestamp_t position_ = 0;  // where the next block begins
  std::vector<Tag> staged_;   // merged tags before `staged_until_`, from `staged_head_` on
  std::size_t staged_head_ = 0;
  timestamp_t staged_until_ = 0;
};

// `source` with `delays`, or `source` itself when none is listed.
std::unique_ptr<Source> withInputDelays(std::unique_ptr<Source> source,
                                        std::vector<InputDelay> delays);

}  // namespace tagflow
