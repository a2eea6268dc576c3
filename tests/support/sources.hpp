// Sources for engine tests. ScriptedSource serves prepared blocks exactly as given (odd
// shapes: empty blocks, blocks that break the contract). PatternSource makes a long,
// cheap, fully predictable stream. CountingSource wraps a source and records how many blocks
// it has handed out that a consumer has not finished yet. GatedSource hands out blocks only
// up to a limit the test raises, so a test can act at a known point of the stream.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "support/drain.hpp"
#include "tagflow/core/source.hpp"

namespace tagflow::test {

class ScriptedSource : public Source {
 public:
  explicit ScriptedSource(std::vector<DrainedBlock> blocks) : blocks_(std::move(blocks)) {}

  bool next(BlockBuffer& out) override {
    if (next_ == blocks_.size()) return false;
    const DrainedBlock& block = blocks_[next_++];
    out.storage = block.tags;
    out.publishStorage();
    out.begin_time = block.begin;
    out.end_time = block.end;
    return true;
  }
  std::size_t maxBlockTags() const override {
    std::size_t most = 0;
    for (const auto& block : blocks_) most = std::max(most, block.tags.size());
    return most;
  }
  std::string describe() const override { return "scripted"; }

 private:
  std::vector<DrainedBlock> blocks_;
  std::size_t next_ = 0;
};

// Block i covers [i * block_ps, (i + 1) * block_ps) and holds `tags_per_block` tags evenly
// spaced in it, channel channels[(i + j) % size] for tag j; every `empty_every`-th block
// (if > 0) is empty. `blocks` < 0 gives an endless stream.
class PatternSource : public Source {
 public:
  struct Config {
    std::int64_t blocks = 1000;
    timestamp_t block_ps = 1'000'000;
    std::size_t tags_per_block = 16;
    std::vector<channel_t> channels{1, 2};
    std::int64_t empty_every = 0;
  };

  explicit PatternSource(Config config) : config_(std::move(config)) {}

  static std::vector<Tag> blockTags(const Config& config, std::int64_t i) {
    std::vector<Tag> tags;
    if (config.empty_every > 0 && i % config.empty_every == config.empty_every - 1) return tags;
    const timestamp_t step = config.block_ps / static_cast<timestamp_t>(config.tags_per_block);
    for (std::size_t j = 0; j < config.tags_per_block; ++j) {
      const channel_t channel =
          config.channels[(static_cast<std::size_t>(i) + j) % config.channels.size()];
      tags.push_back(
          makeTimeTag(channel, i * config.block_ps + static_cast<timestamp_t>(j) * step));
    }
    return tags;
  }

  // Every tag of the first `blocks` blocks, for brute-force references.
  static std::vector<Tag> allTags(const Config& config, std::int64_t blocks) {
    std::vector<Tag> all;
    for (std::int64_t i = 0; i < blocks; ++i) {
      const auto tags = blockTags(config, i);
      all.insert(all.end(), tags.begin(), tags.end());
    }
    return all;
  }

  bool next(BlockBuffer& out) override {
    if (config_.blocks >= 0 && produced_ >= config_.blocks) return false;
    out.storage = blockTags(config_, produced_);
    out.publishStorage();
    out.begin_time = produced_ * config_.block_ps;
    out.end_time = (produced_ + 1) * config_.block_ps;
    ++produced_;
    return true;
  }
  std::size_t maxBlockTags() const override { return config_.tags_per_block; }
  std::string describe() const override { return "pattern"; }

 private:
  Config config_;
  std::int64_t produced_ = 0;
};

class CountingSource : public Source {
 public:
  // `finished` reports how many blocks the slowest consumer has completely processed.
  CountingSource(Source& inner, std::function<std::uint64_t()> finished)
      : inner_(inner), finished_(std::move(finished)) {}

  bool next(BlockBuffer& out) override {
    if (!inner_.next(out)) return false;
    const std::uint64_t handed_out = ++produced_;
    const std::uint64_t done = finished_();
    max_outstanding_ = std::max(max_outstanding_, handed_out - std::min(done, handed_out));
    return true;
  }
  std::size_t maxBlockTags() const override { return inner_.maxBlockTags(); }
  std::string describe() const override { return "counting(" + inner_.describe() + ")"; }

  std::uint64_t produced() const { return produced_; }
  // Largest number of blocks handed out (the one being produced included) and not yet finished.
  std::uint64_t maxOutstanding() const { return max_outstanding_; }

 private:
  Source& inner_;
  std::function<std::uint64_t()> finished_;
  std::uint64_t produced_ = 0;
  std::uint64_t max_outstanding_ = 0;
};

class GatedSource : public Source {
 public:
  explicit GatedSource(Source& inner, std::uint64_t allowed = 0)
      : inner_(inner), allowed_(allowed) {}

  bool next(BlockBuffer& out) override {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return handed_out_ < allowed_; });
    }
    if (!inner_.next(out)) return false;
    std::lock_guard lock(mutex_);
    ++handed_out_;
    return true;
  }
  std::size_t maxBlockTags() const override { return inner_.maxBlockTags(); }
  std::string describe() const override { return "gated(" + inner_.describe() + ")"; }

  // Lets the source hand out blocks until `blocks` in all.
  void allow(std::uint64_t blocks) {
    std::lock_guard lock(mutex_);
    allowed_ = blocks;
    changed_.notify_all();
  }
  void allowAll() { allow(std::numeric_limits<std::uint64_t>::max()); }

 private:
  Source& inner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t allowed_;
  std::uint64_t handed_out_ = 0;
};

}  // namespace tagflow::test
