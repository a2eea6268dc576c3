// HalfBandDecimator: halves the sample rate of a stream of samples. A 23-tap half-band FIR
// (Blackman-windowed sinc, cut-off at a quarter of the input rate, DC gain exactly 1) filters
// the input, and every second output is kept. In output-rate units the filter is flat to
// 0.002 dB up to a quarter of the output rate and attenuates by at least 74 dB everything that
// would alias onto that range, so [0, f_out/4] of the output is a clean copy of the input's
// spectrum there; (f_out/4, f_out/2] is not. The stream may be restarted (a gap): the filter
// history is dropped and the first output comes after a full window of new samples.
// Every tap at an even offset from the centre but the centre itself is zero, so an output takes
// one even-indexed sample (the centre) and the odd-indexed ones around it: the samples are kept
// split by the parity of their index, where several outputs side by side read contiguous
// samples and are computed together.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace tagflow {

class HalfBandDecimator {
 public:
  static constexpr std::size_t kTaps = 23;

  HalfBandDecimator();

  // Appends the outputs due with `input` to `output`.
  void process(std::span<const double> input, std::vector<double>& output);
  void restart();

  const std::array<double, kTaps>& taps() const { return taps_; }

 private:
  static constexpr std::size_t kCentre = kTaps / 2;
  // Odd-indexed samples on each side of an output's centre.
  static constexpr std::size_t kSide = (kCentre + 1) / 2;

  // Appends the input to even_ and odd_.
  void split(std::span<const double> input);
  // Appends the outputs with centres even_[next_centre_] up to, not including, `end`.
  void filter(std::size_t end, std::vector<double>& output);

  std::array<double, kTaps> taps_{};
  // The samples since the (re)start that later outputs still need, by the parity of their index
  // s_j counted from the (re)start: even_[i] = s_{2(b + i)}, odd_[i] = s_{2(b + i) + 1} for a
  // base b that grows as outputs are made. Storage grows only; the counts say what is held.
  std::vector<double> even_;
  std::vector<double> odd_;
  std::size_t even_count_ = 0;
  std::size_t odd_count_ = 0;
  // The centre of the next output: even_[next_centre_], with odd_[next_centre_ - kSide] ..
  // odd_[next_centre_ + kSide - 1] around it.
  std::size_t next_centre_ = kSide;
};

}  // namespace tagflow
