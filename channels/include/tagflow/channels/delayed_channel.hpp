// DelayedChannel: a copy of `input` shifted later by `delay` ps (>= 0; to move a channel
// earlier, delay the others). Copies owed beyond the current block are kept and emitted in
// the block they fall in. Missed events of the input are passed on at once, with their count,
// so the loss stays visible inside the same overflow interval.
//
// setDelay() changes the delay from the next block on, as the knob of an alignment does while
// the stream runs. Copies already owed keep the delay they were made with; after a shorter
// delay they wait in a queue of their own, emitted in time order with the new copies, so none
// is lost or out of order.
#pragma once

#include <atomic>
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
  std::optional<timestamp_t> lookBack() const override { return getDelay(); }

  // Any thread; InvalidArgument naming the value and the valid range.
  void setDelay(timestamp_t delay);
  // The delay last set: in force from the next block on.
  timestamp_t getDelay() const { return requested_delay_.load(std::memory_order_acquire); }
  LiveSettings liveSettings() const override { return {{"delay", getDelay()}}; }
  void setLiveSetting(const std::string& key, std::int64_t value) override;

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return earlier_.empty() ? owed_.size() + 2 * block.tags.size() : 0;
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void emitOwed(timestamp_t until, std::vector<Tag>& emitted) override;
  void onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) override;
  void applySettings() override;
  void forgetHistory() override {}
  void dropOwed() override;

 private:
  channel_t input_;
  std::atomic<timestamp_t> requested_delay_;
  timestamp_t delay_;  // in force
  OwedTimes owed_;
  // The copies owed when the delay last fell, which new copies may precede: while any is left,
  // the general path emits both queues (the base class puts them in time order).
  OwedTimes earlier_;
};

}  // namespace tagflow
