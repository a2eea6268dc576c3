// FrequencyMultiplier: multiplies the rate of a periodic `input` by `multiplier`, to undo an
// event divider. The output repeats every input tag and, after it, multiplier - 1 tags
// spaced by 1/multiplier of the last input period (the time between the last two inputs),
// assuming the frequency stays constant until the next input. Output lies only ahead of the
// last input, so it never has to reach back into an earlier block; when the next input comes
// early, the predicted tags at or after it are dropped and the new period takes over.
// An overflow or Error forgets the last period (the first input after it is repeated alone).
#pragma once

#include <array>
#include <vector>

#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class FrequencyMultiplier : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

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
  // The fast path compares the next input with an input's repeat and its predictions, at most
  // eight, at once.
  static constexpr std::int64_t kLargestFastMultiplier = 8;
  // Input tags the fast path reads per pass: the chunk and its rows stay in the first-level
  // cache.
  static constexpr std::ptrdiff_t kChunk = 256;
  // What an input owes (its repeat, its period's predictions), ascending, kNever past them, in
  // `Lanes` lanes (4 up to x4, 8 above): as times, compared at once, and as the tags to write,
  // with two more read as the emitted candidates.
  template <std::size_t Lanes>
  struct PredictionRow {
    timestamp_t times[Lanes];
    Tag tags[Lanes + 2];
  };
  // A chunk's rows, their tags given the output's header and the kNever time once.
  template <std::size_t Lanes>
  struct PredictionRows {
    std::vector<PredictionRow<Lanes>> rows;
    std::uint64_t header = 0;
  };

  template <std::int64_t M>
  Tag* transcribeWith(const TagBlock& block, Tag* out);
  template <std::size_t Lanes>
  std::vector<PredictionRow<Lanes>>& preparedRows(PredictionRows<Lanes>& rows) const;
  // At an input at `time`: its period's predictions replace those still owed.
  void predictAfter(timestamp_t time);

  channel_t input_;
  std::int64_t multiplier_;
  std::optional<timestamp_t> last_input_;
  std::vector<timestamp_t> owed_;    // ascending
  std::vector<timestamp_t> inputs_;  // scratch: this run's input times (only grows)
  // The fast path's scratch: a chunk's input times and its rows of predictions.
  std::array<timestamp_t, kChunk> ticks_{};
  PredictionRows<4> rows4_;
  PredictionRows<8> rows8_;
};

}  // namespace tagflow
