// Raw tag files: RawFileWriter then RawFileSource gives back the same tags as tiling blocks
// that start at the first tag; corrupt files are named by index and byte offset, and a file cut
// inside a record yields its complete tags first; one cut while it is read ends with an IoError.
#include <catch2/catch.hpp>

#include <limits>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>

#include "support/drain.hpp"
#include "support/generators.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/tagfile/format.hpp"
#include "tagflow/io/truncated_data.hpp"
#include "tagflow/measurements/countrate.hpp"

using namespace tagflow;
using namespace tagflow::test;
using Catch::Contains;

namespace {

void writeFile(const std::string& path, const std::vector<Tag>& tags, std::size_t chunk) {
  RawFileWriter writer(path);
  for (std::size_t i = 0; i < tags.size(); i += chunk) {
    writer.write(std::span<const Tag>(tags).subspan(i, std::min(chunk, tags.size() - i)));
  }
  CHECK(writer.bytesWritten() == tags.size() * sizeof(Tag));
  writer.close();
}

}  // namespace

TEST_CASE("A raw file round trip gives back the same tags", "[raw_file]") {
  // More tags than most of the block sizes below, with special tags and equal times.
  auto tags = randomTags(31, {1, 2, -2, 5}, 7'000'000, 7'000'000 + 150'000 * 100, 400);
  tags = withOverflow(tags, 9'000'000, 9'500'000);
  for (std::size_t i = 100; i < 110; ++i) tags[i].time = tags[99].time;
  REQUIRE(tags.size() > 140'000);
  TempDir dir;
  const std::string path = dir.file("tags.raw");
  writeFile(path, tags, 10'007);
  CHECK(std::filesystem::file_size(path) == tags.size() * 16);

  const std::size_t block_size = GENERATE(1, 3, 4096, std::size_t{1} << 20);
  RawFileSource source(path, block_size);
  CHECK(source.tagCount() == tags.size());
  CHECK(source.maxBlockTags() == block_size + 1);  // the block and the record after it
  const DrainedStream stream = drain(source);
  INFO("block_size " << block_size);
  requireWellFormed(stream);
  CHECK(stream.tags == tags);
  CHECK(stream.begin() == tags.front().time);
  CHECK(stream.end() == tags.back().time + 1);
  for (const auto& block : stream.blocks) {
    REQUIRE_FALSE(block.tags.empty());
    if (block.tags.size() > block_size) {
      REQUIRE(block.tags.front().time == block.tags.back().time);
    }
  }
  BlockBuffer after;
  CHECK_FALSE(source.next(after));
}

TEST_CASE("A raw file drives a graph like any source", "[raw_file]") {
  const auto tags = randomTags(5, {1, 2}, 1'000, 20'000'000, 2'000);
  TempDir dir;
  writeFile(dir.file("t.raw"), tags, tags.size());
  RawFileSource source(dir.file("t.raw"), 256);
  Countrate countrate("rate", {1, 2});
  MeasurementGraph graph(source, GraphOptions{.threads = 2});
  graph.add(countrate);
  const Profile profile = graph.run();
  CHECK(profile.tags == tags.size());
  CHECK(countrate.getCaptureDuration() == tags.back().time + 1 - tags.front().time);
  CHECK(countrate.getCountsTotal() ==
        std::vector<std::int64_t>{
            static_cast<std::int64_t>(countTimeTags(tags, 1, 0, tags.back().time + 1)),
            static_cast<std::int64_t>(countTimeTags(tags, 2, 0, tags.back().time + 1))});
  CHECK_THAT(source.describe(), Contains("t.raw"));
}

TEST_CASE("An empty raw file is an empty stream", "[raw_file]") {
  TempDir dir;
  writeFile(dir.file("empty.raw"), {}, 1);
  RawFileSource source(dir.file("empty.raw"), 16);
  CHECK(source.tagCount() == 0);
  BlockBuffer buffer;
  CHECK_FALSE(source.next(buffer));
}

TEST_CASE("RawFileSource names the first unsorted tag by index and byte offset", "[raw_file]") {
  TempDir dir;
  SECTION("near the start") {
    std::vector<Tag> tags{makeTimeTag(1, 10), makeTimeTag(1, 20), makeTimeTag(1, 30),
                          makeTimeTag(1, 40), makeTimeTag(1, 50), makeTimeTag(1, 45)};
    writeFile(dir.file("bad.raw"), tags, 100);
    RawFileSource source(dir.file("bad.raw"), 2);
    REQUIRE_THROWS_AS(drain(source), DataError);
    RawFileSource again(dir.file("bad.raw"), 2);
    REQUIRE_THROWS_WITH(drain(again), Contains("tag 5") && Contains("byte offset 80") &&
                                          Contains("45 ps") && Contains("50 ps"));
  }
  SECTION("deep in the file") {
    auto tags = randomTags(2, {1}, 0, 100'000'000, 1000);
    REQUIRE(tags.size() > 70'001);
    tags[70'000].time = tags[69'999].time - 1;
    writeFile(dir.file("bad.raw"), tags, 4096);
    RawFileSource source(dir.file("bad.raw"), 1000);
    REQUIRE_THROWS_WITH(drain(source), Contains("tag 70000") && Contains("byte offset 1120000") &&
                                           Contains("bad.raw"));
  }
}

TEST_CASE("RawFileSource names a tag outside the stream's times", "[raw_file]") {
  TempDir dir;
  SECTION("the last, at the type's end, where one past it would wrap") {
    writeFile(dir.file("late.raw"),
              {makeTimeTag(1, 10), makeTimeTag(1, std::numeric_limits<timestamp_t>::max())}, 100);
    RawFileSource source(dir.file("late.raw"), 100);
    REQUIRE_THROWS_WITH(drain(source), Contains("tag 1 (byte offset 16) at "
                                                "9223372036854775807 ps is invalid (valid: "
                                                "-2^62..2^62 ps"));
  }
  SECTION("the first of several beyond the bound, in a later run") {
    auto tags = randomTags(3, {1}, 0, 10'000'000, 1000);
    const std::size_t first_late = tags.size();
    for (int i = 1; i <= 5; ++i) tags.push_back(makeTimeTag(2, kStreamTimeLimit + i));
    writeFile(dir.file("late.raw"), tags, 4096);
    RawFileSource source(dir.file("late.raw"), 1000);
    REQUIRE_THROWS_WITH(drain(source), Contains("tag " + std::to_string(first_late) + " ("));
  }
  SECTION("the first, before the bound") {
    writeFile(dir.file("early.raw"), {makeTimeTag(1, -kStreamTimeLimit - 1), makeTimeTag(1, 5)},
              100);
    RawFileSource source(dir.file("early.raw"), 100);
    REQUIRE_THROWS_WITH(drain(source), Contains("tag 0 (byte offset 0)"));
  }
}

TEST_CASE("A raw file cut inside a record yields every complete tag, then names the cut one",
          "[raw_file]") {
  // What a writer killed in the middle of a tag leaves, after many blocks (70000 tags).
  TempDir dir;
  const auto tags = randomTags(3, {1, 2}, 0, 100'000'000, 1000);
  REQUIRE(tags.size() > 70'000);
  const std::vector<Tag> kept(tags.begin(), tags.begin() + 70'000);
  const std::size_t cut_into = GENERATE(1, 7, 15);
  const auto* bytes = reinterpret_cast<const unsigned char*>(tags.data());
  dir.writeBytes("cut.raw", bytes, kept.size() * sizeof(Tag) + cut_into);
  RawFileSource source(dir.file("cut.raw"), 1000);
  CHECK(source.tagCount() == kept.size());
  std::vector<Tag> read;
  BlockBuffer buffer;
  try {
    while (source.next(buffer)) read.insert(read.end(), buffer.tags.begin(), buffer.tags.end());
    FAIL("a cut raw file read to its end without an error");
  } catch (const TruncatedData& error) {
    CHECK_THAT(error.what(), Contains("cut.raw") && Contains("record at byte offset 1120000") &&
                                 Contains(std::to_string(cut_into) + " bytes into it"));
  }
  CHECK(read == kept);
  CHECK_FALSE(source.next(buffer));  // reported once, then the stream has ended
}

TEST_CASE("RawFileSource rejects corrupt files and bad arguments, naming them", "[raw_file]") {
  TempDir dir;
  const std::vector<Tag> tags{makeTimeTag(1, 10), makeTimeTag(1, 20), makeTimeTag(1, 30)};
  SECTION("unsorted, message names the index") {
    const std::vector<Tag> unsorted{makeTimeTag(1, 10), makeTimeTag(1, 30), makeTimeTag(1, 20)};
    writeFile(dir.file("u.raw"), unsorted, 3);
    RawFileSource source(dir.file("u.raw"), 8);
    REQUIRE_THROWS_WITH(drain(source),
                        Contains("tag 2") && Contains("byte offset 32") && Contains("20 ps"));
  }
  SECTION("an unknown tag type") {
    std::vector<Tag> bad = tags;
    bad[1].type = static_cast<TagType>(9);
    writeFile(dir.file("type.raw"), bad, 3);
    RawFileSource source(dir.file("type.raw"), 8);
    REQUIRE_THROWS_WITH(drain(source), Contains("type 9") && Contains("tag 1"));
  }
  SECTION("a tag file read as raw tags: named as what it is") {
    std::vector<Tag> bad = tags;
    std::memcpy(static_cast<void*>(&bad[0]), tagfile::kFileMagic.data(),
                tagfile::kFileMagic.size());
    writeFile(dir.file("recording.raw"), bad, 3);
    RawFileSource source(dir.file("recording.raw"), 8);
    REQUIRE_THROWS_WITH(drain(source), Contains("tag 0") && Contains("type 137") &&
                                           Contains("begins as a tagflow tag file"));
  }
  SECTION("a missing file") {
    REQUIRE_THROWS_AS(RawFileSource(dir.file("nope.raw"), 8), IoError);
    REQUIRE_THROWS_WITH(RawFileSource(dir.file("nope.raw"), 8), Contains("nope.raw"));
  }
  SECTION("a directory") {
    REQUIRE_THROWS_AS(RawFileSource(dir.path().string(), 8), IoError);
  }
  SECTION("a bad block size") {
    writeFile(dir.file("ok.raw"), tags, 3);
    REQUIRE_THROWS_AS(RawFileSource(dir.file("ok.raw"), 0), InvalidArgument);
    REQUIRE_THROWS_WITH(RawFileSource(dir.file("ok.raw"), 0), Contains("block_size 0"));
  }
  SECTION("a writer into a missing folder") {
    REQUIRE_THROWS_AS(RawFileWriter(dir.file("missing/out.raw")), IoError);
    REQUIRE_THROWS_WITH(RawFileWriter(dir.file("missing/out.raw")), Contains("missing/out.raw"));
  }
  SECTION("writing after close") {
    RawFileWriter writer(dir.file("closed.raw"));
    writer.close();
    writer.close();  // closing twice is harmless
    REQUIRE_THROWS_AS(writer.write(tags), IoError);
  }
}

TEST_CASE("A raw file writer given pieces of any size writes every byte once", "[raw_file]") {
  // Over two of the writer's chunks, given in pieces smaller and larger than one.
  const std::size_t chunk_tags = RawFileWriter::kChunkBytes / sizeof(Tag);
  const auto tags = randomTags(41, {1, 3}, 0, 240'000'000'000, 700'000);
  REQUIRE(tags.size() > 2 * chunk_tags + 1000);
  const std::vector<std::size_t> pieces = {1, 999, chunk_tags - 1000, chunk_tags + 7, 3};
  TempDir dir;
  const std::string path = dir.file("pieces.raw");
  {
    RawFileWriter writer(path);
    std::size_t at = 0;
    for (std::size_t k = 0; at < tags.size(); ++k) {
      const std::size_t count = std::min(pieces[k % pieces.size()], tags.size() - at);
      writer.write(std::span<const Tag>(tags).subspan(at, count));
      at += count;
    }
    CHECK(writer.bytesWritten() == tags.size() * sizeof(Tag));
    writer.close();
  }
  std::vector<Tag> read(tags.size() + 1);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(read.data()),
          static_cast<std::streamsize>(read.size() * sizeof(Tag)));
  CHECK(static_cast<std::size_t>(in.gcount()) == tags.size() * sizeof(Tag));
  read.resize(tags.size());
  CHECK(read == tags);
}

TEST_CASE("A raw file writer on a full device throws an IoError naming the file", "[raw_file]") {
  const auto tags = randomTags(43, {1}, 0, 10'000'000, 1000);
  SECTION("a chunk written while tags are given") {
    RawFileWriter writer("/dev/full");
    const std::size_t chunk_tags = RawFileWriter::kChunkBytes / sizeof(Tag);
    std::vector<Tag> many(chunk_tags + 1, tags.front());
    REQUIRE_THROWS_WITH(writer.write(many), Contains("/dev/full") && Contains("after 0 bytes"));
    REQUIRE_THROWS_AS(writer.write(tags), IoError);  // closed by the failure
  }
  SECTION("the last piece written at close") {
    RawFileWriter writer("/dev/full");
    writer.write(tags);
    REQUIRE_THROWS_WITH(writer.close(), Contains("/dev/full") && Contains("No space left"));
  }
}

TEST_CASE("A run of tags at one time stays in one block, up to a bound", "[raw_file]") {
  TempDir dir;
  SECTION("the whole file at one time, read a tag at a time") {
    const std::vector<Tag> tags(10, makeTimeTag(1, 77));
    writeFile(dir.file("one_time.raw"), tags, 3);
    RawFileSource source(dir.file("one_time.raw"), 1);
    const DrainedStream stream = drain(source);
    REQUIRE(stream.blocks.size() == 1);
    CHECK(stream.tags == tags);
    CHECK(stream.end() == 78);
  }
  SECTION("a disorder found while the run is read whole names its tag") {
    std::vector<Tag> tags(6, makeTimeTag(1, 50));
    tags.push_back(makeTimeTag(1, 49));
    writeFile(dir.file("run_then_back.raw"), tags, 7);
    RawFileSource source(dir.file("run_then_back.raw"), 2);
    REQUIRE_THROWS_WITH(drain(source),
                        Contains("tag 6") && Contains("byte offset 96") && Contains("49 ps"));
  }
  SECTION("a file of zero bytes: every tag at time 0, more than a block may hold") {
    // Sparse: what a crash can leave where a file was allocated ahead of its records.
    const std::string path = dir.file("zeros.raw");
    { std::ofstream(path, std::ios::binary); }
    std::filesystem::resize_file(path, ((std::uint64_t{1} << 24) + (1 << 14)) * sizeof(Tag));
    RawFileSource source(path, 16384);
    BlockBuffer buffer;
    REQUIRE_THROWS_WITH(source.next(buffer), Contains("zeros.raw") && Contains("tag 0") &&
                                                 Contains("share the time 0 ps"));
  }
}

TEST_CASE("A raw file cut shorter while it is read ends the read with an IoError naming it",
          "[raw_file]") {
  // Blocks hold copies: the block handed out before the cut stays valid after it.
  TempDir dir;
  const auto tags = randomTags(5, {1, 2}, 0, 400'000'000, 1000);
  REQUIRE(tags.size() > 200'000);
  writeFile(dir.file("shrinking.raw"), tags, tags.size());
  RawFileSource source(dir.file("shrinking.raw"), 1000);
  BlockBuffer first;
  REQUIRE(source.next(first));
  REQUIRE(first.tags.size() == 1000);
  std::filesystem::resize_file(dir.file("shrinking.raw"), 1000 * sizeof(Tag));
  BlockBuffer buffer;
  std::vector<Tag> read(first.tags.begin(), first.tags.end());
  try {
    while (source.next(buffer)) read.insert(read.end(), buffer.tags.begin(), buffer.tags.end());
    FAIL("a raw file cut while being read was read to its end");
  } catch (const IoError& error) {
    CHECK_THAT(error.what(), Contains("shrinking.raw") && Contains("cut to 16000 bytes"));
  }
  // The cut is found on the first read past it: what was handed out is the file's beginning.
  CHECK(read.size() == 1000);
  CHECK(std::equal(read.begin(), read.end(), tags.begin()));
  CHECK(std::equal(first.tags.begin(), first.tags.end(), tags.begin()));
}
