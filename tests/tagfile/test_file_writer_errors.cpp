#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include "support/drain.hpp"
#include "support/synthetic.hpp"
#include "support/temp_dir.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/kinds.hpp"

using namespace tagflow;

namespace {

// Limits the size of every file this process writes, which makes writes past it fail with
// EFBIG like a full disk; restores the old limit at scope exit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  }
  ~FileSizeLimit() { setrlimit(RLIMIT_FSIZE, &old_); }

 private:
  rlimit old_{};
};

// Replays `path` as far as it reads and checks that it is a prefix of `expected` of at least
// `at_least` tags; a failed part that could not be ended cleanly ends in a truncation error.
void checkReadablePrefix(const std::string& path, const std::vector<Tag>& expected,
                         std::size_t at_least) {
  FileReader reader(path);
  std::vector<Tag> replayed;
  BlockBuffer buffer;
  try {
    while (reader.next(buffer)) {
      replayed.insert(replayed.end(), buffer.tags.begin(), buffer.tags.end());
    }
  } catch (const DataError& error) {
    CHECK_THAT(error.what(), Catch::Contains("truncated"));
  }
  CHECK(replayed.size() >= at_least);
  REQUIRE(replayed.size() <= expected.size());
  CHECK(std::equal(replayed.begin(), replayed.end(), expected.begin()));
}

}  // namespace

TEST_CASE("FileWriter: an unwritable path is a clear error at construction", "[tagfile]") {
  test::TempDir dir;
  CHECK_THROWS_WITH(FileWriter("writer", dir.file("missing/x.tags"), {1}),
                    Catch::Contains("missing/x.tags") && Catch::Contains("cannot create"));
  CHECK_THROWS_AS(FileWriter("writer", dir.file("x.tags"), {}), InvalidArgument);
  CHECK_THROWS_AS(FileWriter("writer", dir.file("x.tags"), {1}, 100), InvalidArgument);
  CHECK_THROWS_WITH(makeMeasurement("FileWriter", "w",
                                    Parameters{{"path", dir.file("y.tags")},
                                               {"channels", std::vector<std::int64_t>{1}},
                                               {"compression", std::string("gzip")}}),
                    Catch::Contains("gzip") && Catch::Contains("none, zstd, lz4"));
  CHECK_THROWS_WITH(makeMeasurement("FileWriter", "w",
                                    Parameters{{"path", dir.file("z.tags")},
                                               {"channels", std::vector<std::int64_t>{1}},
                                               {"sync_every", std::int64_t{100}}}),
                    Catch::Contains("sync_every 100") && Catch::Contains("0 for none"));
  CHECK_THROWS_WITH(makeMeasurement("FileWriter", "w",
                                    Parameters{{"path", dir.file("z.tags")},
                                               {"channels", std::vector<std::int64_t>{1}},
                                               {"sync_every", std::int64_t{-1}}}),
                    Catch::Contains("sync_every"));
  // A configuration too long for a readable file header, before the file is made.
  CHECK_THROWS_WITH(
      FileWriter("writer", dir.file("big.tags"), {1}, kDefaultMaxFileSize,
                 std::string(17u << 20, 'x')),
      Catch::Contains("with a configuration of 17825792 bytes and 1 channels, is too large "
                      "(valid: up to 16777216 bytes)"));
  CHECK_FALSE(std::filesystem::exists(dir.file("big.tags")));
  FileWriter fits("writer", dir.file("fits.tags"), {1}, kDefaultMaxFileSize,
                  std::string(16u << 20, 'x').substr(1024));
  fits.close();
  CHECK(FileReader(dir.file("fits.tags")).getConfiguration().size() == (16u << 20) - 1024);
}

