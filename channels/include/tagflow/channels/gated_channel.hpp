// GatedChannel: passes the tags of `input` while an edge-triggered gate is open. A tag on
// `gate_start` opens it, one on `gate_stop` closes it; the gate starts (and, after an
// overflow, an Error or clear(), starts again) `initially_open` or closed. A tag that is both
// input and a gate edge is judged by the state before it, then moves the gate (input ==
// gate_stop passes one tag per opening). Missed events of the input while the gate is open are
// passed on with their count.
#pragma once

#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class GatedChannel : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

  GatedChannel(std::string name, channel_t input, channel_t gate_start, channel_t gate_stop,
               bool initially_open = false);

  std::vector<channel_t> inputChannels() const override {
    return {input_, gate_start_, gate_stop_};
  }

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return 2 * block.tags.size() + 1;
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) override;
  void forgetHistory() override { open_ = initially_open_; }

 private:
  channel_t input_;
  channel_t gate_start_;
  channel_t gate_stop_;
  bool initially_open_;
  bool open_;
  std::vector<timestamp_t> candidates_;  // times of candidate tags (only grows)
};

}  // namespace tagflow
