// DatagramRing: the hand-over between the thread that receives datagrams and the thread that
// decodes them. One producer, one consumer; fixed slots of the largest datagram the link
// carries, allocated and touched once. The producer fills free slots and publishes them; the
// consumer reads published slots in order and releases them. A consumer with nothing to read
// sleeps until the producer publishes or a timeout passes; the producer pays for a wake-up
// only when the consumer sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "tagflow/io/udp/wire.hpp"

namespace tagflow {

class DatagramRing {
 public:
  static constexpr std::size_t kSlotBytes = wire::kMaxDatagramBytes;
  static_assert(kSlotBytes % 64 == 0, "slots start on cache lines");

  enum SlotFlags : std::uint8_t { kTruncated = 1 };
  struct SlotInfo {
    std::uint32_t length = 0;
    std::uint8_t flags = 0;
  };

  explicit DatagramRing(std::size_t slots)
      : data_(slots * kSlotBytes / sizeof(std::uint64_t)), info_(slots), slots_(slots) {}

  std::size_t slots() const { return slots_; }

  // Producer side.
  std::size_t writable() const {
    return slots_ - static_cast<std::size_t>(head_.load(std::memory_order_relaxed) -
                                             tail_.load(std::memory_order_acquire));
  }
  // The k-th slot after the last published one.
  std::byte* writeSlot(std::size_t k) {
    return slotData(head_.load(std::memory_order_relaxed) + k);
  }
  SlotInfo& writeInfo(std::size_t k) {
    return info_[index(head_.load(std::memory_order_relaxed) + k)];
  }
  void publish(std::size_t count) {
    head_.fetch_add(count, std::memory_order_seq_cst);
    if (consumer_sleeping_.load(std::memory_order_seq_cst)) wakeConsumer();
  }

  // Consumer side.
  std::size_t readable() const {
    return static_cast<std::size_t>(head_.load(std::memory_order_seq_cst) -
                                    tail_.load(std::memory_order_relaxed));
  }
  const std::byte* readSlot() const { return slotData(tail_.load(std::memory_order_relaxed)); }
  const SlotInfo& readInfo() const { return info_[index(tail_.load(std::memory_order_relaxed))]; }
  void release() { tail_.fetch_add(1, std::memory_order_release); }

  // Sleeps until something is readable, wakeConsumer() is called or `timeout` passes.
  bool waitReadable(std::chrono::microseconds timeout) {
    if (readable() > 0) return true;
    std::unique_lock lock(mutex_);
    consumer_sleeping_.store(true, std::memory_order_seq_cst);
    cv_.wait_for(lock, timeout, [&] { return readable() > 0 || woken_; });
    consumer_sleeping_.store(false, std::memory_order_relaxed);
    woken_ = false;
    return readable() > 0;
  }
  void wakeConsumer() {
    std::lock_guard lock(mutex_);
    woken_ = true;
    cv_.notify_one();
  }

 private:
  std::size_t index(std::uint64_t position) const {
    return static_cast<std::size_t>(position % slots_);
  }
  std::byte* slotData(std::uint64_t position) {
    return reinterpret_cast<std::byte*>(data_.data()) + index(position) * kSlotBytes;
  }
  const std::byte* slotData(std::uint64_t position) const {
    return reinterpret_cast<const std::byte*>(data_.data()) + index(position) * kSlotBytes;
  }

  std::vector<std::uint64_t> data_;
  std::vector<SlotInfo> info_;
  std::size_t slots_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // published slots, ever
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // released slots, ever
  alignas(64) std::atomic<bool> consumer_sleeping_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool woken_ = false;
};

}  // namespace tagflow