TEST_CASE("FileWriter: a file open in the process, an input or another writer's, is refused",
          "[tagfile][graph]") {
  test::TempDir dir;
  const std::string recording = dir.file("in.tags");
  {
    SyntheticSource source(test::mixedConfig(10'000'000'000, 4096));
    FileWriter writer("writer", recording, {1, 2});
    MeasurementGraph graph(source);
    graph.add(writer);
    graph.run();
  }
  const auto size = std::filesystem::file_size(recording);
  FileReader input(recording, 16384);
  const std::string refused =
      "' is open in this process (a graph's input, or another writer's "
      "file): writing it would destroy it (valid: another path)";
  CHECK_THROWS_WITH(FileWriter("over", recording, {1}),
                    Catch::Contains("tag file '" + recording + refused));
  CHECK(std::filesystem::file_size(recording) == size);
  FileWriter first("first", dir.file("out.tags"), {1});
  CHECK_THROWS_WITH(FileWriter("second", dir.file("./out.tags"), {1}),
                    Catch::Contains("out.tags" + refused));
  CHECK(test::drain(input).tags.size() > 0);
}

TEST_CASE("FileWriter: a full disk stops the graph's run with a clear error", "[tagfile][graph]") {
  test::TempDir dir;
  const std::string path = dir.file("full.tags");
  const SyntheticConfig config = test::mixedConfig(200'000'000'000, 4096);  // ~1.7 M tags
  {
    SyntheticSource source(config);
    MeasurementGraph graph(source);
    auto& writer = graph.emplace<FileWriter>("writer", path, std::vector<channel_t>{1, 2, 3, -1});
    FileSizeLimit limit(1'500'000);
    CHECK_THROWS_WITH(graph.run(), Catch::Contains("full.tags") &&
                                       Catch::Contains("File too large") &&
                                       Catch::Contains("remain readable"));
    CHECK_THROWS_AS(writer.flush(), IoError);
    CHECK_THROWS_AS(writer.getResults(), IoError);
    CHECK(writer.getTotalSize() > 1'000'000);
  }
  checkReadablePrefix(path, test::drainSynthetic(config).tags, 300'000);
}

TEST_CASE("FileWriter: parts written before a full disk stay readable", "[tagfile]") {
  test::TempDir dir;
  const std::string path = dir.file("parts.tags");
  const test::DrainedStream stream = test::drainSynthetic(test::mixedConfig(200'000'000'000, 4096));
  FileWriter writer("writer", path, {1, 2, 3, -1});
  writer.streamStarting();
  std::size_t failed_at = 0;
  {
    FileSizeLimit limit(1'000'000);
    try {
      for (std::size_t i = 0; i < stream.blocks.size(); ++i) {
        if (i == 20) writer.split();  // part 0: 20 blocks, part 1: until the disk is full
        BlockBuffer buffer;
        buffer.storage = stream.blocks[i].tags;
        buffer.publishStorage();
        buffer.begin_time = stream.blocks[i].begin;
        buffer.end_time = stream.blocks[i].end;
        writer.processBlock(buffer.view(i));
      }
    } catch (const IoError& error) {
      CHECK_THAT(error.what(),
                 Catch::Contains("parts.1.tags") && Catch::Contains("1 earlier part"));
      failed_at = 1;
    }
    writer.streamEnded();
  }
  REQUIRE(failed_at == 1);
  std::size_t part_0 = 0;
  for (std::size_t i = 0; i < 20; ++i) part_0 += stream.blocks[i].tags.size();
  checkReadablePrefix(path, stream.tags, part_0 + 1);
}

TEST_CASE("TagFileWriter: a part whose header cannot be written is removed, not left empty",
          "[tagfile]") {
  test::TempDir dir;
  TagFileOptions options;
  options.path = dir.file("empty.tags");
  {
    FileSizeLimit limit(0);
    CHECK_THROWS_WITH(TagFileWriter(options),
                      Catch::Contains("empty.tags' failed at its start: File too large") &&
                          Catch::Contains("the empty file was removed"));
  }
  CHECK_FALSE(std::filesystem::exists(options.path));
}

TEST_CASE("TagFileWriter: an output its caller removes on failure is promised to nobody",
          "[tagfile]") {
  test::TempDir dir;
  const test::DrainedStream stream = test::drainSynthetic(test::mixedConfig(20'000'000'000, 4096));
  for (const bool kept : {true, false}) {
    TagFileOptions options;
    options.path = dir.file(kept ? "kept.tags" : "removed.tags");
    options.partial_output_kept = kept;
    TagFileWriter writer(options);
    BlockPacker packer(options.compression);
    EncodedBlock encoded;
    FileSizeLimit limit(20'000);
    std::string message;
    try {
      for (const auto& block : stream.blocks) {
        packer.pack(block.tags, block.begin, block.end, encoded);
        writer.write(encoded);
      }
    } catch (const IoError& error) {
      message = error.what();
    }
    CHECK_THAT(message,
               Catch::Contains("failed at byte offset") && Catch::Contains("File too large"));
    CHECK(Catch::Contains("remain readable").match(message) == kept);
  }
}
