#include "tagflow/channels/frequency_multiplier.hpp"

#include <algorithm>
#include <limits>

#include "tagflow/core/branch_free.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

FrequencyMultiplier::FrequencyMultiplier(std::string name, channel_t input, std::int64_t multiplier)
    : VirtualChannel(
          "FrequencyMultiplier", std::move(name),
          Parameters{{"input_channel", std::int64_t{input}}, {"multiplier", multiplier}}),
      input_(input),
      multiplier_(multiplier) {
  if (input == CHANNEL_UNUSED) {
    throw InvalidArgument("FrequencyMultiplier '" + this->name() + "': input_channel is unused");
  }
  if (multiplier < 1 || multiplier > 1'000'000) {
    throw InvalidArgument("FrequencyMultiplier '" + this->name() + "': multiplier " +
                          std::to_string(multiplier) + " is invalid (valid: 1..1000000)");
  }
}

void FrequencyMultiplier::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  // The input's times first, branch-free; the loop below then only sees input tags.
  if (inputs_.size() < time_tags.size()) inputs_.resize(time_tags.size());
  std::size_t count = 0;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    inputs_[count] = tag.time;
    count += tag.channel == input_ ? 1 : 0;
  }
  for (std::size_t i = 0; i < count; ++i) {
    emitOwed(inputs_[i], emitted);
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, inputs_[i]});
    predictAfter(inputs_[i]);
  }
}

void FrequencyMultiplier::predictAfter(timestamp_t time) {
  // Predictions at or after this input are superseded (overwritten, not cleared and refilled:
  // the vector keeps its size from one period to the next).
  if (!last_input_ || multiplier_ == 1) {
    owed_.clear();
  } else {
    // time + floor(k * period / m), k = 1 .. m - 1, without overflowing k * period and with
    // one division: the fractional parts (rest / m each step) add up in `carried`.
    const timestamp_t period = time - *last_input_;
    const timestamp_t whole = period / multiplier_;
    const timestamp_t rest = period % multiplier_;
    owed_.resize(static_cast<std::size_t>(multiplier_ - 1));
    timestamp_t prediction = time;
    timestamp_t carried = 0;
    for (timestamp_t& owed : owed_) {
      prediction += whole;
      carried += rest;
      if (carried >= multiplier_) {
        carried -= multiplier_;
        ++prediction;
      }
      owed = prediction;
    }
  }
  last_input_ = time;
}

std::size_t FrequencyMultiplier::transcribeRoom(const TagBlock& block) const {
  return multiplier_ <= kLargestFastMultiplier ? kMaxTranscribeRoom * block.tags.size() : 0;
}

// One pass. The owed predictions (at most four) sit in registers: before each input tag, how
// many are due is counted without a branch and that many go out (two stored as candidates, a
// third or fourth with a branch). Only an input of the multiplied channel branches, to repeat
// itself and predict its period. Gives up, with the state as it was, when the output could
// outgrow the room.
Tag* FrequencyMultiplier::transcribe(const TagBlock& block, Tag* out) {
  constexpr timestamp_t kNever = std::numeric_limits<timestamp_t>::max();
  Tag* const room_end = out + transcribeRoom(block);
  const Tag* const end = block.tags.data() + block.tags.size();
  if (out + block.tags.size() + owed_.size() + 3 > room_end) return nullptr;
  owed_before_block_ = owed_;
  const std::optional<timestamp_t> last_before_block = last_input_;
  const channel_t output = outputChannel();
  const std::uint64_t header = timeTagHeader(output);
  const auto input = static_cast<std::uint32_t>(input_);
  // The owed predictions as times (never due past the last) and as tags, with two more past
  // the four so that the candidates read below stay inside.
  timestamp_t owed[4];
  Tag owed_tags[6];
  const auto hold = [&] {
    for (std::size_t i = 0; i < 6; ++i) {
      const timestamp_t time = i < owed_.size() ? owed_[i] : kNever;
      if (i < 4) owed[i] = time;
      owed_tags[i] = Tag{TagType::TimeTag, 0, 0, output, time};
    }
  };
  const auto dueBefore = [&](timestamp_t time) -> std::uint64_t {
    return std::uint64_t{owed[0] < time} + std::uint64_t{owed[1] < time} +
           std::uint64_t{owed[2] < time} + std::uint64_t{owed[3] < time};
  };
  hold();
  std::uint64_t emitted = 0;  // of the owed predictions
  InlineWriter writer(out, output);
  for (const Tag* tag = block.tags.data(); tag != end; ++tag) {
    prefetchAhead(tag);
    const std::uint64_t due = dueBefore(tag->time);
    writer.emitFirst(owed_tags + emitted, due - emitted);
    emitted = due;
    writer.copy(*tag);
    const std::uint64_t repeats = flagIfEqual(static_cast<std::uint32_t>(tag->channel), input);
    writer.generateIf(repeats != 0, header);
    if (repeats == 0) continue;
    // Room for this period's predictions, every later input tag and the candidates.
    if (writer.end() + multiplier_ + (end - tag) + 3 > room_end) [[unlikely]] {
      owed_ = owed_before_block_;
      last_input_ = last_before_block;
      return nullptr;
    }
    predictAfter(tag->time);
    hold();
    emitted = 0;
  }
  const std::uint64_t due = dueBefore(block.end_time);
  writer.emitFirst(owed_tags + emitted, due - emitted);
  owed_.erase(owed_.begin(), owed_.begin() + static_cast<std::ptrdiff_t>(due));
  return writer.finish();
}

void FrequencyMultiplier::emitOwed(timestamp_t until, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  const auto due = std::lower_bound(owed_.begin(), owed_.end(), until);
  for (auto it = owed_.begin(); it != due; ++it) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, *it});
  }
  owed_.erase(owed_.begin(), due);
}

}  // namespace tagflow
