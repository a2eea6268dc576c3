// FrequencyStability: the Allan-deviation family of a clock on `channel`, computed while the
// stream runs. Consecutive groups of `average` edges are averaged into one phase sample (the
// mean of their times); the phase x of a sample is its time minus the ideal time of a clock
// with a reference period. For each step n of `steps` the overlapping ADEV, MDEV, HDEV and the
// standard deviation of n-sample time differences (STDD) are kept as running sums (AllanSums),
// so memory grows with max(steps) and trace_len, never with the length of the stream.
//   tau_n = n * average * T, T = the measured mean period: the summed spans between the first
//   and last sample of every series over the number of edge periods they cover.
//   ADEV scaled = tau / sqrt(3) * ADEV, TDEV = tau / sqrt(3) * MDEV,
//   HDEV scaled = tau / sqrt(10/3) * HDEV (seconds).
// A series of samples restarts (the partial group is dropped, the sums are kept) at the
// capture start (also on resuming after stop()), at an Error, across an overflow interval, and
// when one edge interval differs from the period by more than half of it (a missing or extra
// edge; a series' first 16 edges wait until the median of their intervals gives the check its
// period for that series, and a series that ends with fewer than 5 goes unchecked). An extra
// edge is left out: of
// two edges less than half a period apart, the one without which the other lies nearer one
// period after the edge before them. So that a glitch late in a period, which passes the check
// while the real edge after it fails it, can still be left out, the newest sample waits for a
// later one (or the end of the capture) before it is added: the getters leave it out meanwhile,
// which on a slow clock (1 PPS) is a period. Steps longer than the data seen
// give NaN, and so does everything while no series has reached two samples (no period yet). Traces
// cover the last trace_len samples of the current series: their times, their phase from a
// least-squares line, and the frequency of each sample interval.
//
// Splitting by time (docs/parallel.md): a range starts a series of its own, as a gap does, so
// a split run equals one pass with an Error tag at every cut (the same samples and terms; the
// phases of each range are taken against its own reference period, so sums agree to rounding).
// Against one pass over the unbroken stream it loses, per cut, the terms that span it (up to
// 3 max(steps) samples) and the partial group at the range's end, and the groups after a cut
// begin at its first edge. Partial states (the sums, the spans behind the mean period, the
// trace of the last series) merge in time order, the trace being the later range's.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/measurements/allan_sums.hpp"
#include "tagflow/measurements/channel_times.hpp"

namespace tagflow {

struct FrequencyStabilityData {
  std::vector<double> tau;              // s
  std::vector<double> adev;             // 1
  std::vector<double> mdev;             // 1
  std::vector<double> hdev;             // 1
  std::vector<double> stdd;             // s
  std::vector<double> adev_scaled;      // s
  std::vector<double> tdev;             // s
  std::vector<double> hdev_scaled;      // s
  std::vector<double> trace_index;      // s, stream time of each trace sample
  std::vector<double> trace_phase;      // s, residual from the least-squares line over the trace
  std::vector<double> trace_frequency;  // 1, relative to the trace's mean frequency
  std::vector<double> trace_frequency_absolute;  // Hz, minus the input frequency given
};

class FrequencyStability : public Measurement {
 public:
  static const ParameterSchema& schema();

  FrequencyStability(std::string name, channel_t channel, std::vector<std::int64_t> steps,
                     std::int64_t average = 1000, std::int64_t trace_len = 1000);

  // `input_frequency` (Hz) is subtracted from trace_frequency_absolute; 0 gives the measured
  // frequency of each interval itself.
  FrequencyStabilityData getDataObject(double input_frequency = 0) const;
  std::vector<double> getTau() const { return getDataObject().tau; }
  std::vector<double> getADEV() const { return getDataObject().adev; }
  std::vector<double> getMDEV() const { return getDataObject().mdev; }
  std::vector<double> getHDEV() const { return getDataObject().hdev; }
  std::vector<double> getSTDD() const { return getDataObject().stdd; }
  std::vector<double> getADEVScaled() const { return getDataObject().adev_scaled; }
  std::vector<double> getTDEV() const { return getDataObject().tdev; }
  std::vector<double> getHDEVScaled() const { return getDataObject().hdev_scaled; }
  std::vector<double> getTraceIndex() const { return getDataObject().trace_index; }
  std::vector<double> getTracePhase() const { return getDataObject().trace_phase; }
  std::vector<double> getTraceFrequency() const { return getDataObject().trace_frequency; }
  std::vector<double> getTraceFrequencyAbsolute(double input_frequency = 0) const {
    return getDataObject(input_frequency).trace_frequency_absolute;
  }
  // The measured mean period of one edge, ps; NaN before a series reached two samples.
  double getMeanPeriod() const;
  // Phase samples taken since clear(), over all series.
  std::uint64_t getSampleCount() const;

