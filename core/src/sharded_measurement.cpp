#include "tagflow/core/sharded_measurement.hpp"

#include <algorithm>
#include <string>

#include "saturating_add.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

std::unique_ptr<Measurement> build(const ShardedMeasurement::Factory& make) {
  if (!make) throw InvalidArgument("ShardedMeasurement: no factory for the shards");
  std::unique_ptr<Measurement> built = make();
  if (built == nullptr) throw InvalidArgument("ShardedMeasurement: the factory built nothing");
  return built;
}

}  // namespace

ShardedMeasurement::ShardedMeasurement(const Factory& make, int shards, timestamp_t chunk)
    : ShardedMeasurement(make, build(make), shards, chunk) {}

ShardedMeasurement::ShardedMeasurement(const Factory& make, std::unique_ptr<Measurement> prototype,
                                       int shards, timestamp_t chunk)
    : Measurement(prototype->kind(), prototype->name(), prototype->parameters()),
      make_(make),
      prototype_(std::move(prototype)) {
  const std::string who = prototype_->kind() + " '" + name() + "'";
  if (shards < 1 || shards > kMaxShards) {
    throw InvalidArgument(who + ": parallel " + std::to_string(shards) +
                          " is invalid (valid: 1 to " + std::to_string(kMaxShards) + ")");
  }
  const std::optional<SplitSupport> support = prototype_->splitSupport();
  if (!support) throw InvalidArgument(who + " cannot be split by time (it runs as one)");
  if (shards > 1 && !support->any_order) {
    throw InvalidArgument(who +
                          ": its partial results merge only in time order, so it cannot "
                          "run as parallel shards (valid: parallel = 1)");
  }
  if (chunk < 0) {
    throw InvalidArgument(who + ": chunk " + std::to_string(chunk) +
                          " ps is invalid (valid: >= 0, 0 picks one)");
  }
  // 32 times the margins, so that they cost at most 1/32 of the work; where that would pass
  // the longest stream, one chunk as long as that stream (the margins still fit in it).
  const timestamp_t margins = saturatingAdd(support->before, support->after);
  if (chunk > 0) {
    chunk_ = chunk;
  } else if (margins > kStreamTimeLimit / 32) {
    chunk_ = std::max(margins, kStreamTimeLimit);
  } else {
    chunk_ = std::max(kDefaultChunk, 32 * margins);
  }
  for (int k = 0; k < shards; ++k) {
    std::unique_ptr<Measurement> shard = build(make_);
    if (shard->kind() != kind() || shard->parameters().entries() != parameters().entries()) {
      throw InvalidArgument(who + ": the factory built shards of different kinds or parameters");
    }
    if (shards > 1) shard->setShardPlan(ShardPlan{.chunk = chunk_, .index = k, .count = shards});
    group_.registerMeasurement(*shard);
    shards_.push_back(std::move(shard));
  }
}

std::unique_ptr<Measurement> ShardedMeasurement::merged() const {
  std::unique_ptr<Measurement> all = build(make_);
  for (const auto& shard : shards_) all->mergePartialState(shard->getPartialState());
  return all;
}

void ShardedMeasurement::throwWrongKind() const {
  throw InvalidArgument(kind() + " '" + name() + "': mergedAs() names another kind");
}

void ShardedMeasurement::start() {
  group_.start();
}

void ShardedMeasurement::startFor(timestamp_t duration, bool clear) {
  group_.startFor(duration, clear);
}

void ShardedMeasurement::stop() {
  group_.stop();
}

void ShardedMeasurement::clear() {
  group_.clear();
}

bool ShardedMeasurement::isRunning() const {
  return group_.isRunning();
}

bool ShardedMeasurement::waitUntilFinished(std::int64_t timeout_ms) {
  return group_.waitUntilFinished(timeout_ms);
}

bool ShardedMeasurement::mayFinish() const {
  return group_.mayFinish();
}

timestamp_t ShardedMeasurement::getCaptureDuration() const {
  timestamp_t total = 0;
  for (const auto& shard : shards_) total += shard->getCaptureDuration();
  return total;
}

std::uint64_t ShardedMeasurement::getOverflowCount() const {
  std::uint64_t total = 0;
  for (const auto& shard : shards_) total += shard->getOverflowCount();
  return total;
}

ResultSet ShardedMeasurement::getResults() const {
  ResultSet out = merged()->getResults();
  out.facts.set("running", isRunning());
  out.facts.set("parallel", static_cast<std::int64_t>(shards_.size()));
  out.facts.set("parallel_chunk_ps", chunk_);
  return out;
}

ResultSet ShardedMeasurement::getPartialState() const {
  return merged()->getPartialState();
}

void ShardedMeasurement::mergePartialState(const ResultSet& later) {
  shards_.front()->mergePartialState(later);
}

std::optional<std::vector<channel_t>> ShardedMeasurement::inputChannels() const {
  return prototype_->inputChannels();
}

std::vector<Measurement*> ShardedMeasurement::graphNodes() {
  std::vector<Measurement*> nodes;
  for (const auto& shard : shards_) nodes.push_back(shard.get());
  return nodes;
}

}  // namespace tagflow
