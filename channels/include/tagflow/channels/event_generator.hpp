// EventGenerator: after every `trigger_divider`-th tag on `trigger` (the ones whose count
// from the start, modulo the divider, equals `divider_offset`), emits `pattern`: tags at the
// trigger time plus each offset (ps, >= 0). Patterns of successive triggers may overlap. A tag
// on `stop_channel` aborts every pending pattern tag after it; with stop == trigger a new
// trigger first aborts the old pattern, so patterns never overlap. Pending tags that fall
// inside an overflow become MissedEvents; an overflow also restarts the divider count.
#pragma once

#include <vector>

#include "tagflow/channels/owed_times.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

class EventGenerator : public VirtualChannel {
 public:
  static const ParameterSchema& schema();

  EventGenerator(std::string name, channel_t trigger, std::vector<timestamp_t> pattern,
                 std::int64_t trigger_divider = 1, std::int64_t divider_offset = 0,
                 channel_t stop_channel = CHANNEL_UNUSED);

  std::vector<channel_t> inputChannels() const override;
  // The pattern's last offset; nullopt with a divider above 1, whose count runs from the start.
  std::optional<timestamp_t> lookBack() const override;

 protected:
  std::size_t transcribeRoom(const TagBlock& block) const override;
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void emitOwed(timestamp_t until, std::vector<Tag>& emitted) override;
  void forgetHistory() override { phase_ = 0; }
  void dropOwed() override { owed_.clear(); }

 private:
  channel_t trigger_;
  std::vector<timestamp_t> pattern_;  // ascending
  std::int64_t divider_;
  std::int64_t offset_;
  channel_t stop_;
  void startPattern(timestamp_t trigger_time);

  std::uint64_t phase_ = 0;  // triggers since the start, modulo the divider
  OwedTimes owed_;
};

}  // namespace tagflow
