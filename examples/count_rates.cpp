// A live count-rate monitor: the synthetic source (8 demo channels) through a Counter and a
// Countrate, run in the background, the counter read while it runs; half-way a second
// Countrate is added to the running graph (it sees the stream from the next block on) and
// later removed again. Then everything is saved to HDF5 and the profile printed.
//
//   ./count_rates [output.h5] [stream seconds]
#include <chrono>
#include <iostream>
#include <thread>

#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  const std::string output = argc > 1 ? argv[1] : "count_rates.h5";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 2.0;

  SyntheticConfig config;
  config.channels = demoChannels();
  SyntheticSource source(config);

  MeasurementGraph graph(source);
  auto& counter = graph.emplace<Counter>("counter", std::vector<channel_t>{1, 2, 3},
                                         100'000'000'000 /* 100 ms bins */, 20);
  auto& countrate = graph.emplace<Countrate>("countrate", std::vector<channel_t>{1, 2, 3});

  auto running = graph.runAsync(static_cast<timestamp_t>(seconds * kPicosecondsPerSecond));
  Countrate late("late_countrate", std::vector<channel_t>{4, 5});
  int polls = 0;
  while (running.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    // A consistent snapshot at a block boundary, taken while the graph keeps running.
    const auto totals = counter.getDataTotalCounts();
    std::cout << "so far: channel 1 " << totals[0] << " tags, " << counter.getBinsCompleted()
              << " bins complete\n";
    if (++polls == 2) graph.add(late);
    if (polls == 4) {
      graph.remove(late);  // returns once `late` has processed its last block
      std::cout << "late countrate saw " << late.getCaptureDuration() * 1e-12
                << " s of stream: " << late.getData()[0] * 1e-6 << " MHz on channel 4\n";
    }
  }
  const Profile profile = running.get();

  const auto rates = countrate.getData();
  for (std::size_t i = 0; i < rates.size(); ++i) {
    std::cout << "channel " << countrate.channels()[i] << ": " << rates[i] * 1e-6 << " MHz\n";
  }
  writeResultsHdf5(output, {counter.getResults(), countrate.getResults()}, profile,
                   RunInfo{source.describe(), ""});
  printProfile(std::cout, profile);
  std::cout << "results written to " << output << "\n";
  return 0;
}
