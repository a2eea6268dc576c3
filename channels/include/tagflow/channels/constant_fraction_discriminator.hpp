// ConstantFractionDiscriminator: for each listed rising-edge channel c (> 0), pairs a rising
// edge with the next falling edge of the same input (channel -c) and emits their mean time
// (rounded down) on the output channel of c (getChannels(), in the order given). A pulse is
// skipped when the falling edge comes more than `search_window` ps after the rising one, or
// when a second rising edge comes first. Both edges must be in the stream. A mean time before
// the start of the block in which the pulse ends is placed at that block's start (the pulse
// straddles the boundary; the shift is below search_window / 2).
#pragma once

#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class ConstantFractionDiscriminator : public VirtualChannel {
 public:
  ConstantFractionDiscriminator(std::string name, std::vector<channel_t> channels,
                                timestamp_t search_window);

  std::vector<channel_t> inputChannels() const override;

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return 2 * block.tags.size() + 2;
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void forgetHistory() override;

 private:
  struct Pulse {
    timestamp_t start = 0;
    std::uint64_t open = 0;  // 1 while a rising edge waits for its falling edge
  };

  struct Edge {
    std::uint32_t input;  // index in channels_ (channels_.size() for other channels)
    std::uint64_t rising;
    std::uint64_t falling;
  };

  // Reads one selected edge; true when it ends a pulse within the search window, whose mean
  // time is then in `mean`.
  bool endsPulse(std::uint32_t slot, timestamp_t time, timestamp_t& mean);
  template <class EdgeOf, class PulseOf>
  Tag* transcribeWith(const TagBlock& block, Tag* out, EdgeOf edge_of, PulseOf pulse_of);

  std::vector<channel_t> channels_;
  timestamp_t search_window_;
  ChannelIndex edges_;         // slot 2i: rising edge of channels_[i], 2i + 1: its falling edge
  std::vector<Pulse> pulses_;  // per channel, and one never opened for the discard slot
  std::vector<SelectedTag> selected_;  // only grows
};

}  // namespace tagflow
