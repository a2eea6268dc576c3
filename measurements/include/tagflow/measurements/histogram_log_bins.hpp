// HistogramLogBins: for every start event, every later click event with tau = t_click - t_start
// inside [10^exp_start s, 10^exp_stop s) counts in one of n_bins logarithmically spaced bins.
// Bin edges are whole ps (10^(exp_start + i * step) s rounded to the nearest ps); bins that
// rounding left 0 ps wide are removed, so there may be fewer bins than asked for. tau on an
// edge belongs to the bin on its right. Optional gates: a click (start) counts only while its
// gate is open; a gate opens on its open channel and closes on its close channel, and an event
// on a gate channel is judged with the gate's state before that event.
//
// Exposure: after the capture starts, after an overflow and after an Error, clicks count only
// once one full span (10^exp_stop s) has passed, so every bin has seen the same exposure.
// The accumulation times are the capture times after that warm-up, with the start (click) gate
// open. g2 = T_start / (binwidth_i * N_start * N_click) * counts_i, with N the starts (clicks)
// counted during accumulation: the usual normalisation without gates; with a start gate it
// assumes the gate is open as often before a click as on average.
//
// Bin look-up does not search the edges (LogBinLookup): one compare up to about 5600 bins
// per octave, a short walk beyond. The block's pairs are written out and then counted in one
// pass.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/measurements/log_bin_lookup.hpp"
#include "tagflow/measurements/time_window.hpp"

namespace tagflow {

struct ChannelGate {
  channel_t open_channel = CHANNEL_UNUSED;
  channel_t close_channel = CHANNEL_UNUSED;
  bool initially_open = false;
};

// Everything a HistogramLogBins reports, taken at one moment (the getters one by one may see
// different blocks while the graph runs).
struct HistogramLogBinsData {
  std::vector<std::int64_t> bin_edges;  // ps, bins + 1
  std::vector<std::uint64_t> counts;
  // g2 = counts * g2_normalization, with g2_normalization = accumulation_time_start /
  // (bin width * n_start * n_click); NaN while nothing is accumulated.
  std::vector<double> g2;
  std::vector<double> g2_normalization;
  timestamp_t accumulation_time_start = 0;  // ps
  timestamp_t accumulation_time_click = 0;  // ps
  std::uint64_t n_start = 0;                // starts counted during accumulation
  std::uint64_t n_click = 0;                // clicks counted during accumulation
};

class HistogramLogBins : public Measurement {
 public:
  static const ParameterSchema& schema();

  HistogramLogBins(std::string name, channel_t click_channel, channel_t start_channel,
                   double exp_start, double exp_stop, std::int64_t n_bins,
                   std::optional<ChannelGate> click_gate = std::nullopt,
                   std::optional<ChannelGate> start_gate = std::nullopt);

  const std::vector<std::int64_t>& getBinEdges() const { return edges_; }  // ps, bins + 1
  std::vector<std::uint64_t> getData() const;
  std::vector<double> getDataNormalizedCountsPerPs() const;
  std::vector<double> getDataNormalizedG2() const;
  timestamp_t getAccumulationTimeStart() const;
  timestamp_t getAccumulationTimeClick() const;
  HistogramLogBinsData getDataObject() const;

  std::optional<std::vector<channel_t>> inputChannels() const override;
  std::vector<channel_t> gatheredChannels() const override;
  // A shard reads one span (the last edge) before its range: every start a click of the range
  // pairs with. A gate's state at a range's start depends on the whole past: a later range of a
  // gated histogram follows every combination of the gates' states at its capture start (one
  // span before the range) at once, each a copy of the histogram, until the copies agree (gates
  // and starts alike) and fold into one. Its partial state holds each combination's counts and
  // the gates' states one span before the range's end, where the next range's capture starts;
  // the merge, in time order, takes the combination that matches them.
  std::optional<SplitSupport> splitSupport() const override;

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void advanceTime(timestamp_t time) override;
  void onCaptureStart(timestamp_t time, bool fresh) override;
  void onOverflowBegin(const Tag& tag) override;
  void onOverflowEnd(const Tag& tag) override;
  void onError(const Tag& tag) override;
  void clearData() override;
  void collectResults(ResultSet& out) const override;
  void processLeadIn(std::span<const Tag> tags) override;
  void savePartialState(ResultSet& out) const override;
  void mergePartial(const ResultSet& later) override;

