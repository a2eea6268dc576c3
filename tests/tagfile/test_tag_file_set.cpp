#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"
#include "tagflow/io/truncated_data.hpp"

using namespace tagflow;
using namespace tagflow::tagfile;

using test::writeBlocks;

TEST_CASE("tag file set: blocks, markers and parts come back in order", "[tagfile]") {
  test::TempDir dir;
  const auto tags = test::featureStream(3, 60000, {1, 2, 3, -4});
  const auto blocks = test::randomBlocks(4, tags, 4000);
  const Compression compression = GENERATE(Compression::None, Compression::Zstd, Compression::Lz4);

  TagFileOptions options;
  options.path = dir.file("rec.tags");
  options.max_file_size = 40'000;  // several parts
  options.compression = compression;
  options.configuration = "synthetic seed=3";
  options.channels = {1, 2, 3, -4};
  {
    TagFileWriter writer(options);
    writer.writeMarker("start", blocks.front().begin);
    writeBlocks(writer, std::vector<test::TestBlock>(blocks.begin(), blocks.begin() + 10),
                compression);
    writer.split();
    writer.writeMarker("after split", blocks[9].end);
    writeBlocks(writer, std::vector<test::TestBlock>(blocks.begin() + 10, blocks.end()),
                compression);
    CHECK(writer.partCount() >= 3);
    CHECK(writer.tagsWritten() == tags.size());
    writer.close();
    std::uint64_t on_disk = 0;
    for (std::uint32_t part = 0; part < writer.partCount(); ++part) {
      on_disk += std::filesystem::file_size(TagFileWriter::partPath(options.path, part));
    }
    CHECK(on_disk == writer.bytesWritten());
  }

  FileReader reader(options.path, 1000);
  CHECK(reader.getConfiguration() == "synthetic seed=3");
  CHECK(reader.getChannelList() == std::vector<channel_t>{1, 2, 3, -4});
  CHECK(reader.getLastMarker().empty());
  REQUIRE(reader.hasData());
  CHECK(reader.getLastMarker() == "start");
  const test::DrainedStream replay = test::drain(reader);
  CHECK(replay.tags == tags);
  CHECK(replay.begin() == blocks.front().begin);
  CHECK(replay.end() == blocks.back().end);
  CHECK(reader.getLastMarker() == "after split");
  CHECK_FALSE(reader.hasData());
  for (const auto& block : replay.blocks) CHECK(block.tags.size() <= 1000 + 100);
}

TEST_CASE("tag file set: a later part read alone, part naming", "[tagfile]") {
  CHECK(TagFileWriter::partPath("/a/rec.tags", 0) == "/a/rec.tags");
  CHECK(TagFileWriter::partPath("/a/rec.tags", 3) == "/a/rec.3.tags");
  CHECK(TagFileWriter::partPath("/a.b/rec", 2) == "/a.b/rec.2");

  test::TempDir dir;
  const auto tags = test::featureStream(8, 4000, {1, 2});
  const auto blocks = test::randomBlocks(9, tags, 1000);
  TagFileOptions options;
  options.path = dir.file("set.tags");
  {
    TagFileWriter writer(options);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (i == blocks.size() / 2) writer.split();
      writeBlocks(writer, {blocks[i]}, Compression::None);
    }
  }
  FileReader second(dir.file("set.1.tags"));
  const auto rest = test::drain(second);
  std::vector<Tag> expected;
  for (std::size_t i = blocks.size() / 2; i < blocks.size(); ++i) {
    expected.insert(expected.end(), blocks[i].tags.begin(), blocks[i].tags.end());
  }
  CHECK(rest.tags == expected);

  SECTION("a missing part is named") {
    std::filesystem::remove(dir.file("set.1.tags"));
    FileReader first(options.path);
    CHECK_THROWS_WITH(test::drain(first),
                      Catch::Contains("set.1.tags") && Catch::Contains("does not exist"));
    FileReader again(options.path);
    CHECK_THROWS_AS(test::drain(again), TruncatedData);
  }
}

TEST_CASE("tag file set: flush leaves a readable set that later records extend", "[tagfile]") {
  test::TempDir dir;
  const auto tags = test::featureStream(5, 3000, {1, 2, 3});
  const auto blocks = test::randomBlocks(6, tags, 500);
  TagFileOptions options;
  options.path = dir.file("live.tags");
  TagFileWriter writer(options);
  writeBlocks(writer, {blocks.begin(), blocks.begin() + 2}, Compression::None);
  writer.flush();
  {
    FileReader early(options.path);
    std::vector<Tag> expected = blocks[0].tags;
    expected.insert(expected.end(), blocks[1].tags.begin(), blocks[1].tags.end());
    CHECK(test::drain(early).tags == expected);
  }
  writeBlocks(writer, {blocks.begin() + 2, blocks.end()}, Compression::None);
  writer.close();
  FileReader all(options.path);
  CHECK(test::drain(all).tags == tags);
}

TEST_CASE("tag file set: every record leaves the set complete on disk, across parts too",
          "[tagfile]") {
  // What a writer killed between two records leaves reads to its end without an error.
  test::TempDir dir;
  const auto tags = test::featureStream(7, 3000, {1, 2, 3});
  const auto blocks = test::randomBlocks(8, tags, 300);
  TagFileOptions options;
  options.path = dir.file("killed.tags");
  options.max_file_size = kMinMaxFileSize;  // a part every record or two
  TagFileWriter writer(options);
  {
    FileReader empty(options.path);
    CHECK(test::drain(empty).tags.empty());
  }
  std::vector<Tag> expected;
  for (const auto& block : blocks) {
    writeBlocks(writer, {block}, Compression::None);
    expected.insert(expected.end(), block.tags.begin(), block.tags.end());
    FileReader reader(options.path);
    CHECK(test::drain(reader).tags == expected);
  }
  CHECK(writer.partCount() > 2);
}

TEST_CASE("tag file source: replay speed paces stream time against wall time", "[tagfile]") {
  test::TempDir dir;
  TagFileOptions options;
  options.path = dir.file("paced.tags");
  {
    TagFileWriter writer(options);
    std::vector<test::TestBlock> blocks;
    for (int i = 0; i < 10; ++i) {  // 10 blocks of 10 ms
      blocks.push_back({i * 10'000'000'000LL,
                        (i + 1) * 10'000'000'000LL,
                        {makeTimeTag(1, i * 10'000'000'000LL + 5)}});
    }
    writeBlocks(writer, blocks, Compression::None);
  }
  CHECK_THROWS_AS(FileReader(options.path, 16384, 0.05), InvalidArgument);
  CHECK_THROWS_AS(FileReader(options.path, 16384, 0.0), InvalidArgument);
  FileReader paced(options.path, 16384, 2.0);  // 100 ms of stream in about 50 ms
  const auto began = std::chrono::steady_clock::now();
  const auto stream = test::drain(paced);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  CHECK(stream.tags.size() == 10);
  CHECK(seconds >= 0.049);
  CHECK(seconds < 2.0);
}
