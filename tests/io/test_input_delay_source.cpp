// InputDelaySource against a reference built here: every time tag of a delayed channel moved by
// its delay, special tags left where they are, all sorted stably in the canonical order; the
// stream from the inner begin plus the smallest delay to the inner end plus the largest, for
// any inner block size, with empty inner blocks, and through [[source.delay]] tables.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/sources.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/input_delay_source.hpp"
#include "tagflow/io/sources/memory_source.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

std::vector<Tag> delayedReference(const std::vector<Tag>& tags,
                                  const std::map<channel_t, timestamp_t>& delays) {
  std::vector<Tag> out = tags;
  for (Tag& tag : out) {
    const auto found = delays.find(tag.channel);
    if (tag.type == TagType::TimeTag && found != delays.end()) tag.time += found->second;
  }
  sortStream(out);
  return out;
}

std::vector<InputDelay> delayList(const std::map<channel_t, timestamp_t>& delays) {
  std::vector<InputDelay> list;
  for (const auto& [channel, delay] : delays) list.push_back({channel, delay});
  return list;
}

}  // namespace

TEST_CASE("Input delays move each listed channel and keep the stream in canonical order", "[io]") {
  // Channels 1 and -2 share a delay, 5000 finds its lane in the map, 7 is listed with 0, 3 is
  // not listed; the delays are larger than the gaps, so the channels overtake each other.
  const std::vector<channel_t> channels{1, 2, -2, 3, 5000, 7};
  const std::map<channel_t, timestamp_t> delays{
      {1, 2500}, {-2, 2500}, {2, -1700}, {5000, 900}, {7, 0}};
  const timestamp_t begin = 1'000, end = 400'000;
  const std::vector<Tag> inner =
      withOverflow(randomTags(11, channels, begin, end, 600), 150'000, 170'000);
  const std::vector<Tag> expected = delayedReference(inner, delays);
  auto shared = std::make_shared<const std::vector<Tag>>(inner);
  for (const std::size_t inner_block : {std::size_t{1}, std::size_t{13}, std::size_t{997}}) {
    INFO("inner block size " << inner_block);
    InputDelaySource source(std::make_unique<MemorySource>(shared, inner_block, begin, end),
                            delayList(delays));
    const DrainedStream stream = drain(source);
    requireWellFormed(stream);
    CHECK(stream.begin() == begin - 1700);
    CHECK(stream.end() == end + 2500);
    CHECK(stream.tags == expected);
  }
}

TEST_CASE("Input delays keep time moving through empty inner blocks", "[io]") {
  // Three empty blocks between two with tags: the delayed tag waits through them.
  std::vector<DrainedBlock> blocks{{0, 100, {makeTimeTag(1, 10), makeTimeTag(2, 20)}},
                                   {100, 200, {}},
                                   {200, 300, {}},
                                   {300, 400, {}},
                                   {400, 500, {makeTimeTag(2, 450)}}};
  InputDelaySource source(std::make_unique<ScriptedSource>(blocks), {{1, 350}});
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  CHECK(stream.begin() == 0);
  CHECK(stream.end() == 850);
  CHECK(stream.tags ==
        std::vector<Tag>{makeTimeTag(2, 20), makeTimeTag(1, 360), makeTimeTag(2, 450)});
  // Time is handed on block by block, not held back until the delayed tag is due.
  REQUIRE(stream.blocks.size() >= 5);
  CHECK(stream.blocks[1].end == 200);
}

TEST_CASE("Input delays split the output into blocks no larger than the inner source's", "[io]") {
  SyntheticConfig config;
  config.channels = demoChannels();
  config.block_size = 500;
  config.duration_ps = 200'000'000;
  SyntheticSource plain(config);
  const DrainedStream undelayed = drain(plain);
  const std::map<channel_t, timestamp_t> delays{{2, -1000}, {3, 40'000'000}};
  InputDelaySource source(std::make_unique<SyntheticSource>(config), delayList(delays));
  const DrainedStream stream = drain(source);
  requireWellFormed(stream);
  CHECK(stream.tags == delayedReference(undelayed.tags, delays));
  CHECK(stream.end() == undelayed.end() + 40'000'000);
  for (const DrainedBlock& block : stream.blocks) CHECK(block.tags.size() <= 500);
}

