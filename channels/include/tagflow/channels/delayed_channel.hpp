// DelayedChannel: a copy of `input` shifted later by `delay` ps (>= 0; to move a channel
// earlier, delay the others). Copies owed beyond the current block are kept and emitted in
// the block they fall in. Missed events of the input are passed on at once, with their count,
// so the loss stays visible inside the same overflow interval.
#pragma once

#include <vector>

#include "tagflow/channels/owed_times.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class DelayedChannel : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

  DelayedChannel(std::string name, channel_t input, timestamp_t delay);

  std::vector<channel_t> inputChannels() const override { return {input_}; }
  // An output tag is the input tag `delay` earlier.
  std::optional<timestamp_t> lookBack() const override { return delay_; }
  timestamp_t delay() const { return delay_; }

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return owed_.size() + 2 * block.tags.size();
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void emitOwed(timestamp_t until, std::vector<Tag>& emitted) override;
  void onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) override;
  void forgetHistory() override {}
  void dropOwed() override;

 private:
  channel_t input_;
  timestamp_t delay_;
  OwedTimes owed_;
};

}  // namespace tagflow
