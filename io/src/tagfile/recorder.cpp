#include "tagflow/io/tagfile/recorder.hpp"

#include "tagflow/core/error.hpp"

namespace tagflow {

TagFileRecorder::TagFileRecorder(TagFileOptions options, std::size_t buffers)
    : writer_(std::move(options)), max_encoded_(std::max<std::size_t>(buffers, 1)) {
  free_buffers_.resize(std::max<std::size_t>(buffers, 1));
  bytes_written_ = writer_.bytesWritten();
  encoder_ = std::thread([this] { encodeLoop(); });
  writer_thread_ = std::thread([this] { writeLoop(); });
}

TagFileRecorder::~TagFileRecorder() {
  try {
    close();
  } catch (const std::exception&) {
    // A destructor cannot report; close() explicitly to see the error.
  }
}

std::string TagFileRecorder::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void TagFileRecorder::throwIfFailed() const {
  if (!error_.empty()) throw IoError(error_);
  if (closed_) throw IoError("tag file recorder of '" + writer_.options().path + "' is closed");
}

void TagFileRecorder::fail(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (error_.empty()) error_ = message;
  changed_.notify_all();
}

std::vector<Tag> TagFileRecorder::takeBuffer() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !free_buffers_.empty() || !error_.empty() || closed_; });
  throwIfFailed();
  std::vector<Tag> buffer = std::move(free_buffers_.back());
  free_buffers_.pop_back();
  return buffer;
}

void TagFileRecorder::submit(std::vector<Tag> tags, std::size_t count, timestamp_t begin_time,
                             timestamp_t end_time) {
  if (count > tags.size()) {
    throw InvalidArgument("submit: count " + std::to_string(count) + " exceeds the buffer of " +
                          std::to_string(tags.size()) + " tags");
  }
  std::lock_guard lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Tags;
  job.tags = std::move(tags);
  job.count = count;
  job.begin_time = begin_time;
  job.end_time = end_time;
  to_encode_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::marker(std::string text, timestamp_t time) {
  std::lock_guard lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Marker;
  job.text = std::move(text);
  job.begin_time = job.end_time = time;
  to_encode_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::split() {
  std::lock_guard lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Split;
  to_encode_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::flush() {
  std::unique_lock lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Flush;
  job.ticket = ++flush_requested_;
  const std::uint64_t ticket = job.ticket;
  to_encode_.push_back(std::move(job));
  changed_.notify_all();
  changed_.wait(lock, [&] { return flush_done_ >= ticket || !error_.empty(); });
  throwIfFailed();
}

void TagFileRecorder::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) {
      if (!error_.empty()) throw IoError(error_);
      return;
    }
    closed_ = true;
    Job job;
    job.kind = Kind::Close;
    to_encode_.push_back(std::move(job));
    changed_.notify_all();
  }
  encoder_.join();
  writer_thread_.join();
  std::lock_guard lock(mutex_);
  if (!error_.empty()) throw IoError(error_);
}

// After an error both loops keep taking jobs and drop them, so that nobody waits for them.
void TagFileRecorder::encodeLoop() {
  BlockPacker packer(writer_.options().compression);
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !to_encode_.empty(); });
      job = std::move(to_encode_.front());
      to_encode_.pop_front();
    }
    bool failed = false;
    {
      std::lock_guard lock(mutex_);
      failed = !error_.empty();
      if (job.kind == Kind::Tags && !free_payloads_.empty()) {
        job.block.payload = std::move(free_payloads_.back());
        free_payloads_.pop_back();
      }
    }
    if (job.kind == Kind::Tags && !failed) {
      try {
        packer.pack(std::span<const Tag>(job.tags.data(), job.count), job.begin_time, job.end_time,
                    job.block);
      } catch (const std::exception& error) {
        fail(std::string("encoding a tag file block failed: ") + error.what());
      }
    }
    std::unique_lock lock(mutex_);
    if (job.kind == Kind::Tags) {
      free_buffers_.push_back(std::move(job.tags));
      // Bounded: wait until the writer has room (an error drains the queue).
      changed_.wait(lock, [&] { return encoded_in_flight_ < max_encoded_ || !error_.empty(); });
      ++encoded_in_flight_;
    }
    const bool closing = job.kind == Kind::Close;
    to_write_.push_back(std::move(job));
    changed_.notify_all();
    if (closing) return;
  }
}

void TagFileRecorder::writeLoop() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !to_write_.empty(); });
      job = std::move(to_write_.front());
      to_write_.pop_front();
    }
    const bool failed = !error().empty();
    try {
      if (!failed) {
        switch (job.kind) {
          case Kind::Tags:
            writer_.write(job.block);
            break;
          case Kind::Marker:
            writer_.writeMarker(job.text, job.begin_time);
            break;
          case Kind::Split:
            writer_.split();
            break;
          case Kind::Flush:
            writer_.flush();
            break;
          case Kind::Close:
            writer_.close();
            break;
        }
      }
    } catch (const std::exception& error) {
      fail(error.what());
    }
    bytes_written_.store(writer_.bytesWritten(), std::memory_order_relaxed);
    tags_written_.store(writer_.tagsWritten(), std::memory_order_relaxed);
    parts_.store(writer_.partCount(), std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (job.kind == Kind::Tags) {
      --encoded_in_flight_;
      free_payloads_.push_back(std::move(job.block.payload));
    }
    if (job.kind == Kind::Flush) flush_done_ = std::max(flush_done_, job.ticket);
    changed_.notify_all();
    if (job.kind == Kind::Close) return;
  }
}

}  // namespace tagflow
