// Consecutive ranges: a stream cut at 1, 2 and 6 points (random times, on a tag, inside a pair
// window, on an overflow's begin, inside an overflow) and counted range by range, each shard
// fed only the blocks around its range, then merged in order, gives exactly the results of one
// pass, for every splittable kind; Counter also cut at any one or two points of a hand-made
// stream.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "split_kinds.hpp"

using namespace tagflow;
using namespace tagflow::test;

namespace {

// `count` cut points inside the stream; the first few land on awkward places.
std::vector<timestamp_t> cutPoints(const DrainedStream& stream, const SyntheticConfig& config,
                                   int count, std::mt19937_64& random) {
  const auto& tags = stream.tags;
  std::uniform_int_distribution<std::size_t> any_tag(1, tags.size() - 2);
  const timestamp_t overflow_begin = config.overflows.front().begin_ps;
  const std::vector<timestamp_t> awkward{
      tags[any_tag(random)].time,        // on a tag
      tags[any_tag(random)].time + 700,  // inside a pair window
      overflow_begin,                    // on an overflow's begin
      overflow_begin + 100'000'000,      // inside an overflow
      config.overflows.back().end_ps,    // on an overflow's end
      tags[any_tag(random)].time + 1,    // just after a tag
  };
  std::vector<timestamp_t> cuts;
  std::uniform_int_distribution<timestamp_t> any_time(stream.begin() + 1, stream.end() - 1);
  for (int i = 0; i < count; ++i) {
    cuts.push_back(i < static_cast<int>(awkward.size()) && random() % 4 != 0 ? awkward[i]
                                                                             : any_time(random));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

// 6 ns in blocks of 500 ps, two channels: overflow intervals inside a bin of 1000 ps, from one
// bin edge to another and across an edge, each ending with missed events.
DrainedStream handMadeStream() {
  const auto time_tag = [](channel_t channel, timestamp_t time) {
    return Tag{.channel = channel, .time = time};
  };
  const auto mark = [](TagType type, timestamp_t time) { return Tag{.type = type, .time = time}; };
  const auto missed = [](channel_t channel, std::uint16_t count, timestamp_t time) {
    return Tag{
        .type = TagType::MissedEvents, .missed_events = count, .channel = channel, .time = time};
  };
  const std::vector<Tag> tags{time_tag(1, 100),
                              time_tag(2, 150),
                              mark(TagType::OverflowBegin, 300),
                              missed(1, 5, 800),
                              mark(TagType::OverflowEnd, 800),
                              time_tag(1, 1200),
                              time_tag(2, 2000),
                              time_tag(1, 2600),
                              mark(TagType::OverflowBegin, 3000),
                              missed(2, 3, 4000),
                              mark(TagType::OverflowEnd, 4000),
                              time_tag(1, 4100),
                              time_tag(2, 4500),
                              mark(TagType::OverflowBegin, 4800),
                              missed(1, 2, 5200),
                              mark(TagType::OverflowEnd, 5200),
                              time_tag(1, 5300),
                              time_tag(1, 5999)};
  DrainedStream stream;
  for (timestamp_t begin = 0; begin < 6000; begin += 500) {
    DrainedBlock block{begin, begin + 500, {}};
    for (const Tag& tag : tags) {
      if (tag.time >= begin && tag.time < begin + 500) block.tags.push_back(tag);
    }
    stream.blocks.push_back(block);
  }
  return stream;
}

}  // namespace

TEST_CASE("Consecutive time ranges merged in order equal one pass", "[split]") {
  const std::uint64_t seed = GENERATE(3, 11);
  const int ranges = GENERATE(2, 3, 7);
  const SyntheticConfig config = splitStreamConfig(seed);
  const DrainedStream stream = drainSynthetic(config);
  std::mt19937_64 random(seed * 1000 + static_cast<std::uint64_t>(ranges));
  const std::vector<timestamp_t> cuts = cutPoints(stream, config, ranges - 1, random);

  for (const SplitKind& kind : splitKinds()) {
    INFO(kind.label << ", " << ranges << " ranges, seed " << seed);
    const auto whole = kind.make();
    feed(*whole, stream);

    std::vector<timestamp_t> bounds{stream.begin()};
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(stream.end());
    requireSameResults(whole->getResults(), mergeRanges(kind.make, stream, bounds)->getResults());
  }
}

TEST_CASE("Counter cut at any one or two points of a hand-made stream equals one pass",
          "[split][counter]") {
  // Bin edges on and off the block boundaries and the overflow marks; a ring that wraps or not.
  const timestamp_t binwidth = GENERATE(1000, 700);
  const std::int64_t n_values = GENERATE(3, 10);
  const DrainedStream stream = handMadeStream();
  const MeasurementFactory make = [&] {
    return std::make_unique<Counter>("m", std::vector<channel_t>{1, 2}, binwidth, n_values);
  };
  const auto whole = make();
  feed(*whole, stream);
  const ResultSet expected = whole->getResults();
  for (timestamp_t first = 100; first < stream.end(); first += 100) {
    for (timestamp_t second = first; second < stream.end(); second += 100) {
      INFO("binwidth " << binwidth << ", n_values " << n_values << ", cuts " << first << ", "
                       << second);
      std::vector<timestamp_t> bounds{stream.begin(), first, second, stream.end()};
      if (second == first) bounds.erase(bounds.begin() + 2);  // one cut
      requireSameResults(expected, mergeRanges(make, stream, bounds)->getResults());
    }
  }
}

TEST_CASE("Ranges merge into the measurement of the first range as well", "[split]") {
  const SyntheticConfig config = splitStreamConfig(5);
  const DrainedStream stream = drainSynthetic(config);
  // Several cuts: a gate that moves within one span before a cut tells the gates' states there
  // from those at the cut.
  const timestamp_t cut = timestamp_t{GENERATE(0, 1, 2, 3, 4, 5, 6, 7)} * 777'777'777 +
                          (stream.begin() + stream.end()) / 2 + 12'345;
  for (const SplitKind& kind : splitKinds()) {
    INFO(kind.label << ", cut at " << cut);
    const auto whole = kind.make();
    feed(*whole, stream);
    const auto first = kind.make();
    first->setShardPlan(ShardPlan{.end = cut});
    feed(*first, stream, stream.begin(), cut + first->splitSupport()->after);
    const auto second = kind.make();
    second->setShardPlan(ShardPlan{.begin = cut, .origin = stream.begin()});
    feed(*second, stream, cut - second->splitSupport()->before);
    first->mergePartialState(second->getPartialState());
    requireSameResults(whole->getResults(), first->getResults());
  }
}
