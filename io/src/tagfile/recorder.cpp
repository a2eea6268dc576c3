#include "tagflow/io/tagfile/recorder.hpp"

#include "tagflow/core/error.hpp"

namespace tagflow {

TagFileRecorder::TagFileRecorder(TagFileOptions options, std::size_t buffers)
    : writer_(std::move(options)) {
  free_buffers_.resize(std::max<std::size_t>(buffers, 1));
  bytes_written_ = writer_.bytesWritten();
  thread_ = std::thread([this] { recordLoop(); });
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

std::size_t TagFileRecorder::freeBufferCount() const {
  std::lock_guard lock(mutex_);
  return free_buffers_.size();
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
  to_record_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::marker(std::string text, timestamp_t time) {
  std::lock_guard lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Marker;
  job.text = std::move(text);
  job.begin_time = job.end_time = time;
  to_record_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::split() {
  std::lock_guard lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Split;
  to_record_.push_back(std::move(job));
  changed_.notify_all();
}

void TagFileRecorder::flush() {
  std::unique_lock lock(mutex_);
  throwIfFailed();
  Job job;
  job.kind = Kind::Flush;
  job.ticket = ++flush_requested_;
  const std::uint64_t ticket = job.ticket;
  to_record_.push_back(std::move(job));
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
    to_record_.push_back(std::move(job));
    changed_.notify_all();
  }
  thread_.join();
  std::lock_guard lock(mutex_);
  if (!error_.empty()) throw IoError(error_);
}

// After an error the loop keeps taking jobs and drops them, so that nobody waits for them.
void TagFileRecorder::recordLoop() {
  BlockPacker packer(writer_.options().compression);
  EncodedBlock block;  // its payload reused from record to record
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !to_record_.empty(); });
      job = std::move(to_record_.front());
      to_record_.pop_front();
    }
    bool packed = false;
    if (job.kind == Kind::Tags) {
      if (error().empty()) {
        try {
          packer.pack(std::span<const Tag>(job.tags.data(), job.count), job.begin_time,
                      job.end_time, block);
          packed = true;
        } catch (const std::exception& error) {
          fail(std::string("encoding a tag file block failed: ") + error.what());
        }
      }
      // Packed: the producer may fill the buffer again while the record is written.
      std::lock_guard lock(mutex_);
      free_buffers_.push_back(std::move(job.tags));
      changed_.notify_all();
    }
    try {
      if (error().empty()) write(job, packed ? &block : nullptr);
    } catch (const std::exception& error) {
      fail(error.what());
    }
    bytes_written_.store(writer_.bytesWritten(), std::memory_order_relaxed);
    tags_written_.store(writer_.tagsWritten(), std::memory_order_relaxed);
    parts_.store(writer_.partCount(), std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (job.kind == Kind::Flush) flush_done_ = std::max(flush_done_, job.ticket);
    changed_.notify_all();
    if (job.kind == Kind::Close) return;
  }
}

void TagFileRecorder::write(const Job& job, EncodedBlock* block) {
  switch (job.kind) {
    case Kind::Tags:
      if (block) writer_.write(*block);
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

}  // namespace tagflow
