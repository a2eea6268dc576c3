// BackgroundSync: makes the data written to files durable (fdatasync) on a thread of its own,
// when asked, so that a device's flush of its write cache runs beside the writing instead of
// after it. Starting the device's writes early (sync_file_range) is not enough: on a virtual
// disk the final fsync still waits while the host flushes everything written since the last
// flush (about 70 ms for 128 MiB on the reference VM, whether the data left the guest a
// second earlier or not).
//
// request() duplicates the descriptor and queues a sync of the duplicate, so the writer may
// close its own at once; a request for a file whose sync is still waiting to start is already
// covered by it and adds nothing. The thread starts with the first request. error() is the
// first failure that means data were not stored (EIO, ENOSPC, EDQUOT), 0 if none; a file that
// cannot be synced at all (EINVAL: a pipe, a special file) is no failure. wait() returns once
// every queued sync has run. The destructor waits for them too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tagflow {

class BackgroundSync {
 public:
  // `sync` makes one descriptor durable and returns 0 or an errno (tests inject failures).
  explicit BackgroundSync(std::function<int(int)> sync = defaultSync);
  ~BackgroundSync();
  BackgroundSync(const BackgroundSync&) = delete;
  BackgroundSync& operator=(const BackgroundSync&) = delete;

  // Queues a sync of what has been written to `fd` so far; `file` names the file, so that a
  // request for a file already waiting is dropped. Returns the errno of dup() if the
  // descriptor could not be duplicated (no sync is queued then), else 0.
  int request(int fd, std::uint64_t file);
  void wait();
  int error() const;
  // The `file` of the request whose sync failed first (meaningful when error() != 0).
  std::uint64_t failedFile() const;

  static int defaultSync(int fd);

 private:
  struct Pending {
    int fd = -1;
    std::uint64_t file = 0;
  };
  void syncLoop();

  std::function<int(int)> sync_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  bool running_ = false;  // a sync is in progress (its request already left the queue)
  bool stopping_ = false;
  int error_ = 0;
  std::uint64_t failed_file_ = 0;
  std::thread thread_;
};

}  // namespace tagflow
