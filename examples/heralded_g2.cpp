// g2 of a heralded single-photon source, as a graph of virtual channels and measurements.
// Channel 1 is the herald detector, channel 2 the signal detector (in the demo stream it
// echoes half of the heralds 1 ns later, with 50 ps jitter), channel 3 a 10 MHz laser clock.
// The herald is delayed onto the signal, heralded signal photons are the coincidences of
// both, and the correlations are taken against the delayed herald (linear bins around zero)
// and against the laser clock (logarithmic bins).
//
//   ./heralded_g2 [output.h5] [stream seconds]
#include <iostream>
#include <string>

#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  const std::string output = argc > 1 ? argv[1] : "heralded_g2.h5";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 0.5;

  SyntheticConfig config;
  config.channels = demoChannels();
  SyntheticSource source(config);
  MeasurementGraph graph(source);

  auto& herald = graph.emplace<DelayedChannel>("herald", 1, 1'000);
  auto& heralded = graph.emplace<Coincidence>(
      "heralded", std::vector<channel_t>{herald.getChannel(), 2}, 200 /* ps window */);
  auto& g2 = graph.emplace<Correlation>("g2", 2, herald.getChannel(), 10 /* ps bins */, 400);
  auto& g2_log = graph.emplace<HistogramLogBins>("g2_clock", heralded.getChannel(), 3,
                                                 -12 /* 1 ps */, -7 /* 100 ns */, 200);
  auto& rates = graph.emplace<Countrate>(
      "rates", std::vector<channel_t>{1, 2, herald.getChannel(), heralded.getChannel()});

  const Profile profile = graph.run(static_cast<timestamp_t>(seconds * kPicosecondsPerSecond));

  const auto rate = rates.getData();
  std::cout << "herald " << rate[0] * 1e-6 << " MHz, signal " << rate[1] * 1e-6 << " MHz, heralded "
            << rate[3] * 1e-6 << " MHz (heralding efficiency " << rate[3] / rate[0] << ")\n";
  const auto counts = g2.getData();
  std::size_t peak = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > counts[peak]) peak = i;
  }
  std::cout << "g2 peak at tau = " << g2.getIndex()[peak] << " ps with " << counts[peak]
            << " counts\n";
  writeResultsHdf5(output, {g2.getResults(), g2_log.getResults(), rates.getResults()}, profile,
                   RunInfo{source.describe(), ""});
  printProfile(std::cout, profile);
  std::cout << "results written to " << output << "\n";
  return 0;
}
