// Clock stability of a 10 MHz reference: FrequencyStability (the Allan family) and PhaseNoise
// (single-sideband L(f)) on one clock, live. The synthetic clock has 5 ps of white phase jitter,
// white frequency noise of 1e-9 at 1 s and a 1 kHz phase modulation of index 1e-3, so ADEV
// falls as tau^-1/2 (white FM: 3e-7 at 10 us) with a bump near 0.5 ms from the modulation, and
// L(f) shows a spur at 1 kHz holding 20 log10(1e-3 / 2) = -66 dBc (drawn as a density in
// dBc/Hz, so it stands lower by the noise bandwidth of its bin).
//
//   ./clock_stability [output.h5] [stream seconds]
#include <cmath>
#include <iostream>
#include <string>

#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/phase_noise.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  const std::string output = argc > 1 ? argv[1] : "clock_stability.h5";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 1.0;

  ClockNoise noise;
  noise.white_fm = 1e-9;
  noise.pm_index = 1e-3;
  noise.pm_frequency_hz = 1e3;
  SyntheticConfig config;
  config.channels = {SyntheticChannel::clock(1, 10e6, 5 /* ps */, noise)};
  SyntheticSource source(config);

  MeasurementGraph graph(source);
  // Samples are averages of 100 edges (10 us); tau = n * 10 us.
  auto& stability = graph.emplace<FrequencyStability>(
      "stability", 1, std::vector<std::int64_t>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}, 100,
      1000);
  auto& phase_noise = graph.emplace<PhaseNoise>("phase_noise", std::vector<channel_t>{1}, 256);
  const Profile profile = graph.run(static_cast<timestamp_t>(seconds * kPicosecondsPerSecond));

  const auto deviations = stability.getDataObject();
  std::cout << "tau (s)      ADEV        MDEV        TDEV (s)\n";
  for (std::size_t i = 0; i < deviations.tau.size(); ++i) {
    std::cout << deviations.tau[i] << "  " << deviations.adev[i] << "  " << deviations.mdev[i]
              << "  " << deviations.tdev[i] << "\n";
  }
  const auto spectrum = phase_noise.getDataObject().front();
  std::cout << "carrier " << spectrum.frequency << " Hz, L(f) at " << spectrum.offset.size()
            << " offsets from " << spectrum.offset.front() << " to " << spectrum.offset.back()
            << " Hz; integrated jitter " << spectrum.integratedJitter() * 1e12 << " ps\n";
  writeResultsHdf5(output, {stability.getResults(), phase_noise.getResults()}, profile,
                   RunInfo{source.describe(), ""});
  std::cout << "results written to " << output << "\n";
  return 0;
}
