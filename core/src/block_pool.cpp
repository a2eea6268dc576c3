#include "tagflow/core/block_pool.hpp"

#include <utility>

namespace tagflow {

BlockRef::BlockRef(PooledBlock* block) : block_(block) {
  block_->references.store(1, std::memory_order_relaxed);
}

BlockRef::BlockRef(const BlockRef& other) : block_(other.block_) {
  if (block_) block_->references.fetch_add(1, std::memory_order_relaxed);
}

BlockRef::BlockRef(BlockRef&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}

BlockRef& BlockRef::operator=(BlockRef other) noexcept {
  std::swap(block_, other.block_);
  return *this;
}

BlockRef::~BlockRef() {
  if (block_ && block_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    block_->pool->release(block_);
  }
}

BlockPool::BlockPool(std::size_t count, std::size_t tags_per_block) {
  blocks_.reserve(count);
  free_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto block = std::make_unique<PooledBlock>();
    block->pool = this;
    // resize, not reserve: the pages are touched here, at start-up, not on the hot path, and
    // a writer that resizes within this size (a virtual channel) initialises nothing there.
    block->buffer.storage.resize(tags_per_block);
    block->buffer.special.reserve(1024);
    free_.push_back(block.get());
    blocks_.push_back(std::move(block));
  }
}

PooledBlock* BlockPool::tryAcquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return nullptr;
  PooledBlock* block = free_.back();
  free_.pop_back();
  return block;
}

void BlockPool::giveBack(PooledBlock* block) {
  std::lock_guard lock(mutex_);
  free_.push_back(block);
}

void BlockPool::release(PooledBlock* block) {
  const BlockRef upstream = std::move(block->upstream);
  giveBack(block);
  if (release_hook_) release_hook_();
}

std::size_t BlockPool::freeCount() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

}  // namespace tagflow
