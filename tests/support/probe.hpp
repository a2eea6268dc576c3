// Probe: a Measurement for engine tests. It counts the TimeTags it is given per channel
// (its data, dropped by clear()) and keeps a journal that clear() does not touch: every
// capture start, every advanceTime() and every special tag, in call order. It checks on its
// own that time never runs backwards. Optionally it sleeps or throws in advanceTime(), which
// the engine calls once at the end of every block of a stream without special tags.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tagflow/core/measurement.hpp"

namespace tagflow::test {

struct ProbeOptions {
  std::chrono::microseconds sleep_per_block{0};
  std::int64_t throw_at_advance = -1;  // throw from the advanceTime() call with this index
  bool keep_tags = false;
};

class Probe : public Measurement {
 public:
  using Options = ProbeOptions;
  struct CaptureStart {
    timestamp_t time;
    bool fresh;
  };

  explicit Probe(std::string name, Options options = {})
      : Measurement("Probe", std::move(name), Parameters{{"keep_tags", options.keep_tags}}),
        options_(options) {}

  std::uint64_t tagCount() const {
    auto lock = lockData();
    return tag_count_;
  }
  std::map<channel_t, std::uint64_t> countsByChannel() const {
    auto lock = lockData();
    return counts_;
  }
  std::vector<Tag> tags() const {
    auto lock = lockData();
    return tags_;
  }
  std::vector<timestamp_t> advances() const {
    auto lock = lockData();
    return advances_;
  }
  std::vector<CaptureStart> captureStarts() const {
    auto lock = lockData();
    return capture_starts_;
  }
  std::vector<Tag> specials() const {
    auto lock = lockData();
    return specials_;
  }
  std::string orderError() const {
    auto lock = lockData();
    return order_error_;
  }
  int clears() const {
    auto lock = lockData();
    return clears_;
  }
  // Lock-free: how many advanceTime() calls have completed.
  std::uint64_t advanceCount() const { return advance_count_.load(std::memory_order_acquire); }

 protected:
  void processTimeTags(std::span<const Tag> tags) override {
    for (const Tag& tag : tags) {
      if (tag.type != TagType::TimeTag) order_error_ = "a special tag reached processTimeTags";
      if (tag.time < last_time_) {
        order_error_ = "tag at " + std::to_string(tag.time) + " ps after time " +
                       std::to_string(last_time_) + " ps";
      }
      last_time_ = tag.time;
      ++tag_count_;
      ++counts_[tag.channel];
      if (options_.keep_tags) tags_.push_back(tag);
    }
  }

  void advanceTime(timestamp_t time) override {
    if (time < last_time_) {
      order_error_ = "advance to " + std::to_string(time) + " ps after time " +
                     std::to_string(last_time_) + " ps";
    }
    last_time_ = time;
    advances_.push_back(time);
    if (options_.sleep_per_block.count() > 0) std::this_thread::sleep_for(options_.sleep_per_block);
    const auto index = static_cast<std::int64_t>(advance_count_.load(std::memory_order_relaxed));
    if (index == options_.throw_at_advance) {
      throw std::runtime_error("probe '" + name() + "' failed on purpose at advance " +
                               std::to_string(index));
    }
    advance_count_.fetch_add(1, std::memory_order_release);
  }

  void onCaptureStart(timestamp_t time, bool fresh) override {
    capture_starts_.push_back(CaptureStart{time, fresh});
    if (time < last_time_) order_error_ = "capture start before the last time seen";
    last_time_ = time;
  }
  void onOverflowBegin(const Tag& tag) override { specials_.push_back(tag); }
  void onOverflowEnd(const Tag& tag) override { specials_.push_back(tag); }
  void onMissedEvents(const Tag& tag) override { specials_.push_back(tag); }
  void onError(const Tag& tag) override { specials_.push_back(tag); }

  void clearData() override {
    tag_count_ = 0;
    counts_.clear();
    tags_.clear();
    ++clears_;
  }

  void collectResults(ResultSet& out) const override {
    out.add("tag_count", "counts", {1}, std::vector<std::uint64_t>{tag_count_}, "time tags seen");
  }

 private:
  Options options_;
  std::uint64_t tag_count_ = 0;
  std::map<channel_t, std::uint64_t> counts_;
  std::vector<Tag> tags_;
  std::vector<timestamp_t> advances_;
  std::vector<CaptureStart> capture_starts_;
  std::vector<Tag> specials_;
  std::string order_error_;
  timestamp_t last_time_ = std::numeric_limits<timestamp_t>::min();
  int clears_ = 0;
  std::atomic<std::uint64_t> advance_count_{0};
};

// Builds a TagBlock over caller-owned storage, for driving Measurement::processBlock directly.
class BlockFeeder {
 public:
  explicit BlockFeeder(Measurement& measurement) : measurement_(measurement) {
    measurement_.streamStarting();
  }
  // Feeds [begin, end) with `tags` as the next block.
  void feed(timestamp_t begin, timestamp_t end, std::vector<Tag> tags = {}) {
    buffer_.storage = std::move(tags);
    buffer_.publishStorage();
    buffer_.begin_time = begin;
    buffer_.end_time = end;
    measurement_.processBlock(buffer_.view(sequence_++));
  }

 private:
  Measurement& measurement_;
  BlockBuffer buffer_;
  std::uint64_t sequence_ = 0;
};

}  // namespace tagflow::test
