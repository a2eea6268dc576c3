// TagFileRecorder: records a stream into a tag file set without holding up the producer's
// thread with encoding or I/O. The producer fills tag buffers and hands them over; the
// recorder's thread packs each into a record, gives the buffer back and writes the record
// (TagFileWriter), so the producer only copies tags. One thread for both, not one each: on a
// machine with as few cores as a graph has threads, a fourth busy thread cost more in
// scheduling than it gained in overlap (docs/benchmarks.md). The buffers are few and
// recycled: when the thread is behind, taking a buffer waits for one to come back, which is
// the back-pressure that slows the producer (in a graph: the measurement node, and through it
// the source). An error of the thread (a full disk, an I/O error) is kept and thrown as IoError
// by the producer's next call; the records written before it stay readable. The producer side
// is used by one thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow {

class TagFileRecorder {
 public:
  // Creates part 0 on the caller's thread (an unwritable path throws IoError here) and starts
  // the thread. `buffers` bounds the tag buffers in circulation.
  explicit TagFileRecorder(TagFileOptions options, std::size_t buffers = 4);
  // Closes the set; errors are dropped (call close() to see them).
  ~TagFileRecorder();
  TagFileRecorder(const TagFileRecorder&) = delete;
  TagFileRecorder& operator=(const TagFileRecorder&) = delete;

  // A buffer to fill, as it came back (its size kept from earlier use, so that it need not
  // be cleared or grown again); waits while none is free.
  std::vector<Tag> takeBuffer();
  // Buffers free at this moment: few means the recorder's thread is behind.
  std::size_t freeBufferCount() const;
  // Hands over the block [begin_time, end_time) holding the first `count` tags of `tags`.
  void submit(std::vector<Tag> tags, std::size_t count, timestamp_t begin_time,
              timestamp_t end_time);
  void marker(std::string text, timestamp_t time);
  void split();
  // Waits until everything handed over is in the files and the set reads as complete.
  void flush();
  // Flushes, ends the set and stops the thread; later calls throw.
  void close();

  // The error that stopped recording, or "" (also readable from other threads).
  std::string error() const;
  // Bytes in the files and tags written so far (from any thread).
  std::uint64_t bytesWritten() const { return bytes_written_.load(std::memory_order_relaxed); }
  std::uint64_t tagsWritten() const { return tags_written_.load(std::memory_order_relaxed); }
  std::uint32_t partCount() const { return parts_.load(std::memory_order_relaxed); }

 private:
  enum class Kind { Tags, Marker, Split, Flush, Close };
  struct Job {
    Kind kind = Kind::Tags;
    std::vector<Tag> tags;
    std::size_t count = 0;
    std::string text;
    timestamp_t begin_time = 0;
    timestamp_t end_time = 0;
    std::uint64_t ticket = 0;
  };

  void recordLoop();
  // The job's effect on the files; a Tags job writes `block`, or nothing if it was not packed.
  void write(const Job& job, EncodedBlock* block);
  void fail(const std::string& message);
  void throwIfFailed() const;  // with mutex_ held

  TagFileWriter writer_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> to_record_;
  std::vector<std::vector<Tag>> free_buffers_;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flush_done_ = 0;
  std::string error_;
  bool closed_ = false;
  std::atomic<std::uint64_t> bytes_written_{0};
  std::atomic<std::uint64_t> tags_written_{0};
  std::atomic<std::uint32_t> parts_{1};
  std::thread thread_;
};

}  // namespace tagflow
