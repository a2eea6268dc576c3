// Combiner: the logical OR of `channels`: one output tag for every input tag, at its time.
// getChannelCounts() tells how many tags each input contributed since the start or clear of
// the counts. Missed events of an input are passed on with their count.
#pragma once

#include <mutex>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class Combiner : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

  Combiner(std::string name, std::vector<channel_t> channels);

  std::vector<channel_t> inputChannels() const override { return index_.channels(); }
  // Each output tag is an input tag at the same time.
  std::optional<timestamp_t> lookBack() const override { return 0; }
  std::vector<std::uint64_t> getChannelCounts() const;  // per input, in the order given
  void clearChannelCounts();

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override {
    return 2 * block.tags.size() + 1;
  }
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) override;
  void forgetHistory() override {}

 private:
  ChannelIndex index_;
  mutable std::mutex counts_mutex_;
  std::vector<std::uint64_t> counts_;    // per slot, plus the discard slot
  std::vector<timestamp_t> candidates_;  // only grows: see GatedChannel
};

}  // namespace tagflow
