// A measurement written outside the library: the extension point is the Measurement base
// class. This one histograms the waiting time between consecutive tags of one channel (for a
// Poisson source an exponential of mean 1 / rate). It shows the four things a measurement
// implements — a tight loop over runs of time tags, the overflow rule, clearing, and its
// results — and a getter that takes the measurement's lock, so it can be read live.
//
//   ./custom_measurement [output.h5] [stream seconds]
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tagflow/core/measurement.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

namespace {

using namespace tagflow;

class WaitingTimes : public Measurement {
 public:
  WaitingTimes(std::string name, channel_t channel, timestamp_t binwidth, std::size_t n_bins)
      : Measurement("WaitingTimes", std::move(name),
                    Parameters{{"channel", std::int64_t{channel}},
                               {"binwidth", binwidth},
                               {"n_bins", static_cast<std::int64_t>(n_bins)}}),
        channel_(channel),
        binwidth_(binwidth),
        counts_(n_bins, 0) {}

  // Tells the graph which channels to route here (physical or virtual).
  std::optional<std::vector<channel_t>> inputChannels() const override {
    return std::vector<channel_t>{channel_};
  }

  std::vector<std::uint64_t> getData() const {
    auto lock = lockData();
    return counts_;
  }

 protected:
  void processTimeTags(std::span<const Tag> tags) override {
    for (const Tag& tag : tags) {
      if (tag.channel != channel_) continue;
      if (last_) {
        const auto bin = static_cast<std::size_t>((tag.time - *last_) / binwidth_);
        if (bin < counts_.size()) ++counts_[bin];
      }
      last_ = tag.time;
    }
  }
  // Tags inside an overflow are lost: a waiting time across it would be too long.
  void onOverflowBegin(const Tag&) override { last_.reset(); }
  void clearData() override {
    std::fill(counts_.begin(), counts_.end(), 0);
    last_.reset();
  }
  void collectResults(ResultSet& out) const override {
    std::vector<std::int64_t> edges;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      edges.push_back(static_cast<std::int64_t>(i) * binwidth_);
    }
    out.add("data", "counts", {counts_.size()}, counts_, "waiting times per bin");
    out.add("index", "ps", {edges.size()}, edges, "left edge of each bin");
  }

 private:
  channel_t channel_;
  timestamp_t binwidth_;
  std::vector<std::uint64_t> counts_;
  std::optional<timestamp_t> last_;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string output = argc > 1 ? argv[1] : "waiting_times.h5";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 0.5;

  SyntheticConfig config;
  config.channels = demoChannels();  // channel 4: Poisson, 1 MHz
  SyntheticSource source(config);
  MeasurementGraph graph(source);
  auto& waits = graph.emplace<WaitingTimes>("waits", 4, 100'000 /* 100 ns */, 100);
  const Profile profile = graph.run(static_cast<timestamp_t>(seconds * kPicosecondsPerSecond));

  // For a Poisson process the first two bins hold counts in the ratio exp(rate * binwidth).
  const auto counts = waits.getData();
  std::cout << "bin 0: " << counts[0] << ", bin 1: " << counts[1] << ", ratio "
            << static_cast<double>(counts[0]) / static_cast<double>(counts[1])
            << " (expected exp(1e6 * 1e-7) = 1.105)\n";
  writeResultsHdf5(output, {waits.getResults()}, profile, RunInfo{source.describe(), ""});
  std::cout << "results written to " << output << "\n";
  return 0;
}
