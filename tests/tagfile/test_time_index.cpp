// The time index at the end of every complete part: it lists every tags record with its
// offset and time range; a reader seeks with it to any time and replays exactly the tags from
// the record that holds that time on, across parts; a set cut while recording has no index
// (seeking says so, nothing moves); a damaged index is an error naming it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"

using namespace tagflow;
using namespace tagflow::tagfile;

namespace {

struct Recording {
  std::string path;
  std::vector<test::TestBlock> blocks;
  std::vector<Tag> tags;
  std::uint32_t parts = 0;
};

// A set of several parts; `close` false leaves it as a writer killed mid-recording would.
Recording record(const test::TempDir& dir, bool close = true) {
  Recording recording;
  recording.path = dir.file("rec.tags");
  recording.tags = test::featureStream(8, 40000, {1, 2, -3});
  recording.blocks = test::randomBlocks(9, recording.tags, 3000);
  TagFileOptions options;
  options.path = recording.path;
  options.max_file_size = 25'000;
  options.compression = Compression::Zstd;
  auto writer = std::make_unique<TagFileWriter>(options);
  BlockPacker packer(options.compression);
  EncodedBlock encoded;
  for (std::size_t b = 0; b < recording.blocks.size(); ++b) {
    const auto& block = recording.blocks[b];
    if (b == 7) writer->writeMarker("a marker", block.begin);
    packer.pack(block.tags, block.begin, block.end, encoded);
    writer->write(encoded);
  }
  recording.parts = writer->partCount();
  if (close) {
    writer->close();
  } else {
    writer.release();  // NOLINT: its file stays open, never closed, as after a crash
  }
  return recording;
}

}  // namespace

TEST_CASE("Every complete part ends with a time index of its tags records", "[tagfile]") {
  test::TempDir dir;
  const Recording recording = record(dir);
  REQUIRE(recording.parts >= 3);
  std::size_t listed = 0;
  for (std::uint32_t part = 0; part < recording.parts; ++part) {
    TagFileReader reader(TagFileWriter::partPath(recording.path, part));
    const std::optional<PartIndex> index = reader.readIndex();
    REQUIRE(index.has_value());
    CHECK(index->continues == (part + 1 < recording.parts));
    // Each entry points at the header of the record it describes.
    TagFileReader::Record read;
    std::vector<Tag> tags;
    for (std::size_t e = 0; e < index->entries.size(); ++e) {
      reader.seek(*index, e);
      REQUIRE(reader.next(read, tags));
      CHECK(read.header.kind == RecordKind::Tags);
      CHECK(read.header.sequence == index->entries[e].sequence);
      CHECK(read.header.begin_time == recording.blocks[listed + e].begin);
      CHECK(read.header.end_time == recording.blocks[listed + e].end);
    }
    listed += index->entries.size();
  }
  CHECK(listed == recording.blocks.size());
  FileReader source(recording.path);
  const std::optional<StreamSpan> span = source.timeSpan();
  REQUIRE(span.has_value());
  CHECK(span->begin == recording.blocks.front().begin);
  CHECK(span->end == recording.blocks.back().end);
}

TEST_CASE("Seeking replays exactly the tags from the record that holds the time", "[tagfile]") {
  test::TempDir dir;
  const Recording recording = record(dir);
  std::mt19937_64 random(21);
  std::uniform_int_distribution<timestamp_t> any(recording.blocks.front().begin - 1000,
                                                 recording.blocks.back().end + 1000);
  for (int trial = 0; trial < 25; ++trial) {
    const timestamp_t time = trial == 0 ? recording.blocks[5].begin : any(random);
    INFO("seek to " << time);
    // The record that holds `time`: the last that begins at or before it (the first if none).
    std::size_t holder = 0;
    while (holder + 1 < recording.blocks.size() && recording.blocks[holder + 1].begin <= time) {
      ++holder;
    }
    std::vector<Tag> expected;
    for (std::size_t b = holder; b < recording.blocks.size(); ++b) {
      expected.insert(expected.end(), recording.blocks[b].tags.begin(),
                      recording.blocks[b].tags.end());
    }
    FileReader source(recording.path, 2000);
    REQUIRE(source.seekTo(time));
    const test::DrainedStream replay = test::drain(source);
    CHECK(replay.tags == expected);
    CHECK(replay.begin() == recording.blocks[holder].begin);
    CHECK(replay.end() == recording.blocks.back().end);
  }
}

TEST_CASE("A set cut while recording has no index: seeking says so and moves nothing",
          "[tagfile]") {
  test::TempDir dir;
  const Recording recording = record(dir, false);
  FileReader source(recording.path);
  CHECK_FALSE(source.timeSpan().has_value());
  // The last part has none; the parts ended before the cut still carry theirs.
  CHECK_FALSE(source.seekTo(recording.blocks.back().begin));
  TagFileReader first(recording.path);
  CHECK(first.readIndex().has_value());
  const test::DrainedStream replay = test::drain(source);
  CHECK(replay.tags == recording.tags);
  FileReader early(recording.path);
  CHECK(early.seekTo(recording.blocks[2].begin));
  CHECK(test::drain(early).begin() == recording.blocks[2].begin);
}

TEST_CASE("Seeking a tag file whose stream has begun names the file and what is valid",
          "[tagfile]") {
  test::TempDir dir;
  const Recording recording = record(dir);
  FileReader source(recording.path);
  BlockBuffer buffer;
  REQUIRE(source.next(buffer));
  CHECK_THROWS_AS(source.seekTo(recording.blocks[3].begin), InvalidArgument);
  CHECK_THROWS_WITH(source.seekTo(recording.blocks[3].begin),
                    Catch::Matchers::Contains(recording.path) &&
                        Catch::Matchers::Contains("after its stream has begun (valid: before the "
                                                  "first block"));
}

TEST_CASE("A damaged time index is an error naming the file and the index", "[tagfile]") {
  test::TempDir dir;
  const Recording recording = record(dir);
  const std::string last = TagFileWriter::partPath(recording.path, recording.parts - 1);
  const auto size = std::filesystem::file_size(last);
  {
    // A bit in the first entry's offset: the part end's payload checksum no longer matches.
    std::fstream file(last, std::ios::in | std::ios::out | std::ios::binary);
    TagFileReader reader(last);
    const auto index = reader.readIndex();
    REQUIRE(index.has_value());
    const auto payload = index->entries.size() * kIndexEntrySize + kIndexTrailerSize;
    file.seekp(static_cast<std::streamoff>(size - payload));
    file.put('\x7f');
  }
  TagFileReader reader(last);
  CHECK_THROWS_WITH(reader.readIndex(),
                    Catch::Matchers::Contains("'" + last + "', time index at byte offset") &&
                        Catch::Matchers::Contains("does not match its part-end record"));
}
