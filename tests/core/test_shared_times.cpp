// The times a graph gathers once per block for several readers: splitTimes against a plain
// loop, which channels a stream shares, what a reader is handed (the whole block of TimeTags
// only, exactly the times of its channel), and measurements that share gathered channels in
// one graph giving bit for bit the results each gives alone.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "support/synthetic.hpp"
#include "tagflow/core/channel_split.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/shared_times.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

std::vector<timestamp_t> timesOf(std::span<const Tag> tags, channel_t channel) {
  std::vector<timestamp_t> times;
  for (const Tag& tag : tags) {
    if (tag.channel == channel) times.push_back(tag.time);
  }
  return times;
}

// Reads `channel` from every block through sharedTimes(), checking what it is handed against
// the block's own tags, and counts the blocks that were shared.
class SharedProbe : public Measurement {
 public:
  SharedProbe(std::string name, channel_t channel)
      : Measurement("SharedProbe", std::move(name), Parameters{}), channel_(channel) {}

  std::vector<channel_t> gatheredChannels() const override { return {channel_}; }
  std::uint64_t sharedBlocks() const { return shared_; }
  std::uint64_t wrongTimes() const { return wrong_; }
  std::uint64_t times() const { return times_; }

 protected:
  void processTimeTags(std::span<const Tag> tags) override {
    const std::vector<timestamp_t> expected = timesOf(tags, channel_);
    times_ += expected.size();
    if (const auto shared = sharedTimes(tags, channel_)) {
      ++shared_;
      if (!std::equal(shared->begin(), shared->end(), expected.begin(), expected.end())) ++wrong_;
    }
    // A part of the block is never served from the block's gathering.
    if (tags.size() > 1 && sharedTimes(tags.first(tags.size() - 1), channel_)) ++wrong_;
  }
  void clearData() override {}
  void collectResults(ResultSet& /*out*/) const override {}

 private:
  channel_t channel_;
  std::uint64_t shared_ = 0, wrong_ = 0, times_ = 0;
};

bool sameArrays(const ResultSet& a, const ResultSet& b) {
  if (a.arrays.size() != b.arrays.size()) return false;
  for (std::size_t i = 0; i < a.arrays.size(); ++i) {
    const ResultArray& x = a.arrays[i];
    const ResultArray& y = b.arrays[i];
    if (x.name != y.name || x.shape != y.shape || x.data.index() != y.data.index()) return false;
    const bool same = std::visit(
        [&](const auto& values) {
          using Vector = std::decay_t<decltype(values)>;
          const Vector& other = std::get<Vector>(y.data);
          return values.size() == other.size() &&
                 std::memcmp(values.data(), other.data(),
                             values.size() * sizeof(typename Vector::value_type)) == 0;
        },
        x.data);
    if (!same) {
      UNSCOPED_INFO(a.name << ": array " << x.name << " differs");
      return false;
    }
  }
  return true;
}

using Make = std::function<std::unique_ptr<Measurement>()>;

std::vector<Make> sharingMeasurements() {
  return {
      [] { return std::make_unique<Correlation>("partner", 3, 1, 20, 500); },
      [] { return std::make_unique<Correlation>("wide", 1, 3, 1000, 2000); },
      [] { return std::make_unique<Correlation>("auto", 1, CHANNEL_UNUSED, 1000, 100); },
      [] { return std::make_unique<HistogramLogBins>("lifetime", 3, 1, 0.0, 6.0, 300); },
      [] { return std::make_unique<HistogramLogBins>("self", -1, -1, 2.0, 6.0, 100); },
      [] { return std::make_unique<Correlation>("auto_minus", -1, CHANNEL_UNUSED, 500, 200); },
      [] { return std::make_unique<PhaseNoise>("noise", std::vector<channel_t>{2}, 64); },
      [] {
        return std::make_unique<FrequencyStability>("every_edge", 2,
                                                    std::vector<std::int64_t>{1, 2, 5, 10}, 1);
      },
      [] {
        return std::make_unique<FrequencyStability>("averaged", 2, std::vector<std::int64_t>{1, 3},
                                                    16);
      },
  };
}

SyntheticConfig sharedStream() {
  SyntheticConfig config = mixedConfig(40'000'000'000, 4096, 2.0, 13);
  // Blocks holding the overflow's marks are split by the readers themselves.
  config.overflows = {{15'000'000'000, 16'000'000'000}};
  return config;
}

}  // namespace

