// BackgroundSync (io/include/tagflow/io/tagfile/background_sync.hpp): requests for a file whose
// sync has not started add nothing, queued syncs all run, a failure that loses data is kept and
// one that only says "cannot sync this" is not; and a tag file set written with background
// syncs after every few KiB reads back whole.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "support/drain.hpp"
#include "support/temp_dir.hpp"
#include "tagfile/tagfile_streams.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/background_sync.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"

using namespace tagflow;
using namespace tagflow::tagfile;

namespace {

// A sync that counts its calls and waits until released.
class GatedSync {
 public:
  int operator()(int /*fd*/) {
    std::unique_lock lock(mutex_);
    ++started_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
    return result_;
  }
  void release(int result) {
    std::lock_guard lock(mutex_);
    released_ = true;
    result_ = result;
    changed_.notify_all();
  }
  void waitStarted(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return started_ >= count; });
  }
  int started() {
    std::lock_guard lock(mutex_);
    return started_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int started_ = 0;
  bool released_ = false;
  int result_ = 0;
};

}  // namespace

TEST_CASE("BackgroundSync runs each waiting file's sync once and keeps lost-data errors",
          "[tagfile]") {
  test::TempDir dir;
  const int fd = ::open(dir.file("data").c_str(), O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  GatedSync gate;
  {
    BackgroundSync sync([&](int descriptor) { return gate(descriptor); });
    REQUIRE(sync.request(fd, 1) == 0);
    gate.waitStarted(1);  // file 1 is being synced: a new request for it waits behind it
    REQUIRE(sync.request(fd, 1) == 0);
    REQUIRE(sync.request(fd, 1) == 0);  // still waiting: covered by the one before
    REQUIRE(sync.request(fd, 2) == 0);
    REQUIRE(sync.request(fd, 2) == 0);
    CHECK(sync.error() == 0);
    gate.release(EIO);
    sync.wait();
    CHECK(gate.started() == 3);
    CHECK(sync.error() == EIO);
  }
  ::close(fd);  // the syncs used their own duplicates: this one is still open
}

TEST_CASE("BackgroundSync ignores files that cannot be synced, and reports ENOSPC", "[tagfile]") {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  {
    BackgroundSync sync;  // fdatasync itself: a pipe gives EINVAL
    REQUIRE(sync.request(pipe_ends[1], 1) == 0);
    sync.wait();
    CHECK(sync.error() == 0);
  }
  {
    std::atomic<int> calls = 0;
    BackgroundSync sync([&](int) { return ++calls == 1 ? ENOSPC : EIO; });
    REQUIRE(sync.request(pipe_ends[1], 1) == 0);
    sync.wait();
    REQUIRE(sync.request(pipe_ends[1], 2) == 0);
    sync.wait();
    CHECK(calls == 2);
    CHECK(sync.error() == ENOSPC);  // the first failure
  }
  CHECK(BackgroundSync().request(-1, 1) == EBADF);
  ::close(pipe_ends[0]);
  ::close(pipe_ends[1]);
}

TEST_CASE("A tag file set synced every few KiB reads back whole", "[tagfile]") {
  test::TempDir dir;
  const auto tags = test::featureStream(5, 40000, {1, 2, 3});
  const auto blocks = test::randomBlocks(6, tags, 3000);
  TagFileOptions options;
  options.path = dir.file("rec.tags");
  options.max_file_size = 30'000;  // several parts, each synced at its end
  options.sync_every = kMinMaxFileSize;
  {
    TagFileWriter writer(options);
    test::writeBlocks(writer, blocks, Compression::None);
    CHECK(writer.partCount() >= 3);
    writer.close();
  }
  FileReader reader(options.path);
  CHECK(test::drain(reader).tags == tags);

  options.sync_every = kMinMaxFileSize - 1;
  CHECK_THROWS_WITH(TagFileWriter(options),
                    Catch::Contains("sync_every 4095") && Catch::Contains("valid: 0 for none"));
}

TEST_CASE("A failed sync of an earlier part names that part", "[tagfile]") {
  test::TempDir dir;
  const auto tags = test::featureStream(7, 40000, {1, 2, 3});
  const auto blocks = test::randomBlocks(8, tags, 3000);
  TagFileOptions options;
  options.path = dir.file("rec.tags");
  options.max_file_size = 30'000;
  options.sync_every = std::uint64_t{1} << 30;  // only the syncs at the parts' ends
  // The device loses part 0's data; its sync fails after part 1 has begun.
  options.sync = [](int descriptor) {
    char path[4096] = {};
    const std::string link = "/proc/self/fd/" + std::to_string(descriptor);
    const ssize_t length = ::readlink(link.c_str(), path, sizeof path - 1);
    const std::string name(path, length > 0 ? static_cast<std::size_t>(length) : 0);
    return name.ends_with("/rec.tags") ? EIO : 0;
  };
  std::string message;
  try {
    TagFileWriter writer(options);
    test::writeBlocks(writer, blocks, Compression::None);
    writer.close();
  } catch (const IoError& error) {
    message = error.what();
  }
  CHECK_THAT(message, Catch::StartsWith("syncing tag file '" + options.path +
                                        "' failed: " + std::strerror(EIO) +
                                        ": what was written to it may not "
                                        "be on the device; the recording stopped at byte offset"));
}
