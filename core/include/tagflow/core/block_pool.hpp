// BlockPool: a fixed set of block buffers, allocated and touched once, handed out to the
// source and returned when the last reader drops its reference, so the hot path never
// allocates. A BlockRef is a counted reference to a published block; dropping the last one
// recycles the buffer and calls the pool's release hook (the graph uses it to admit the next
// block: that is the back-pressure).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "tagflow/core/tag_block.hpp"

namespace tagflow {

class BlockPool;

struct PooledBlock;

class BlockRef {
 public:
  BlockRef() = default;
  explicit BlockRef(PooledBlock* block);  // takes the first reference
  BlockRef(const BlockRef& other);
  BlockRef(BlockRef&& other) noexcept;
  BlockRef& operator=(BlockRef other) noexcept;
  ~BlockRef();

  const PooledBlock* operator->() const { return block_; }
  const PooledBlock& operator*() const { return *block_; }
  explicit operator bool() const { return block_ != nullptr; }

 private:
  PooledBlock* block_ = nullptr;
};

struct PooledBlock {
  BlockBuffer buffer;
  std::uint64_t sequence = 0;
  std::chrono::steady_clock::time_point published;
  std::atomic<std::uint32_t> references{0};
  BlockPool* pool = nullptr;
  // The block this one was computed from (a virtual channel's output holds its input): it
  // stays alive, and keeps its limiter token, until this block is released.
  BlockRef upstream;
  // Prepared by the graph when it publishes the block.
  SharedTimes shared;

  TagBlock view() const {
    TagBlock block = buffer.view(sequence);
    block.shared = &shared;
    return block;
  }
};

class BlockPool {
 public:
  // `count` buffers, each with storage of `tags_per_block` tags (touched now, not later).
  BlockPool(std::size_t count, std::size_t tags_per_block);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A free buffer, or nullptr when all are in use.
  PooledBlock* tryAcquire();
  // Returns an unpublished buffer (one the source did not fill).
  void giveBack(PooledBlock* block);
  void setReleaseHook(std::function<void()> hook) { release_hook_ = std::move(hook); }

  std::size_t capacity() const { return blocks_.size(); }
  std::size_t freeCount() const;

 private:
  friend class BlockRef;
  void release(PooledBlock* block);

  std::vector<std::unique_ptr<PooledBlock>> blocks_;
  std::vector<PooledBlock*> free_;
  mutable std::mutex mutex_;
  std::function<void()> release_hook_;
};

}  // namespace tagflow
