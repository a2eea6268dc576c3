// PhaseNoise: the single-sideband phase noise L(f) of one or more clocks, computed while the
// stream runs. Every edge of a clock is one phase sample x = its time minus the time a clock
// of the reference period would have (ps); the carrier f0 = 1 / measured mean period. The
// phase samples of each clock feed an OctaveWelch spectrum (octave-decimated Welch estimates,
// linear detrend, Hann window, 50 % overlap) of samples_per_octave points per octave, from
// f0/2 downwards. The one-sided PSD S_x of x gives S_phi = (2 pi f0)^2 S_x (rad^2/Hz) and
//   L(f) = S_phi(f) / 2  (dBc/Hz), so white phase noise of sigma_t has L = (2 pi f0 sigma_t)^2 /
//   f0,
// and a phase modulation of index beta at f_m shows a spur of total power (beta / 2)^2,
// 20 log10(beta / 2) dBc, summed over the bins it covers. Integrated jitter over [lower, upper]:
//   sigma_t = sqrt(2 * sum L(f_b) * (the part of bin b inside the band)) / (2 pi f0).
// All clocks share one pass over each block. The reference period comes from the first 1024
// edges of the first series (held back until then) and afterwards from the measured mean
// period. A series restarts (partial segments dropped, spectra kept) at the capture start, at
// an Error, across an overflow interval, and when an edge interval differs from the
// reference period by more than half of it: a missing edge (the edge after the gap begins the
// new series) or an extra one, which is left out and the edge after it begins the new series.
// Of two edges less than half a period apart, the extra one is the one without which the other
// lies nearer one period after the edge before them: a glitch late in a period passes the check
// and the real edge after it fails it, so the newest sample is held back from the spectrum
// until a later one comes (or the capture ends).
//
// Splitting by time (docs/parallel.md): a range starts series of its own, as a gap does, so a
// split run equals one pass with an Error tag at every cut (the same segments; each range takes
// its phases against its own reference period, which the linear detrend removes, so spectra
// agree to rounding). Against one pass over the unbroken stream, the segments of every octave
// that would span a cut are lost and those after it begin at the cut: about one segment per
// octave per cut fewer, 2^k * 4 * samples_per_octave edges each in octave k. Partial states
// (per octave: segments and summed periodograms; the spans behind the carrier) merge in time
// order.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/measurements/channel_times.hpp"
#include "tagflow/measurements/octave_welch.hpp"
#include "tagflow/measurements/segment_periodogram.hpp"

namespace tagflow {

struct PhaseNoiseSpectrum {
  double frequency = std::numeric_limits<double>::quiet_NaN();  // measured carrier, Hz
  std::vector<double> offset;                                   // Hz, ascending
  std::vector<double> phase_noise;                              // L(f), dBc/Hz
  std::vector<double> bin_width;                                // Hz, the band of each point
  std::vector<std::uint64_t> segments;                          // Welch segments per point
  // Segments averaged in the highest octave (each lower one has about half as many as the one
  // above it).
  std::uint64_t averaged_sequences = 0;

  // RMS jitter in seconds from the points inside [lower, upper] (Hz); the full band by default.
  double integratedJitter(double lower = 0,
                          double upper = std::numeric_limits<double>::infinity()) const;
};

class PhaseNoise : public Measurement {
 public:
  static constexpr std::int64_t kDefaultSamplesPerOctave = 64;

  static const ParameterSchema& schema();

  PhaseNoise(std::string name, std::vector<channel_t> channels,
             std::int64_t samples_per_octave = kDefaultSamplesPerOctave);

  // One spectrum per channel, in the order given.
  std::vector<PhaseNoiseSpectrum> getDataObject() const;
  std::vector<double> getIntegratedJitter(
      double lower = 0, double upper = std::numeric_limits<double>::infinity()) const;

  const std::vector<channel_t>& channels() const { return times_.channels(); }
  std::optional<std::vector<channel_t>> inputChannels() const override { return channels(); }
  std::vector<channel_t> gatheredChannels() const override { return channels(); }
  // Consecutive ranges without margins: each range starts series of its own.
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
  struct Clock {
    explicit Clock(SegmentPeriodogram& periodogram) : spectrum(periodogram) {}

    OctaveWelch spectrum;
    std::vector<timestamp_t> warmup;  // the first edges, until the period is known
    // This block's samples, ps, after the newest of the last block, which is held back from
    // the spectrum until the edge after it has shown whether it was an extra one. Only grows.
    std::vector<double> phases;
    std::size_t phase_count = 0;  // samples in phases
    bool has_period = false;
    double period = 0;  // reference period, ps
    timestamp_t period_whole = 0;
    double period_fraction = 0;
    timestamp_t predicted_whole = 0;  // ideal time of the next edge = whole + fraction
    double predicted_fraction = 0;
    std::uint64_t series_edges = 0;
    // Not beside predicted_fraction: GCC kept two neighbouring doubles that addEdges() stores
    // together in one vector register through its loop, which put two shuffles on the chain
    // from one edge's prediction to the next.
    double previous_phase = 0;
    double held_step = 0;  // the held sample's phase minus the one before it
    timestamp_t series_first = 0;
    timestamp_t series_last = 0;
    timestamp_t closed_span = 0;
    std::uint64_t closed_periods = 0;
    std::uint64_t restarts_on_slip = 0;
  };

  void process(Clock& clock, std::span<const timestamp_t> times);
  // Holds the first edges back until they give a period, then adds them.
  void warmUp(Clock& clock, timestamp_t time);
  void addEdges(Clock& clock, std::span<const timestamp_t> times);
  // Hands the samples to the spectrum, all or all but the newest.
  void pushPhases(Clock& clock, bool hold_newest);
  void setPeriod(Clock& clock, double period);
  void endSeries(Clock& clock);
  void endAllSeries();
  // The summed spans (ps) of every series, the current one included, and the edge periods
  // they cover: the mean period is their ratio.
  static std::pair<timestamp_t, std::uint64_t> seriesSpans(const Clock& clock);
  double meanPeriod(const Clock& clock) const;
  PhaseNoiseSpectrum spectrumOf(const Clock& clock) const;

  std::int64_t samples_per_octave_;
  ChannelTimes times_;
  std::unique_ptr<SegmentPeriodogram> periodogram_;
  std::vector<std::unique_ptr<Clock>> clocks_;
  bool active_ = false;  // false inside an overflow interval
};

}  // namespace tagflow
