// ConstantFractionDiscriminator: for each listed rising-edge channel c (> 0), pairs a rising
// edge with the next falling edge of the same input (channel -c) and emits their mean time
// (rounded down) on the output channel of c (getChannels(), in the order given). A pulse is
// skipped when the falling edge comes more than `search_window` ps after the rising one, or
// when a second rising edge comes first. Both edges must be in the stream. A mean time before
// the start of the block in which the pulse ends is placed at that block's start (the pulse
// straddles the boundary; the shift is below search_window / 2).
#pragma once

#include <limits>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class ConstantFractionDiscriminator : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

  ConstantFractionDiscriminator(std::string name, std::vector<channel_t> channels,
                                timestamp_t search_window);

  std::vector<channel_t> inputChannels() const override;
  // A pulse's mean lies at most half the search window after its rising edge and before its
  // falling edge; the whole window on either side keeps the argument free of rounding.
  std::optional<timestamp_t> lookBack() const override { return search_window_; }
  timestamp_t lookAhead() const override { return search_window_; }

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return 2 * block.tags.size() + 2;
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void forgetHistory() override;

 private:
  // The start of a pulse when none is open: so far in the past that no falling edge is within
  // the search window of it (short of a stream within search_window of the smallest time).
  static constexpr timestamp_t kClosed = std::numeric_limits<timestamp_t>::min();

  // Reads one selected edge; true when it ends a pulse within the search window, whose mean
  // time is then in `mean`.
  bool endsPulse(std::uint32_t slot, timestamp_t time, timestamp_t& mean);
  template <class Edges>
  Tag* transcribeWith(const TagBlock& block, Tag* out, Edges& edges);

  std::vector<channel_t> channels_;
  timestamp_t search_window_;
  ChannelIndex edges_;  // slot 2i: rising edge of channels_[i], 2i + 1: its falling edge
  // Per channel, the time of the rising edge of its open pulse or kClosed; and one never opened
  // for the discard slot.
  std::vector<timestamp_t> starts_;
  std::vector<SelectedTag> selected_;  // only grows
};

}  // namespace tagflow
