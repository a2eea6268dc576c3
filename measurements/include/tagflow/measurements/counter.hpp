// Counter: counts the tags of each channel in consecutive bins of `binwidth` ps and keeps the
// last `n_values` completed bins per channel in a circular buffer. Bin 0 starts where the
// capture starts (construction or clear()); a bin is published once stream time has passed
// its end, so empty stretches of the stream yield zero-count bins. A bin touched by an
// overflow interval is flagged: its normalised value is NaN. Total counts include the bin
// still integrating and the MissedEvents counts of overflow intervals. Time during which the
// counter is stopped is skipped: bins integrate capture time. getDataObject(true) hands each
// completed bin out once, for polling without gaps or repeats.
//
// Split into consecutive ranges (ShardPlan), a shard bins on the grid of one pass: bins start
// at the plan's origin (the capture start of the whole stream) plus multiples of binwidth, so
// the bin holding the range's begin is partial in this shard and in the one before. States
// merge in time order: the seam bin's counts add, its overflow flags OR (the earlier part's
// only if it covered some of the bin), the ring keeps the last n_values bins of both, totals
// and completed bins add.
#pragma once

#include <cstdint>
#include <vector>

#include "tagflow/core/channel_index.hpp"
#include "tagflow/core/measurement.hpp"
#include "tagflow/measurements/exact_divider.hpp"

namespace tagflow {

// Bins taken from a Counter by getDataObject(): those completed since the last removal that
// the buffer still holds, oldest first.
struct CounterData {
  std::vector<channel_t> channels;
  timestamp_t binwidth = 0;
  std::size_t size = 0;            // bins returned
  std::uint64_t first_bin = 0;     // the first one's number; the capture's first bin is 0
  std::uint64_t dropped_bins = 0;  // completed since the last removal, overwritten before it
  bool overflow = false;           // a returned bin was touched by an overflow interval
  std::vector<std::int64_t> data;  // [channel][size] counts
  std::vector<std::int8_t> overflow_mask;   // [size]
  std::vector<timestamp_t> time;            // [size] stream time at which each bin began, ps
  std::vector<std::uint64_t> total_counts;  // per channel: completed bins and missed events

  // Counts per second; NaN for bins touched by an overflow.
  std::vector<double> dataNormalized() const;
  // (first_bin + i) * binwidth: each bin's start in capture time (pauses left out), ps.
  std::vector<std::int64_t> index() const;
};

class Counter : public Measurement {
 public:
  static const ParameterSchema& schema();

  Counter(std::string name, std::vector<channel_t> channels, timestamp_t binwidth = 1'000'000'000,
          std::int64_t n_values = 1);

  // [channel][n_values] counts of completed bins. rolling: newest last, unfilled bins (zero)
  // at the front; otherwise in buffer order, the write position wrapping to 0.
  std::vector<std::int64_t> getData(bool rolling = true) const;
  // Counts per second; NaN for unfilled bins and bins touched by an overflow.
  std::vector<double> getDataNormalized(bool rolling = true) const;
  // 1 where the bin was touched by an overflow interval; same order as getData().
  std::vector<std::int8_t> getOverflowMask(bool rolling = true) const;
  // i * binwidth, ps.
  std::vector<std::int64_t> getIndex() const;
  // Per channel, since the last clear(), including the integrating bin and missed events.
  std::vector<std::uint64_t> getDataTotalCounts() const;
  // Completed bins since the last clear() (may exceed n_values).
  std::uint64_t getBinsCompleted() const;
  // The completed bins not removed before (at most n_values); `remove` removes them, so that
  // polling with it returns every bin once, and counts in dropped_bins those overwritten
  // between two polls.
  CounterData getDataObject(bool remove = false);

  std::optional<std::vector<channel_t>> inputChannels() const override { return channels(); }
  const std::vector<channel_t>& channels() const { return index_.channels(); }
  timestamp_t binwidth() const { return binwidth_; }
  std::size_t nValues() const { return n_values_; }
  // No margins (a bin holds the tags of its own time only); ranges merge in time order.
  std::optional<SplitSupport> splitSupport() const override { return SplitSupport{}; }

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void advanceTime(timestamp_t time) override;
  void onCaptureStart(timestamp_t time, bool fresh) override;
  void onOverflowBegin(const Tag& tag) override;
  void onOverflowEnd(const Tag& tag) override;
  void onMissedEvents(const Tag& tag) override;
  void clearData() override;
  void collectResults(ResultSet& out) const override;
  void savePartialState(ResultSet& out) const override;
  void mergePartial(const ResultSet& later) override;

 private:
  // Bins of up to some thousand tags: tag by tag, a bin completed as soon as a tag lies past it.
  void countTagByTag(std::span<const Tag> tags);
  void completeBinsBefore(timestamp_t time);
  // Resuming after a pause of `pause` ps: the bins that begin after it begin that much later.
  void notePause(timestamp_t pause);
  void completeCurrentBin();
  std::vector<std::int64_t> dataLocked(bool rolling) const;
  std::vector<double> normalizedLocked(bool rolling) const;
  std::vector<std::int8_t> overflowMaskLocked(bool rolling) const;
  std::vector<std::uint64_t> totalsLocked() const;
  // The completed bin that output column `column` shows (rolling or not), or kNoBin.
  std::uint64_t binAt(std::size_t column, bool rolling) const;
  // The slot holding that bin, or -1 where none does (not filled, or an empty bin never
  // written: zero counts, no overflow).
  std::int64_t bufferPosition(std::size_t column, bool rolling) const;

  static constexpr std::uint64_t kNoBin = ~std::uint64_t{0};

  ChannelIndex index_;
  timestamp_t binwidth_;
  ExactDivider bins_in_;  // a stretch of time over binwidth_: the bins it covers
  std::size_t n_values_;

  std::vector<std::uint64_t> current_;      // per slot, plus the discard slot
  std::vector<std::int64_t> buffer_;        // [n_values][channel]: a bin's counts together
  std::vector<std::int8_t> overflow_;       // [n_values]
  std::vector<std::uint64_t> bin_of_slot_;  // [n_values]: the bin a slot holds, or kNoBin
  std::vector<std::uint64_t> totals_;       // completed bins plus missed events, per channel
  std::uint64_t bins_completed_ = 0;
  std::size_t write_position_ = 0;  // bins_completed_ % n_values, kept without dividing
  timestamp_t bin_end_ = 0;
  timestamp_t last_time_ = 0;
  bool current_overflow_ = false;
  // A capture began since construction or clear() (or a merge brought one): the bin grid is set.
  bool started_ = false;
  timestamp_t capture_start_ = 0;    // where this state's capture began
  timestamp_t first_bin_start_ = 0;  // where bin 0 of this state begins
  // Bin k began at first_bin_start_ + k * binwidth_ plus the pauses before it: per resumption,
  // the first bin that began after it and the pauses' total so far (entries older than the
  // buffer are dropped).
  struct PauseShift {
    std::uint64_t first_bin;
    timestamp_t paused;
  };
  std::vector<PauseShift> pause_shifts_;
  std::uint64_t removed_until_ = 0;  // bins before it were removed by getDataObject(true)
};

}  // namespace tagflow
