#include "tagflow/io/tagfile/background_sync.hpp"

#include <unistd.h>

#include <cerrno>

namespace tagflow {

BackgroundSync::BackgroundSync(std::function<int(int)> sync) : sync_(std::move(sync)) {}

BackgroundSync::~BackgroundSync() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int BackgroundSync::defaultSync(int fd) {
  for (;;) {
    if (::fdatasync(fd) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

int BackgroundSync::request(int fd, std::uint64_t file) {
  std::lock_guard lock(mutex_);
  if (!queue_.empty() && queue_.back().file == file) return 0;
  const int copy = ::dup(fd);
  if (copy < 0) return errno;
  queue_.push_back({copy, file});
  if (!thread_.joinable()) thread_ = std::thread([this] { syncLoop(); });
  changed_.notify_all();
  return 0;
}

void BackgroundSync::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !running_; });
}

int BackgroundSync::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::uint64_t BackgroundSync::failedFile() const {
  std::lock_guard lock(mutex_);
  return failed_file_;
}

void BackgroundSync::syncLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Queued syncs run even when stopping: the data they cover were written.
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;
    const Pending pending = queue_.front();
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    const int result = sync_(pending.fd);
    ::close(pending.fd);
    lock.lock();
    running_ = false;
    const bool lost = result == EIO || result == ENOSPC || result == EDQUOT;
    if (lost && error_ == 0) {
      error_ = result;
      failed_file_ = pending.file;
    }
    changed_.notify_all();
  }
}

}  // namespace tagflow