TEST_CASE("[[source.delay]] tables delay any source kind", "[io]") {
  SourceSpec spec;
  spec.kind = "synthetic";
  spec.parameters.set("duration_ps", std::int64_t{100'000'000});
  const DrainedStream undelayed = [&] {
    auto source = makeSource(spec);
    return drain(*source);
  }();
  spec.tables["delay"] = {
      Parameters{{"channel", std::int64_t{2}}, {"delay_ps", std::int64_t{-1000}}},
      Parameters{{"channel", std::int64_t{4}}, {"delay_ps", std::int64_t{77}}}};
  auto source = makeSource(spec);
  CHECK_THAT(source->describe(), Contains("with input delays 2: -1000 ps, 4: 77 ps"));
  const DrainedStream stream = drain(*source);
  CHECK(stream.tags == delayedReference(undelayed.tags, {{2, -1000}, {4, 77}}));

  spec.tables["delay"] = {Parameters{{"channel", std::int64_t{2}}}};
  CHECK_THROWS_WITH(makeSource(spec), Contains("source.delay #0") && Contains("delay_ps"));
  spec.tables["delay"] = {
      Parameters{{"channel", std::int64_t{2}}, {"delay_ps", std::int64_t{1}}, {"by", 3.0}}};
  CHECK_THROWS_WITH(makeSource(spec), Contains("source.delay #0") && Contains("by"));
}

TEST_CASE("Input delays refuse bad channels and delays, naming them", "[io]") {
  const auto synthetic = [] {
    SyntheticConfig config;
    config.channels = demoChannels();
    config.duration_ps = 1'000'000;
    return std::make_unique<SyntheticSource>(config);
  };
  CHECK_THROWS_WITH(InputDelaySource(nullptr, {{1, 5}}), Contains("the source is null"));
  CHECK_THROWS_WITH(InputDelaySource(synthetic(), {{0, 5}}),
                    Contains("input delay of channel 0 is invalid (valid channels: 1..134217727"));
  CHECK_THROWS_WITH(InputDelaySource(synthetic(), {{2, 5}, {2, 6}}),
                    Contains("input delay of channel 2 is given twice"));
  CHECK_THROWS_WITH(InputDelaySource(synthetic(), {{9, 5}}),
                    Contains("input delay of channel 9 is invalid") &&
                        Contains("(valid: 1, 2, 3, 4, 5, 6, 7, 8)"));
  CHECK_THROWS_WITH(InputDelaySource(synthetic(), {{2, kStreamTimeLimit}}),
                    Contains("input delay 4611686018427387904 ps of channel 2 is invalid "
                             "(valid: -2^62 < delay < 2^62 ps)"));
  // A delayed time beyond the range of stream times is a data error naming the tag.
  auto near_limit = std::make_shared<const std::vector<Tag>>(
      std::vector<Tag>{makeTimeTag(1, kStreamTimeLimit - 10)});
  InputDelaySource late(std::make_unique<MemorySource>(near_limit, 16), {{1, 100}});
  BlockBuffer block;
  CHECK_THROWS_AS(late.next(block), DataError);
  InputDelaySource again(std::make_unique<MemorySource>(near_limit, 16), {{1, 100}});
  CHECK_THROWS_WITH(again.next(block), Contains("channel 1 at 4611686018427387894 ps") &&
                                           Contains("delayed by 100 ps"));
}

TEST_CASE("withInputDelays returns the source itself when no delay is listed", "[io]") {
  SyntheticConfig config;
  config.channels = demoChannels();
  auto source = std::make_unique<SyntheticSource>(config);
  const Source* raw = source.get();
  CHECK(withInputDelays(std::move(source), {}).get() == raw);
}
