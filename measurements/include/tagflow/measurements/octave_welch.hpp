// OctaveWelch: the one-sided power spectral density of a sample stream over many octaves, with
// a constant number of points per octave. Stage 0 holds the samples as given; stage k + 1
// holds stage k decimated by 2 (HalfBandDecimator), i.e. the stream at 2^-(k+1) of the input
// rate. Every stage runs a Welch estimate over segments of L = 8 * points_per_octave samples
// (SegmentPeriodogram: linear detrend, Hann window, 50 % overlap) and contributes one octave:
// bins L/8 < b <= L/4, where its decimation filters are flat and free of aliases; stage 0
// also contributes its upper bins up to below Nyquist (L/8 < b < L/2). Stages are made as the
// data reach them, at most kMaxStages (stage 39 sees its first sample after 2^39 inputs).
// A restart (a gap in the stream) drops every partial segment and filter history and keeps the
// accumulated spectra; the spectra of another stream (a part of the data with series of its own)
// merge stage by stage (mergeStage). Frequencies are in units of the input sample rate. A stage
// holds two segments' worth of samples on a 64-byte boundary: the overlapping segments are read
// where they lie, and only the last half segment moves to the front when the buffer is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tagflow/measurements/aligned_doubles.hpp"
#include "tagflow/measurements/half_band_decimator.hpp"
#include "tagflow/measurements/segment_periodogram.hpp"

namespace tagflow {

class OctaveWelch {
 public:
  static constexpr std::size_t kMaxStages = 40;

  struct Point {
    double frequency;  // bin centre / input sample rate
    double width;      // bin width / input sample rate
    double density;    // one-sided PSD * input sample rate (the PSD at a rate of 1)
    std::uint64_t segments;
  };

  // `periodogram` has length 8 * points_per_octave and outlives this object.
  explicit OctaveWelch(SegmentPeriodogram& periodogram);

  void push(std::span<const double> samples);
  void restart();
  void clear();

  // Ascending frequency; only stages with at least one segment.
  std::vector<Point> spectrum() const;
  std::size_t stages() const { return stages_.size(); }
  // What stage k has accumulated: its segments and the summed power of its binCount(k) bins.
  std::uint64_t stageSegments(std::size_t k) const { return stages_[k]->segments; }
  const std::vector<double>& stagePower(std::size_t k) const { return stages_[k]->power; }
  std::size_t binCount(std::size_t k) const { return k == 0 ? 3 * length_ / 8 - 1 : length_ / 8; }
  // Adds another stream's stage k (k < kMaxStages; `power` has binCount(k) values), making the
  // stages up to it where this stream has not reached them.
  void mergeStage(std::size_t k, std::uint64_t segments, std::span<const double> power);

 private:
  struct Stage {
    AlignedDoubles buffer;   // 2 L samples
    std::size_t begin = 0;   // the segment being filled starts here
    std::size_t filled = 0;  // samples held
    HalfBandDecimator decimator;
    std::vector<double> decimated;  // scratch: this stage's output for the next one
    std::vector<double> power;      // summed |X_b|^2 of the bins this stage contributes
    std::uint64_t segments = 0;
  };

  void pushStage(std::size_t k, std::span<const double> samples);
  void addStage();
  std::size_t firstBin() const { return length_ / 8 + 1; }

  SegmentPeriodogram* periodogram_;
  std::size_t length_;
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace tagflow
