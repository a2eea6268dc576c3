// Coincidences: for each group of channels, a tag whenever every channel of the group has
// fired within `window` ps: evaluated at each tag of a group channel, a coincidence needs,
// for every other channel of the group, a tag at most `window` ps before it (earlier in the
// stream). Each group has its own output channel (getChannels(), in group order). The output
// time is the last tag's (Last, the default), the first tag's (First), the mean of the group's
// tags (Average, rounded down) or the tag of the group's first listed channel (ListedFirst).
// At most 64 distinct channels over all groups. An overflow or Error forgets the tags seen.
// Coincidence is the one-group case. setCoincidenceWindow() changes the window from the next
// block on; the tags seen before are judged by the new window.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow {

enum class CoincidenceTimestamp { Last, Average, First, ListedFirst };

// "Last", "Average", "First" or "ListedFirst"; throws InvalidArgument naming the choices.
CoincidenceTimestamp coincidenceTimestampFrom(std::string_view text);
std::string_view toString(CoincidenceTimestamp timestamp);

class Coincidences : public VirtualChannel {
 public:
  static constexpr std::size_t kMaxChannels = 64;

  static const ParameterSchema& schema();

  Coincidences(std::string name, std::vector<std::vector<channel_t>> groups,
               timestamp_t window = 1000,
               CoincidenceTimestamp timestamp = CoincidenceTimestamp::Last);

  std::vector<channel_t> inputChannels() const override { return index_.channels(); }
  // Every tag of a coincidence lies within the window of its stamp: before it (Last), or
  // after it, where the coincidence completes (the other stamps).
  std::optional<timestamp_t> lookBack() const override { return getCoincidenceWindow(); }
  timestamp_t lookAhead() const override {
    return timestamp_ == CoincidenceTimestamp::Last ? 0 : getCoincidenceWindow();
  }

  // Any thread; InvalidArgument naming the value and the valid range.
  void setCoincidenceWindow(timestamp_t window);
  // The window last set: in force from the next block on.
  timestamp_t getCoincidenceWindow() const {
    return requested_window_.load(std::memory_order_acquire);
  }
  LiveSettings liveSettings() const override {
    return {{"coincidence_window", getCoincidenceWindow()}};
  }
  void setLiveSetting(const std::string& key, std::int64_t value) override;

 protected:
  Coincidences(const ParameterSchema& schema, std::string name,
               std::vector<std::vector<channel_t>> groups, timestamp_t window,
               CoincidenceTimestamp timestamp);

  std::size_t transcribeRoom(const TagBlock& block) const override;
  Tag* transcribe(const TagBlock& block, Tag* out) override;
  void consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) override;
  void applySettings() override;
  void forgetHistory() override;

 private:
  struct Group {
    std::vector<std::uint32_t> slots;  // the first is the first listed channel
    channel_t output_index = 0;
  };

  timestamp_t stamp(const Group& group, timestamp_t now) const;
  template <std::size_t kGroupsPerSlot>
  Tag* transcribePairs(const TagBlock& block, Tag* out);
  // Records a tag of `slot` at `time` and evaluates the groups it belongs to: calls
  // found(group index, output time) for each one it completes, in group order.
  template <class Found>
  void registerTag(std::uint32_t slot, timestamp_t time, Found found);

  std::atomic<timestamp_t> requested_window_;
  timestamp_t window_;  // in force
  CoincidenceTimestamp timestamp_;
  ChannelIndex index_;
  std::vector<Group> groups_;
  std::vector<std::vector<std::uint32_t>> groups_of_slot_;  // per slot, the groups using it
  // Per slot, then the discard slot and one never written (a partner never seen).
  std::vector<timestamp_t> last_;
  std::vector<SelectedTag> selected_;  // scratch, only grows
  // Groups of two channels only, stamped Last: per slot, its partner in each of its groups
  // (padded to groups_per_slot_), for transcribePairs().
  // Laid out as a tag template (TagRegister): the header first, the rest replaced by a time.
  struct Partner {
    std::uint64_t header;  // of a tag on the group's output channel, set at each block
    std::uint32_t slot;
    channel_t output;  // group index
  };
  std::vector<Partner> partners_;
  std::size_t groups_per_slot_ = 0;
  std::vector<Tag> found_;                      // scratch of transcribe(): coincidences of one tag
  std::vector<timestamp_t> last_before_block_;  // what transcribe() restores when it gives up
};

class Coincidence : public Coincidences {
 public:
  static const ParameterSchema& schema();

  Coincidence(std::string name, std::vector<channel_t> channels, timestamp_t window = 1000,
              CoincidenceTimestamp timestamp = CoincidenceTimestamp::Last);
};

}  // namespace tagflow
