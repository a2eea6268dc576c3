// Correlation: the histogram of time differences tau = t(channel_1) - t(channel_2) over
// every pair of events within the window (multi-start, multi-stop, both signs), in n_bins
// bins of binwidth centred on zero; channel_2 = CHANNEL_UNUSED (or channel_1) correlates a
// channel with itself. Bin i holds tau in [lo + i*binwidth, lo + (i+1)*binwidth) with
// lo = -floor(n_bins*binwidth/2), so for odd n_bins the middle bin is centred on 0 and for
// even n_bins 0 is the left edge of bin n_bins/2. In an auto-correlation a tag is never paired
// with itself. Pairs never span an overflow interval or an Error; events inside overflow
// intervals are ignored, and so is that time in the normalisation:
//   g2(tau) = T / (binwidth * N1 * N2) * counts(tau),  T = capture time outside overflows.
// Cost per tag grows with the number of partner events inside the window only.
//
// A channel_1 event at t pairs with channel_2 events up to t - lo, which may lie in a later
// block: it is counted once stream time has passed t - lo (at the latest when the capture
// ends), so a snapshot taken while running lags the stream by at most half the window.
#pragma once

#include <cstdint>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/measurements/count_batch.hpp"
#include "tagflow/measurements/exact_divider.hpp"
#include "tagflow/measurements/time_window.hpp"
#include "tagflow/measurements/twin_counts.hpp"

namespace tagflow {

class Correlation : public Measurement {
 public:
  static const ParameterSchema& schema();

  Correlation(std::string name, channel_t channel_1, channel_t channel_2 = CHANNEL_UNUSED,
              timestamp_t binwidth = 1000, std::int64_t n_bins = 1000);

  std::vector<std::int64_t> getData() const;
  std::vector<std::int64_t> getIndex() const;  // bin centres (rounded down), ps
  std::vector<double> getDataNormalized() const;
  // Events counted on channel_1 and channel_2 (the same number for an auto-correlation).
  std::pair<std::uint64_t, std::uint64_t> getEventCounts() const;

  std::optional<std::vector<channel_t>> inputChannels() const override {
    return std::vector<channel_t>{channel_1_, channel_2_};
  }
  std::vector<channel_t> gatheredChannels() const override {
    if (auto_correlation_) return {channel_1_};
    return {channel_1_, channel_2_};
  }
  // A pair belongs to the range of its channel_1 event; its partner may lie up to the window's
  // upper edge before the range or its lower edge after it.
  std::optional<SplitSupport> splitSupport() const override {
    return SplitSupport{.before = highest_, .after = -lowest_, .any_order = true};
  }

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void advanceTime(timestamp_t time) override;
  void onCaptureStart(timestamp_t time, bool fresh) override;
  void onCaptureEnd() override;
  void onOverflowBegin(const Tag& tag) override;
  void onOverflowEnd(const Tag& tag) override;
  void onError(const Tag& tag) override;
  void clearData() override;
  void collectResults(ResultSet& out) const override;
  void processLeadIn(std::span<const Tag> tags) override;
  void processLeadOut(std::span<const Tag> tags) override;
  void savePartialState(ResultSet& out) const override;
  void mergePartial(const ResultSet& later) override;

 private:
  // The bin of a tau in [lowest, lowest + n_bins * binwidth); a value, so that a loop over
  // pairs keeps it in registers (a member would be reloaded after every count it stores).
  struct LinearBins {
    timestamp_t lowest = 0;
    ExactDivider offset_over_binwidth;
    std::size_t operator()(timestamp_t tau) const {
      return static_cast<std::size_t>(
          offset_over_binwidth(static_cast<std::uint64_t>(tau - lowest)));
    }
  };
  // Adds the chunk's events of the two channels to the windows.
  void splitChunk(std::span<const Tag> tags);
  // processTimeTags() from the block's shared times of the two channels: the same chunks,
  // each taking its channels' times up to its last tag's time.
  void pairShared(std::span<const Tag> tags, std::span<const timestamp_t> times_1,
                  std::span<const timestamp_t> times_2, std::size_t chunk_tags);
  // Counts the pairs of every held-back channel_1 event earlier than `limit`.
  void pairUpTo(timestamp_t limit);
  // `count(taus)` counts a batch of pairs: through twin_counts_, or batch_ for a large
  // histogram.
  template <class Count>
  void pairCrossUpTo(timestamp_t limit, Count count);
  template <class Count>
  void pairAutoUpTo(timestamp_t limit, Count count);
  // Pairs every one of the sorted `events` with the sorted `partners` inside its window and
  // counts the pairs; returns how many partners lie before the last event's window.
  template <class Count>
  std::size_t pairEvents(std::span<const timestamp_t> events, std::span<const timestamp_t> partners,
                         Count count);
  void forgetEvents();
  // Keeps the channel_2 events of a margin as partners, never as counted events or anchors.
  void keepPartners(std::span<const Tag> tags);
  std::vector<double> normalizedLocked() const;

  channel_t channel_1_;
  channel_t channel_2_;
  bool auto_correlation_;
  timestamp_t binwidth_;
  std::size_t n_bins_;
  timestamp_t lowest_;   // lo: left edge of bin 0
  timestamp_t highest_;  // lo + n_bins * binwidth: first tau past the last bin
  LinearBins bin_of_;

  std::vector<std::int64_t> counts_;
  TwinCounts<std::int64_t> twin_counts_;
  CountBatch batch_;
  TimeWindow pending_1_;  // channel_1 events not yet paired (cross-correlation)
  TimeWindow window_2_;   // channel_2 events still inside the window of a pending event
  TimeWindow events_;     // auto-correlation: recent events; those before cursor_ are paired
  std::vector<timestamp_t> taus_ = std::vector<timestamp_t>(8192);  // pairs waiting to be counted
  std::size_t cursor_ = 0;
  std::uint64_t events_1_ = 0;
  std::uint64_t events_2_ = 0;
  timestamp_t overflow_time_ = 0;  // capture time spent inside overflow intervals
  timestamp_t last_time_ = 0;
};

}  // namespace tagflow
