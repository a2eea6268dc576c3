// mergeStreamFiles: two recordings merged into a split set read back as the MergedSource of
// the same tags gives (tests/io/test_merged_source.cpp checks that against brute force), the
// inputs named in the output's configuration; bad arguments are named, and an output that is
// a part an input is read on into is refused before anything is written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/merged_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/merge_stream_files.hpp"

using namespace tagflow;
using Catch::Contains;

namespace {

struct Recorded {
  std::vector<Tag> tags;
  timestamp_t begin;
  timestamp_t end;
};

void record(const std::string& path, const Recorded& recorded, std::vector<channel_t> channels,
            const std::string& configuration) {
  TagFileOptions options;
  options.path = path;
  options.channels = std::move(channels);
  options.configuration = configuration;
  TagFileWriter writer(options);
  auto blocks = test::randomBlocks(7, recorded.tags, 3000);
  blocks.front().begin = recorded.begin;
  blocks.back().end = recorded.end;
  test::writeBlocks(writer, blocks, tagfile::Compression::None);
  writer.close();
}

}  // namespace

TEST_CASE("mergeStreamFiles writes the merged stream as a split set", "[tagfile][merge]") {
  test::TempDir dir;
  const Recorded first{
      test::withOverflow(test::randomTags(11, {1, 2}, 1000, 3'000'000, 60), 800'000, 900'000), 1000,
      3'000'000};
  const Recorded second{
      test::withOverflow(test::randomTags(12, {1, -1}, 0, 2'000'000, 500), 850'000, 1'200'000), 0,
      2'000'000};
  record(dir.file("a.tags"), first, {1, 2}, "tagger A");
  record(dir.file("b.tags"), second, {1, -1}, "tagger B");
  const bool overlap_only = GENERATE(false, true);
  const auto compression = GENERATE(tagfile::Compression::None, tagfile::Compression::Zstd);

  const MergedFilesSummary summary =
      mergeStreamFiles(dir.file("merged.tags"), {dir.file("a.tags"), dir.file("b.tags")}, {0, 4},
                       {0, 500'000}, overlap_only, 4096, compression);
  CHECK(std::filesystem::exists(dir.file("merged.1.tags")));  // split into parts

  std::vector<MergedInput> inputs;
  for (const Recorded* recorded : {&first, &second}) {
    inputs.push_back(MergedInput{
        std::make_unique<MemorySource>(std::make_shared<const std::vector<Tag>>(recorded->tags),
                                       1000, recorded->begin, recorded->end)});
  }
  inputs[1].channel_offset = 4;
  inputs[1].time_offset = 500'000;
  MergedSource expected_source(std::move(inputs), overlap_only);
  const test::DrainedStream expected = test::drain(expected_source);

  FileReader reader(dir.file("merged.tags"));
  const test::DrainedStream merged = test::drain(reader);
  test::requireWellFormed(merged);
  CHECK(merged.tags == expected.tags);
  CHECK(merged.begin() == expected.begin());
  CHECK(merged.end() == expected.end());
  CHECK(summary.tags == expected.tags.size());
  CHECK(summary.begin == expected.begin());
  CHECK(summary.end == expected.end());
  CHECK(reader.getChannelList() == std::vector<channel_t>{-5, 1, 2, 5});
  CHECK_THAT(reader.getConfiguration(),
             Contains("a.tags (channel offset 0, time offset 0 ps); its configuration: tagger A") &&
                 Contains("b.tags (channel offset 4, time offset 500000 ps); its configuration: "
                          "tagger B"));
}

TEST_CASE("mergeStreamFiles names bad arguments", "[tagfile][merge]") {
  test::TempDir dir;
  const Recorded one{test::randomTags(1, {1}, 0, 100'000, 100), 0, 100'000};
  record(dir.file("a.tags"), one, {1}, "");
  const std::vector<std::string> inputs = {dir.file("a.tags"), dir.file("a.tags")};
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("m.tags"), inputs, {1}),
                    Contains("1 channel offsets for 2 inputs"));
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("m.tags"), inputs, {}, {0, 1, 2}),
                    Contains("3 time offsets for 2 inputs"));
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("m.tags"), {}), Contains("no inputs"));
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("a.tags"), inputs),
                    Contains("is the input") && Contains("a.tags"));
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("m.tags"), inputs, {}, {}, false, 10),
                    Contains("max_file_size 10 bytes is invalid"));
  CHECK_THROWS_AS(mergeStreamFiles(dir.file("m.tags"), {dir.file("missing.tags")}), IoError);
  // A merge that fails on the way removes what it wrote.
  CHECK_THROWS_WITH(mergeStreamFiles(dir.file("late.tags"), {dir.file("a.tags")}, {},
                                     {kStreamTimeLimit - 50'000}),
                    Catch::Contains("leaves"));
  CHECK_FALSE(std::filesystem::exists(dir.file("late.tags")));
  // The same recording twice on separate channels: every tag twice.
  const MergedFilesSummary summary = mergeStreamFiles(dir.file("m.tags"), inputs, {0, 1});
  CHECK(summary.tags == 2 * one.tags.size());
}

TEST_CASE("mergeStreamFiles refuses an output that a later part given as input reads on into",
          "[tagfile][merge]") {
  test::TempDir dir;
  TagFileOptions options;
  options.path = dir.file("p.tags");
  options.max_file_size = kMinMaxFileSize;
  TagFileWriter writer(options);
  const std::vector<Tag> tags = test::randomTags(5, {1, 2}, 0, 10'000'000, 2000);
  test::writeBlocks(writer, test::randomBlocks(6, tags, 500), tagfile::Compression::None);
  writer.close();
  const std::uint32_t parts = writer.partCount();
  REQUIRE(parts >= 3);
  const auto partsFrom = [&](std::uint32_t first) {
    std::vector<std::string> paths;
    for (std::uint32_t part = first; part < parts; ++part) {
      paths.push_back(TagFileWriter::partPath(options.path, part));
    }
    return paths;
  };
  // The reader of part 1 goes on into part 2, named after the set's part 0, not after part 1.
  CHECK(partsReadAfter(dir.file("p.1.tags")) == partsFrom(2));
  CHECK(partsReadAfter(dir.file("p.tags")) == partsFrom(1));
  CHECK(partsReadAfter(dir.file("missing.tags")).empty());

  const auto bytesOf = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string part_2 = bytesOf(dir.file("p.2.tags"));
  CHECK_THROWS_WITH(
      mergeStreamFiles(dir.file("p.2.tags"), {dir.file("p.1.tags")}),
      Contains("the output '" + dir.file("p.2.tags") + "' is '" + dir.file("p.2.tags") +
               "', a later part of the input '" + dir.file("p.1.tags") + "'"));
  const bool part_2_unchanged = bytesOf(dir.file("p.2.tags")) == part_2;
  CHECK(part_2_unchanged);
  // The output p.tags would go on into p.1.tags, which is the input: refused before any write.
  const std::string part_1 = bytesOf(dir.file("p.1.tags"));
  const std::string part_0 = bytesOf(dir.file("p.tags"));
  CHECK_THROWS_WITH(
      mergeStreamFiles(dir.file("p.tags"), {dir.file("p.1.tags")}),
      Contains("the output '" + dir.file("p.tags") + "' goes on into its part '" +
               dir.file("p.1.tags") + "', which is the input '" + dir.file("p.1.tags") + "'"));
  const bool set_unchanged =
      bytesOf(dir.file("p.1.tags")) == part_1 && bytesOf(dir.file("p.tags")) == part_0;
  CHECK(set_unchanged);
}