  std::optional<std::vector<channel_t>> inputChannels() const override {
    return std::vector<channel_t>{channel_};
  }
  std::vector<channel_t> gatheredChannels() const override { return {channel_}; }
  // Consecutive ranges without margins: each range is a series of its own.
  std::optional<SplitSupport> splitSupport() const override { return SplitSupport{}; }

 protected:
  void processTimeTags(std::span<const Tag> tags) override;
  void onCaptureStart(timestamp_t time, bool fresh) override;
  void onOverflowBegin(const Tag& tag) override;
  void onOverflowEnd(const Tag& tag) override;
  void onError(const Tag& tag) override;
  void onCaptureEnd() override;
  void clearData() override;
  void collectResults(ResultSet& out) const override;
  void savePartialState(ResultSet& out) const override;
  void mergePartial(const ResultSet& later) override;

 private:
  __extension__ using Accumulator = unsigned __int128;

  // A sample's time is base + offset, kept apart so that neither loses precision.
  struct SampleTime {
    timestamp_t base = 0;
    double offset = 0;
  };
  struct TracePoint {
    SampleTime time;
    double phase = 0;         // ps
    std::uint64_t index = 0;  // in its series
  };

  // Both add edges from `index` on and return the index of the next edge to add: one edge
  // held back while the first kProbeEdges of a series give the check its period, then runs of
  // edges with the interval check. Each completed group becomes a pending sample.
  std::size_t addProbeEdge(std::span<const timestamp_t> times, std::size_t index);
  std::size_t addCheckedEdges(std::span<const timestamp_t> times, std::size_t index);
  // Adds the held-back edges, checked against the median of their intervals (the period of the
  // check for the rest of the series), once there are kProbeEdges of them; edges after a slip
  // among them stay held for the new series' probe unless `all` (the series or capture ends).
  void addProbedEdges(bool all);
  void addUncheckedEdge(timestamp_t time);
  SampleTime groupSample(timestamp_t base, Accumulator sum) const;
  // Takes the phase of every pending sample, or of all but the newest (re-anchoring where it
  // drifted far), adds the phases to the sums and the traces.
  void takePhases(bool hold_newest = false);
  // Shifts the series to the measured mean period; every phase so far must be in sums_.
  void reanchor();
  void restartSeries(timestamp_t time);
  void endSeries();
  // The summed spans (ps) between the first and last sample of every series, the current one
  // included, and the edge periods they cover: the mean period is their ratio.
  std::pair<double, std::uint64_t> seriesSpans() const;
  double meanPeriodLocked() const;
  FrequencyStabilityData dataLocked(double input_frequency) const;
  std::vector<TracePoint> traceOldestFirst() const;
  void fillTraces(FrequencyStabilityData& data, double input_frequency) const;

  channel_t channel_;
  std::vector<std::int64_t> steps_;
  std::int64_t average_;
  std::size_t trace_len_;
  ChannelTimes times_;
  AllanSums sums_;
  // The samples of a block are made first and then turned into phases, which go to sums_
  // together: each stage runs as one loop over many samples. They are taken before anything
  // else reads or changes the series or sums_. Storage that only grows, pending_count_ in use.
  std::vector<SampleTime> pending_samples_;
  std::size_t pending_count_ = 0;
  std::vector<double> phases_;  // scratch of takePhases()

  // The series being built.
  bool active_ = false;  // false inside an overflow interval
  timestamp_t group_base_ = 0;
  Accumulator group_sum_ = 0;  // sum of (time - group_base_) over the group's edges
  std::int64_t group_size_ = 0;
  timestamp_t last_edge_ = 0;
  bool has_last_edge_ = false;
  timestamp_t before_last_edge_ = 0;  // the series' edge before last_edge_
  bool has_before_last_edge_ = false;
  std::uint64_t series_samples_ = 0;
  SampleTime series_first_;
  SampleTime previous_sample_;
  double previous_phase_ = 0;  // ps

  // The reference period of one edge (ps) that phases are taken against: from the first two
  // samples, replaced by the measured mean period when the phase has drifted far.
  double reference_period_ = 0;
  bool has_reference_ = false;
  // The period the edge intervals are checked against: the median interval of the first edges
  // (probe_edges_, held back until they give it), then the measured mean period at every
  // restart.
  double edge_period_ = 0;
  bool has_edge_period_ = false;
  std::vector<timestamp_t> probe_edges_;

  // Completed series, for the mean period.
  double closed_span_ps_ = 0;
  std::uint64_t closed_periods_ = 0;
  std::uint64_t samples_total_ = 0;
  std::uint64_t restarts_on_slip_ = 0;

  std::vector<TracePoint> trace_;  // ring of the last trace_len + 1 samples of the series
  std::size_t trace_next_ = 0;
  std::size_t trace_count_ = 0;
};

}  // namespace tagflow