 private:
  struct GateState {
    std::optional<ChannelGate> gate;
    bool open = true;
    void reset() { open = gate ? gate->initially_open : true; }
    void update(channel_t channel) {
      if (!gate) return;
      if (channel == gate->open_channel) open = true;
      if (channel == gate->close_channel) open = false;
    }
  };

  void restartExposure(timestamp_t from);
  void accrue(timestamp_t time);
  void handleClick(timestamp_t time);
  // Counts the pairs of `clicks` (time-ordered, all to be counted) with the starts in the
  // window.
  void pairClicks(std::span<const timestamp_t> clicks);
  void processGated(std::span<const Tag> tags);
  void dropUnreachableStarts(std::span<const Tag> tags);

  // A combination of the gates' states at a later range's start that this histogram does not
  // follow itself: a copy that does, or, once the copy agreed with this one, what its sums
  // differ by.
  using GateStates = std::array<bool, 2>;  // click gate open, start gate open
  struct Alternative {
    GateStates assumed{true, true};
    std::unique_ptr<HistogramLogBins> copy;  // null once folded
    std::vector<std::int64_t> count_offsets;
    std::array<std::int64_t, 4> sum_offsets{};
    std::optional<GateStates> snapshot;  // the copy's, when it took one before it folded
  };
  void followAlternatives();
  // Calls `hook` on every copy still following its combination.
  template <class Hook>
  void forEachCopy(Hook hook) {
    for (Alternative& alternative : alternatives_) {
      if (alternative.copy) hook(*alternative.copy);
    }
  }
  void foldAgreeingAlternatives();
  std::array<std::int64_t, 4> sums() const;
  GateStates gateStates() const { return {click_gate_.open, start_gate_.open}; }
  // Keeps the gates' states at snapshot_at_ once the stream has reached it.
  void takeGateSnapshot(timestamp_t time) {
    if (time >= snapshot_at_ && !gates_at_snapshot_) gates_at_snapshot_ = gateStates();
  }
  GateStates gatesForNextRange() const { return gates_at_snapshot_.value_or(gateStates()); }
  std::vector<double> densityLocked() const;
  // T_start / (N_start * N_click); NaN while nothing is accumulated.
  double g2ScaleLocked() const;
  std::vector<double> g2Locked() const;
  std::vector<double> g2NormalizationLocked() const;

  channel_t click_channel_;
  channel_t start_channel_;
  std::vector<std::int64_t> edges_;
  timestamp_t span_ = 0;  // the last edge
  LogBinLookup lookup_;

  std::vector<std::uint64_t> counts_;
  TwinCounts<std::uint64_t> twin_counts_;
  TimeWindow starts_;
  TimeWindow clicks_;  // this block's clicks (ungated: paired after the split)
  std::vector<timestamp_t> words_ = std::vector<timestamp_t>(8192);  // pairs waiting to be counted
  GateState click_gate_;
  GateState start_gate_;
  timestamp_t accumulate_from_ = 0;
  timestamp_t last_time_ = 0;
  timestamp_t accumulation_start_ = 0;
  timestamp_t accumulation_click_ = 0;
  std::uint64_t n_start_ = 0;
  std::uint64_t n_click_ = 0;
  // Gated and split: the gates' states this histogram assumed at its capture start, the other
  // combinations (a later range), and the states where the next range's capture starts.
  GateStates assumed_{true, true};
  std::vector<Alternative> alternatives_;
  timestamp_t snapshot_at_ = std::numeric_limits<timestamp_t>::max();
  std::optional<GateStates> gates_at_snapshot_;
};

}  // namespace tagflow
