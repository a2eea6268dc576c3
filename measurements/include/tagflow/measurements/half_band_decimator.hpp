// HalfBandDecimator: halves the sample rate of a stream of samples. A 23-tap half-band FIR
// (Blackman-windowed sinc, cut-off at a quarter of the input rate, DC gain exactly 1) filters
// the input, and every second output is kept. In output-rate units the filter is flat to
// 0.002 dB up to a quarter of the output rate and attenuates by at least 74 dB everything that
// would alias onto that range, so [0, f_out/4] of the output is a clean copy of the input's
// spectrum there; (f_out/4, f_out/2] is not. The stream may be restarted (a gap): the filter
// history is dropped and the first output comes after a full window of new samples.
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
  std::array<double, kTaps> taps_{};
  std::vector<double> work_;  // history followed by the new input
  std::size_t history_ = 0;   // samples since the (re)start kept at the front of work_, <= 22
  bool odd_ = false;          // the next input has an odd index counted from the (re)start
};

}  // namespace tagflow