TEST_CASE("splitTimes keeps the times of one to four channels in order", "[shared_times]") {
  std::mt19937_64 random(3);
  const std::vector<channel_t> pool{1, -1, 2, 0x10001, 3, 7};
  for (std::size_t size = 0; size < 45; ++size) {
    std::vector<Tag> tags;
    for (std::size_t i = 0; i < size; ++i) {
      tags.push_back(makeTimeTag(pool[random() % pool.size()],
                                 static_cast<timestamp_t>(i * 10 + random() % 5)));
    }
    for (std::size_t n = 1; n <= kMaxSplitChannels; ++n) {
      const std::vector<channel_t> channels(pool.begin(), pool.begin() + static_cast<long>(n));
      std::vector<std::vector<timestamp_t>> out(n, std::vector<timestamp_t>(size + kSplitSpare));
      std::vector<timestamp_t*> write;
      for (auto& times : out) write.push_back(times.data());
      std::vector<std::size_t> counts(n);
      splitTimes(tags, channels, write.data(), counts.data());
      for (std::size_t c = 0; c < n; ++c) {
        out[c].resize(counts[c]);
        CHECK(out[c] == timesOf(tags, channels[c]));
      }
    }
  }
}

TEST_CASE("a stream shares the channels that two or more readers gather", "[shared_times]") {
  using Wanted = std::vector<std::vector<channel_t>>;
  CHECK(channelsToShare(Wanted{}).empty());
  CHECK(channelsToShare(Wanted{{1, 2}}).empty());
  CHECK(channelsToShare(Wanted{{1, 2}, {2, 1}, {3}, {}, {3}}) == std::vector<channel_t>{1, 2, 3});
  // The most wanted first.
  CHECK(channelsToShare(Wanted{{5}, {5}, {5}, {4}, {4}}) == std::vector<channel_t>{5, 4});
  // A reader that would still split the block itself does not count: {1} alone is not shared.
  CHECK(channelsToShare(Wanted{{1, 2}, {1}}).empty());
  CHECK(channelsToShare(Wanted{{1, 2}, {1}, {1}}) == std::vector<channel_t>{1});
  // At most four channels; readers of a fifth gather their own.
  CHECK(channelsToShare(Wanted{{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}}).empty());
  CHECK(channelsToShare(Wanted{{1, 2}, {1, 2}, {3, 4}, {3, 4}, {5}, {5}}) ==
        std::vector<channel_t>{1, 2, 3, 4});
  // A channel named twice by one reader counts once.
  CHECK(channelsToShare(Wanted{{6, 6}}).empty());
}

TEST_CASE("readers that gather one channel are handed the block's times", "[shared_times][graph]") {
  for (const int threads : {1, 2}) {
    SyntheticSource source(sharedStream());
    SharedProbe first("first", 1), second("second", 1), alone("alone", 2);
    MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 6, .threads = threads});
    graph.add(first);
    graph.add(second);
    graph.add(alone);
    graph.run();
    CHECK(first.times() > 100'000);
    for (const SharedProbe* probe : {&first, &second}) CHECK(probe->wrongTimes() == 0);
    // Every block but those holding the overflow's marks (or cut short) is shared: on one
    // thread each reader is handed it; on two, a reader that finds the other gathering splits
    // the block itself, but the one gathering is always handed it.
    if (threads == 1) {
      CHECK(first.sharedBlocks() > 150);  // of about 166 blocks
      CHECK(second.sharedBlocks() > 150);
    } else {
      CHECK(first.sharedBlocks() + second.sharedBlocks() > 150);
    }
    CHECK(alone.sharedBlocks() == 0);
  }
}

TEST_CASE("measurements sharing gathered channels give the results each gives alone",
          "[shared_times][graph]") {
  std::vector<ResultSet> alone;
  for (const Make& make : sharingMeasurements()) {
    SyntheticSource source(sharedStream());
    const std::unique_ptr<Measurement> measurement = make();
    MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 6, .threads = 1});
    graph.add(*measurement);
    graph.run();
    alone.push_back(measurement->getResults());
  }
  for (const int threads : {1, 2}) {
    SyntheticSource source(sharedStream());
    std::vector<std::unique_ptr<Measurement>> together;
    MeasurementGraph graph(source, GraphOptions{.max_blocks_in_flight = 6, .threads = threads});
    for (const Make& make : sharingMeasurements()) graph.add(*together.emplace_back(make()));
    SharedProbe probe("probe", 1);
    graph.add(probe);
    graph.run();
    // On two threads a reader that finds another gathering splits the block itself, so how
    // many blocks the probe is handed depends on timing; the results must not.
    if (threads == 1) CHECK(probe.sharedBlocks() > 150);
    for (std::size_t i = 0; i < together.size(); ++i) {
      INFO(together[i]->name() << " on " << threads << " threads");
      CHECK(sameArrays(together[i]->getResults(), alone[i]));
    }
  }
}
