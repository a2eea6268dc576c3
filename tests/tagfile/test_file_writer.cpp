#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "support/drain.hpp"
#include "support/synthetic.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/merged_source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"

using namespace tagflow;

namespace {

// Every array and fact of two result sets, compared exactly (NaN equal to NaN, bit for bit).
void requireIdentical(const ResultSet& live, const ResultSet& replay) {
  REQUIRE(live.arrays.size() == replay.arrays.size());
  for (std::size_t i = 0; i < live.arrays.size(); ++i) {
    INFO("array " << live.arrays[i].name);
    CHECK(live.arrays[i].name == replay.arrays[i].name);
    CHECK(live.arrays[i].shape == replay.arrays[i].shape);
    REQUIRE(live.arrays[i].data.index() == replay.arrays[i].data.index());
    std::visit(
        [&](const auto& a) {
          const auto& b = std::get<std::decay_t<decltype(a)>>(replay.arrays[i].data);
          REQUIRE(a.size() == b.size());
          CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
        },
        live.arrays[i].data);
  }
  for (const auto& [key, value] : live.facts.entries()) {
    INFO("fact " << key);
    CHECK(formatParameter(value) == formatParameter(replay.facts.at(key)));
  }
}

SyntheticConfig liveConfig() {
  SyntheticConfig config = test::mixedConfig(40'000'000'000, 4096);  // 40 ms, ~340k tags
  config.overflows = {{12'000'000'000, 12'500'000'000}};
  return config;
}

}  // namespace

TEST_CASE("FileWriter: a replay gives bit-identical Counter and Correlation results",
          "[tagfile][graph]") {
  test::TempDir dir;
  const std::vector<channel_t> channels = {1, 2, 3, -1};
  const std::string path = dir.file("live.tags");
  const int threads = GENERATE(1, 2);

  SyntheticSource live_source(liveConfig());
  MeasurementGraph live(live_source, GraphOptions{.threads = threads});
  auto& live_counter = live.emplace<Counter>("counter", channels, 1'000'000'000, 50);
  auto& live_correlation = live.emplace<Correlation>("correlation", 3, 1, 100, 200);
  auto& writer = live.emplace<FileWriter>("writer", path, channels, kDefaultMaxFileSize, "mixed");
  live.run();
  writer.flush();
  CHECK(writer.getTotalEvents() > 300'000);
  CHECK(writer.getTotalSize() > 0);

  FileReader reader(path, 1000);  // other block boundaries than live
  CHECK(reader.getConfiguration() == "mixed");
  MeasurementGraph replay(reader, GraphOptions{.threads = threads});
  auto& replay_counter = replay.emplace<Counter>("counter", channels, 1'000'000'000, 50);
  auto& replay_correlation = replay.emplace<Correlation>("correlation", 3, 1, 100, 200);
  replay.run();

  requireIdentical(live_counter.getResults(), replay_counter.getResults());
  requireIdentical(live_correlation.getResults(), replay_correlation.getResults());
  CHECK(replay_counter.getOverflowCount() == 1);
}

TEST_CASE("FileWriter: split(new_path) goes on in a new set that replays after the first",
          "[tagfile][graph]") {
  test::TempDir dir;
  const std::vector<channel_t> channels = {1, 2, 3, -1};
  const std::vector<std::string> paths = {dir.file("a.tags"), dir.file("b.tags"),
                                          dir.file("c.tags")};
  SyntheticSource live_source(liveConfig());
  MeasurementGraph live(live_source, GraphOptions{.threads = 2});
  auto& live_counter = live.emplace<Counter>("counter", channels, 1'000'000'000, 50);
  auto& writer = live.emplace<FileWriter>("writer", paths[0], channels);
  // The first cut falls inside the overflow interval of 12 to 12.5 ms.
  live.run(12'200'000'000);
  CHECK_THROWS_AS(writer.split(paths[0]), InvalidArgument);
  CHECK_THROWS_AS(writer.split(dir.file("missing/x.tags")), IoError);
  CHECK(writer.getPath() == paths[0]);
  writer.split(paths[1]);
  CHECK(writer.getPath() == paths[1]);
  live.run(10'000'000'000);
  writer.split(paths[2]);
  live.run();
  writer.close();

  // The second set begins inside the interval, the third where the second ended.
  FileReader second(paths[1], 1000);
  const test::DrainedStream b = test::drain(second);
  REQUIRE_FALSE(b.tags.empty());
  CHECK(b.begin() == 12'200'000'000);
  CHECK(b.tags.front().type == TagType::OverflowBegin);
  CHECK(b.tags.front().time == 12'200'000'000);
  CHECK(b.end() == 22'200'000'000);

  std::vector<MergedInput> inputs;
  for (const std::string& path : paths) {
    inputs.push_back(MergedInput{std::make_unique<FileReader>(path, 1000)});
  }
  MergedSource sets(std::move(inputs));
  MeasurementGraph replay(sets, GraphOptions{.threads = 2});
  auto& replay_counter = replay.emplace<Counter>("counter", channels, 1'000'000'000, 50);
  replay.run();
  requireIdentical(live_counter.getResults(), replay_counter.getResults());
  CHECK(replay_counter.getOverflowCount() == 1);
  std::uint64_t bytes = 0;
  for (const std::string& path : paths) bytes += std::filesystem::file_size(path);
  CHECK(writer.getTotalSize() > bytes / 2);
  CHECK(writer.getTotalSize() <= bytes);
}

TEST_CASE("FileWriter: records its channels and every special tag, markers and parts",
          "[tagfile]") {
  test::TempDir dir;
  const SyntheticConfig config = liveConfig();
  const test::DrainedStream stream = test::drainSynthetic(config);
  const std::string path = dir.file("part.tags");

  FileWriter writer("writer", path, {1, -1}, 200'000, "synthetic, liveConfig()");
  // Its parameters, as the results file stores them, hold every argument.
  CHECK(writer.parameters().getString("configuration") == "synthetic, liveConfig()");
  CHECK(writer.parameters().getInt("max_file_size") == 200'000);
  writer.streamStarting();
  for (std::size_t i = 0; i < stream.blocks.size(); ++i) {
    const auto& block = stream.blocks[i];
    BlockBuffer buffer;
    buffer.storage = block.tags;
    buffer.publishStorage();
    buffer.begin_time = block.begin;
    buffer.end_time = block.end;
    writer.processBlock(buffer.view(i));
    if (i == stream.blocks.size() / 2) writer.setMarker("half way");
  }
  writer.streamEnded();
  writer.close();

  std::vector<Tag> expected;
  for (const Tag& tag : stream.tags) {
    if (tag.type != TagType::TimeTag || tag.channel == 1 || tag.channel == -1) {
      expected.push_back(tag);
    }
  }
  FileReader reader(path);
  CHECK(reader.getChannelList() == std::vector<channel_t>{1, -1});
  CHECK(reader.getConfiguration() == "synthetic, liveConfig()");
  const test::DrainedStream replay = test::drain(reader);
  CHECK(replay.tags == expected);
  CHECK(replay.begin() == stream.begin());
  CHECK(replay.end() == stream.end());
  CHECK(reader.getLastMarker() == "half way");
  CHECK(std::count_if(expected.begin(), expected.end(),
                      [](const Tag& tag) { return tag.type == TagType::MissedEvents; }) > 0);
  CHECK(std::filesystem::exists(TagFileWriter::partPath(path, 2)));  // max_file_size split it
}

TEST_CASE("FileWriter: a capture starting inside an overflow interval records its begin",
          "[tagfile]") {
  test::TempDir dir;
  const std::string path = dir.file("inside.tags");
  FileWriter writer("writer", path, {1});
  writer.stop();
  writer.streamStarting();
  BlockBuffer buffer;
  buffer.storage = {Tag{TagType::OverflowBegin, 0, 0, 0, 10}, makeTimeTag(1, 20)};
  buffer.publishStorage();
  buffer.begin_time = 0;
  buffer.end_time = 100;
  writer.processBlock(buffer.view(0));
  writer.start();
  buffer.storage = {Tag{TagType::MissedEvents, 0, 4, 1, 150},
                    Tag{TagType::OverflowEnd, 0, 0, 0, 150}, makeTimeTag(1, 160)};
  buffer.publishStorage();
  buffer.begin_time = 100;
  buffer.end_time = 200;
  writer.processBlock(buffer.view(1));
  writer.streamEnded();
  writer.close();

  FileReader reader(path);
  const auto replay = test::drain(reader);
  const std::vector<Tag> expected = {Tag{TagType::OverflowBegin, 0, 0, 0, 100},
                                     Tag{TagType::MissedEvents, 0, 4, 1, 150},
                                     Tag{TagType::OverflowEnd, 0, 0, 0, 150}, makeTimeTag(1, 160)};
  CHECK(replay.tags == expected);
  CHECK(replay.begin() == 100);
  CHECK(replay.end() == 200);
}

TEST_CASE("FileWriter: a pause inside an overflow interval keeps the replay's brackets balanced",
          "[tagfile]") {
  // Stopped at 50 inside the overflow that began at 30; resumed at 200, after it ended at 100
  // (the replay leaves it at the resumption) or, in a second run, inside a later one.
  for (const bool resumes_inside_another : {false, true}) {
    INFO("resumes inside a later overflow: " << resumes_inside_another);
    test::TempDir dir;
    const std::string path = dir.file("paused.tags");
    FileWriter writer("writer", path, {1});
    writer.streamStarting();
    BlockBuffer buffer;
    std::uint64_t sequence = 0;
    const auto feed = [&](timestamp_t begin, timestamp_t end, std::vector<Tag> tags) {
      buffer.storage = std::move(tags);
      buffer.publishStorage();
      buffer.begin_time = begin;
      buffer.end_time = end;
      writer.processBlock(buffer.view(sequence++));
    };
    feed(0, 50, {makeTimeTag(1, 10), Tag{TagType::OverflowBegin, 0, 0, 0, 30}});
    writer.stop();
    std::vector<Tag> paused{makeTimeTag(1, 60), Tag{TagType::OverflowEnd, 0, 0, 0, 100}};
    if (resumes_inside_another) paused.push_back(Tag{TagType::OverflowBegin, 0, 0, 0, 150});
    feed(50, 200, paused);
    writer.start();
    feed(200, 300, {makeTimeTag(1, 250)});
    writer.streamEnded();
    writer.close();

    FileReader reader(path);
    const auto replay = test::drain(reader);
    std::vector<Tag> expected = {makeTimeTag(1, 10), Tag{TagType::OverflowBegin, 0, 0, 0, 30}};
    if (!resumes_inside_another) expected.push_back(Tag{TagType::OverflowEnd, 0, 0, 0, 200});
    expected.push_back(makeTimeTag(1, 250));
    CHECK(replay.tags == expected);
  }
}

TEST_CASE("FileWriter: keeps exactly its channels' tags whatever runs of others lie between them",
          "[tagfile]") {
  // Runs of recorded and other channels of every length from 1 to 9 at every offset: the
  // filter takes four tags at a time and copies a group whole when all four are recorded.
  std::vector<Tag> tags;
  timestamp_t time = 0;
  for (std::size_t kept_run = 1; kept_run <= 9; ++kept_run) {
    for (std::size_t other_run = 0; other_run <= 9; ++other_run) {
      for (std::size_t k = 0; k < kept_run; ++k) tags.push_back(makeTimeTag(1 + k % 2, ++time));
      for (std::size_t k = 0; k < other_run; ++k) tags.push_back(makeTimeTag(7, ++time));
    }
  }
  std::vector<Tag> expected;
  std::copy_if(tags.begin(), tags.end(), std::back_inserter(expected),
               [](const Tag& tag) { return tag.channel != 7; });
  test::TempDir dir;
  const std::string path = dir.file("filtered.tags");
  for (const std::size_t block_tags : {std::size_t{1}, std::size_t{5}, std::size_t{4096}}) {
    INFO("blocks of " << block_tags << " tags");
    {
      FileWriter writer("writer", path, {1, 2});
      writer.streamStarting();
      for (std::size_t begin = 0, index = 0; begin < tags.size(); begin += block_tags, ++index) {
        const std::size_t end = std::min(tags.size(), begin + block_tags);
        BlockBuffer buffer;
        buffer.storage.assign(tags.begin() + static_cast<std::ptrdiff_t>(begin),
                              tags.begin() + static_cast<std::ptrdiff_t>(end));
        buffer.publishStorage();
        buffer.begin_time = tags[begin].time;
        buffer.end_time = end < tags.size() ? tags[end].time : time + 1;
        writer.processBlock(buffer.view(index));
      }
      writer.streamEnded();
      writer.close();
    }
    FileReader reader(path);
    CHECK(test::drain(reader).tags == expected);
  }
}
