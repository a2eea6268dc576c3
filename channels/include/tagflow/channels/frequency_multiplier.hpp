// FrequencyMultiplier: multiplies the rate of a periodic `input` by `multiplier`, to undo an
// event divider. The output repeats every input tag and, after it, multiplier - 1 tags
// spaced by 1/multiplier of the last input period (the time between the last two inputs),
// assuming the frequency stays constant until the next input. Output lies only ahead of the
// last input, so it never has to reach back into an earlier block; when the next input comes
// early, the predicted tags at or after it are dropped and the new period takes over.
// An overflow or Error forgets the last period (the first input after it is repeated alone).
#pragma once

#include <vector>

#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class FrequencyMultiplier : public VirtualChannel {
 public:
  FrequencyMultiplier(std::string name, channel_t input, std::int64_t multiplier);

  std::vector<channel_t> inputChannels() const override { return {input_}; }
  std::int64_t multiplier() const { return multiplier_; }

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override;
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void emitOwed(timestamp_t until, std::vector<Tag>& emitted) override;
  void forgetHistory() override { last_input_.reset(); }
  void dropOwed() override { owed_.clear(); }

 private:
  // The one-pass path holds the predictions of a period in four registers.
  static constexpr std::int64_t kLargestFastMultiplier = 5;

  // At an input at `time`: its period's predictions replace those still owed.
  void predictAfter(timestamp_t time);

  channel_t input_;
  std::int64_t multiplier_;
  std::optional<timestamp_t> last_input_;
  std::vector<timestamp_t> owed_;               // ascending
  std::vector<timestamp_t> owed_before_block_;  // what transcribe() restores when it gives up
  std::vector<timestamp_t> inputs_;             // scratch: this run's input times (only grows)
};

}  // namespace tagflow
