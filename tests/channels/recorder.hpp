// Recorder: a Measurement for virtual-channel tests. It declares the channels it reads, so the
// graph wires it to the stream of the virtual channel that produces them, and keeps every tag it
// is given (time tags and special tags alike) in stream order, noting for each MissedEvents tag
// whether it arrived inside an overflow interval. It checks on its own that time never runs
// backwards and, when told which channels a virtual channel generates, that no other time tag
// follows a generated one of the same time (generated tags go after the input tags of their
// time). Optionally it sleeps at every advance of time, to act as a slow consumer.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tagflow/core/measurement.hpp"

namespace tagflow::test {

class Recorder : public Measurement {
 public:
  Recorder(std::string name, std::vector<channel_t> reads,
           std::chrono::microseconds sleep_per_advance = std::chrono::microseconds{0})
      : Measurement("Recorder", std::move(name), Parameters{}),
        reads_(std::move(reads)),
        sleep_(sleep_per_advance) {}

  std::optional<std::vector<channel_t>> inputChannels() const override { return reads_; }
  void checkGeneratedAfterInput(std::vector<channel_t> generated) {
    generated_ = std::move(generated);
  }

  std::vector<Tag> tags() const {
    auto lock = lockData();
    return tags_;
  }
  // The MissedEvents tags that arrived while the stream was outside an overflow interval.
  std::vector<Tag> missedOutsideOverflow() const {
    auto lock = lockData();
    return missed_outside_;
  }
  std::vector<timestamp_t> captureStarts() const {
    auto lock = lockData();
    return capture_starts_;
  }
  std::string orderError() const {
    auto lock = lockData();
    return order_error_;
  }
  // Lock-free: how many tags (of any type) have been recorded.
  std::uint64_t recordedCount() const { return recorded_.load(std::memory_order_acquire); }
  // Lock-free: the stream time the recorder has processed up to.
  timestamp_t reachedTime() const { return reached_.load(std::memory_order_acquire); }

 protected:
  void processTimeTags(std::span<const Tag> tags) override {
    for (const Tag& tag : tags) record(tag);
  }
  void advanceTime(timestamp_t time) override {
    see(time);
    if (sleep_.count() > 0) std::this_thread::sleep_for(sleep_);
    reached_.store(time, std::memory_order_release);
  }
  void onCaptureStart(timestamp_t time, bool /*fresh*/) override {
    capture_starts_.push_back(time);
  }
  void onOverflowBegin(const Tag& tag) override { record(tag); }
  void onOverflowEnd(const Tag& tag) override { record(tag); }
  void onError(const Tag& tag) override { record(tag); }
  void onMissedEvents(const Tag& tag) override {
    if (!inOverflow()) missed_outside_.push_back(tag);
    record(tag);
  }
  void clearData() override { tags_.clear(); }
  void collectResults(ResultSet& out) const override {
    out.add("tag_count", "counts", {1}, std::vector<std::uint64_t>{tags_.size()}, "tags seen");
  }

 private:
  void see(timestamp_t time) {
    if (time < last_time_ && order_error_.empty()) {
      order_error_ = "time " + std::to_string(time) + " ps after " + std::to_string(last_time_);
    }
    last_time_ = std::max(last_time_, time);
  }
  void record(const Tag& tag) {
    see(tag.time);
    const bool generated =
        std::find(generated_.begin(), generated_.end(), tag.channel) != generated_.end();
    if (tag.type == TagType::TimeTag && generated) last_generated_time_ = tag.time;
    if (tag.type == TagType::TimeTag && !generated && tag.time == last_generated_time_ &&
        order_error_.empty()) {
      order_error_ = "channel " + std::to_string(tag.channel) + " at " + std::to_string(tag.time) +
                     " ps after a generated tag of the same time";
    }
    tags_.push_back(tag);
    recorded_.fetch_add(1, std::memory_order_release);
  }

  std::vector<channel_t> reads_;
  std::chrono::microseconds sleep_;
  std::vector<Tag> tags_;
  std::vector<Tag> missed_outside_;
  std::vector<timestamp_t> capture_starts_;
  std::string order_error_;
  timestamp_t last_time_ = std::numeric_limits<timestamp_t>::min();
  std::vector<channel_t> generated_;
  timestamp_t last_generated_time_ = std::numeric_limits<timestamp_t>::min();
  std::atomic<std::uint64_t> recorded_{0};
  std::atomic<timestamp_t> reached_{std::numeric_limits<timestamp_t>::min()};
};

}  // namespace tagflow::test
