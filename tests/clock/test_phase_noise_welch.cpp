// The pieces of the phase-noise spectrum against first principles: the half-band decimator's
// taps (restated here from their definition), its pass band and alias rejection measured with
// sinusoids, chunking independence; OctaveWelch's undecimated and first decimated octave
// against a Welch estimate with a direct DFT (clock_reference.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "clock_reference.hpp"
#include "tagflow/measurements/half_band_decimator.hpp"
#include "tagflow/measurements/octave_welch.hpp"
#include "tagflow/measurements/segment_periodogram.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// h[m] = sin(pi m / 2) / (pi m) (1/2 at m = 0) times a Blackman window over m = -11..11,
// normalised to a sum of 1.
std::vector<double> expectedTaps() {
  std::vector<double> taps;
  double sum = 0;
  for (int m = -11; m <= 11; ++m) {
    const double ideal = m == 0 ? 0.5 : std::sin(std::numbers::pi * m / 2) / (std::numbers::pi * m);
    const double x = (m + 11) / 22.0;
    const double w =
        0.42 - 0.5 * std::cos(2 * std::numbers::pi * x) + 0.08 * std::cos(4 * std::numbers::pi * x);
    taps.push_back(ideal * w);
    sum += ideal * w;
  }
  for (double& tap : taps) tap /= sum;
  return taps;
}

// Amplitude of the decimator's output for a unit cosine at `frequency` (cycles per input
// sample, not 0): the output's RMS after the filter has filled, times sqrt(2).
double gainAt(double frequency) {
  HalfBandDecimator decimator;
  std::vector<double> input, output;
  for (int i = 0; i < 20000; ++i) input.push_back(std::cos(2 * std::numbers::pi * frequency * i));
  decimator.process(input, output);
  double squares = 0;
  for (std::size_t i = 100; i < output.size(); ++i) squares += output[i] * output[i];
  return std::sqrt(2 * squares / static_cast<double>(output.size() - 100));
}

}  // namespace

TEST_CASE("HalfBandDecimator taps are the windowed half-band sinc", "[phase_noise][welch]") {
  HalfBandDecimator decimator;
  const auto expected = expectedTaps();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(decimator.taps()[i] == Approx(expected[i]).margin(1e-15));
  }
  // Every even offset from the centre (tap 11) but the centre itself is zero.
  CHECK(decimator.taps()[1] == 0.0);
  CHECK(decimator.taps()[9] == 0.0);
  CHECK(decimator.taps()[13] == 0.0);
  CHECK(decimator.taps()[11] > 0.49);
}

TEST_CASE("HalfBandDecimator is flat where an octave is read and rejects aliases",
          "[phase_noise][welch]") {
  // Pass band: up to 1/8 cycle per input sample (a quarter of the output rate).
  for (double f = 0.125 / 16; f <= 0.125; f += 0.125 / 16) {
    INFO("frequency " << f);
    CHECK(20 * std::log10(gainAt(f)) == Approx(0.0).margin(0.003));
  }
  // Everything from 3/8 up folds onto the read band or below: at least 70 dB down.
  for (double f = 0.375; f <= 0.5; f += 0.125 / 16) {
    INFO("frequency " << f);
    CHECK(20 * std::log10(gainAt(f)) < -70);
  }
}

TEST_CASE("HalfBandDecimator output does not depend on how the input is chunked",
          "[phase_noise][welch]") {
  std::mt19937_64 random(4);
  std::normal_distribution<double> normal;
  std::vector<double> input(5000);
  for (double& value : input) value = normal(random);
  HalfBandDecimator whole, pieces;
  std::vector<double> expected, actual;
  whole.process(input, expected);
  std::size_t position = 0;
  for (std::size_t chunk : {1, 2, 3, 22, 23, 500, 5000}) {
    const std::size_t take = std::min(chunk, input.size() - position);
    pieces.process(std::span<const double>(input).subspan(position, take), actual);
    position += take;
  }
  CHECK(actual == expected);
  // An output at every odd input index whose 23-sample window is complete: 23, 25, .., 4999.
  CHECK(expected.size() == 2489);
  // Direct convolution at the second output, the window ending at input 25.
  const auto taps = expectedTaps();
  double direct = 0;
  for (std::size_t j = 0; j < taps.size(); ++j) direct += taps[j] * input[25 - 22 + j];
  CHECK(expected[1] == Approx(direct).epsilon(1e-12));
}

TEST_CASE("OctaveWelch matches a direct Welch estimate in stage 0 and stage 1",
          "[phase_noise][welch]") {
  std::mt19937_64 random(8);
  std::normal_distribution<double> normal;
  std::vector<double> samples(6000);
  double walk = 0;
  for (double& value : samples) {
    walk += 0.1 * normal(random);  // a red component, so the bins differ
    value = normal(random) + walk;
  }
  SegmentPeriodogram periodogram(128);
  OctaveWelch welch(periodogram);
  for (std::size_t i = 0; i < samples.size(); i += 1000) {
    welch.push(std::span<const double>(samples).subspan(i, 1000));
  }
  const auto points = welch.spectrum();

  const std::vector<Real> stage0(samples.begin(), samples.end());
  const auto psd0 = welchReference(stage0, 128, 17, 63);
  std::vector<Real> stage1;  // the decimated stream, by direct convolution
  const auto taps = expectedTaps();
  for (std::size_t end = 23; end < samples.size(); end += 2) {
    Real sum = 0;
    for (std::size_t j = 0; j < taps.size(); ++j) sum += taps[j] * samples[end - 22 + j];
    stage1.push_back(sum);
  }
  const auto psd1 = welchReference(stage1, 128, 17, 32);

  // Stage 0 gives 47 points, stage 1 16; deeper stages (narrower bins) are not checked here.
  std::size_t checked0 = 0, checked1 = 0;
  for (const auto& point : points) {
    const double bin0 = point.frequency * 128;
    if (point.width == 1.0 / 128) {
      const auto b = static_cast<std::size_t>(std::llround(bin0));
      CHECK(point.density == Approx(static_cast<double>(psd0[b - 17])).epsilon(1e-9));
      CHECK(point.segments == (6000 - 128) / 64 + 1);
      ++checked0;
    } else if (point.width == 0.5 / 128) {
      const auto b = static_cast<std::size_t>(std::llround(bin0 * 2));
      // The reference is at a rate of 1; stage 1 runs at 1/2 of the input rate.
      CHECK(point.density == Approx(static_cast<double>(psd1[b - 17] / 0.5L)).epsilon(1e-9));
      ++checked1;
    }
  }
  CHECK(checked0 == 47);
  CHECK(checked1 == 16);
}
