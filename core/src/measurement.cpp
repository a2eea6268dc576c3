#include "tagflow/core/measurement.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "saturating_add.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

// The parts of a block a shard's window cuts it into; without a plan everything is counted.
enum Part { kLeadIn, kCounted, kLeadOut };

}  // namespace

Measurement::Measurement(const ParameterSchema& schema, std::string name,
                         const Parameters& parameters)
    : kind_(schema.kind()),
      name_(std::move(name)),
      parameters_(schema.validate(parameters, kind_ + " '" + name_ + "'")),
      parameter_units_(schema.units()) {
  if (name_.empty()) throw InvalidArgument(kind_ + ": name must not be empty");
}

Measurement::Measurement(std::string kind, std::string name, Parameters parameters)
    : kind_(std::move(kind)), name_(std::move(name)), parameters_(std::move(parameters)) {
  if (name_.empty()) throw InvalidArgument(kind_ + ": name must not be empty");
}

void Measurement::start() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Start, 0, false);
}

void Measurement::startFor(timestamp_t duration, bool clear) {
  if (duration <= 0) {
    throw InvalidArgument(name_ + ": startFor duration " + std::to_string(duration) +
                          " ps is invalid (valid: > 0)");
  }
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::StartFor, duration, clear);
}

void Measurement::stop() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Stop, 0, false);
}

void Measurement::clear() {
  std::lock_guard lock(mutex_);
  pending_.clear();
  applyLocked(Action::Clear, 0, false);
}

bool Measurement::isRunning() const {
  std::lock_guard lock(mutex_);
  return running_;
}

bool Measurement::startForPendingLocked() const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [](const PendingAction& p) { return p.action == Action::StartFor; });
}

bool Measurement::mayFinish() const {
  std::lock_guard lock(mutex_);
  if (pending_.empty() && !running_) return true;
  return !stream_ended_ && (remaining_ >= 0 || startForPendingLocked());
}

bool Measurement::waitUntilFinished(std::int64_t timeout_ms) {
  std::unique_lock lock(mutex_);
  // A group action still waiting for its block has not taken effect: a member that is stopped
  // now but has a startFor() pending is not finished.
  const auto finished = [&] { return pending_.empty() && !running_; };
  const auto done = [&] { return finished() || stream_ended_; };
  if (remaining_ < 0 && !startForPendingLocked()) return !running_;
  if (timeout_ms < 0) {
    finished_.wait(lock, done);
  } else if (!finished_.wait_for(lock, std::chrono::milliseconds(timeout_ms), done)) {
    return false;
  }
  return finished();
}

timestamp_t Measurement::getCaptureDuration() const {
  std::lock_guard lock(mutex_);
  return capture_duration_;
}

std::uint64_t Measurement::getOverflowCount() const {
  std::lock_guard lock(mutex_);
  return overflow_count_;
}

ResultSet Measurement::runFactsLocked() const {
  ResultSet out;
  out.kind = kind_;
  out.name = name_;
  out.parameters = parameters_;
  out.parameter_units = parameter_units_;
  out.facts.set("capture_duration_ps", capture_duration_);
  out.facts.set("overflow_count", static_cast<std::int64_t>(overflow_count_));
  out.facts.set("in_overflow", in_overflow_);
  return out;
}

ResultSet Measurement::getResults() const {
  std::lock_guard lock(mutex_);
  ResultSet out = runFactsLocked();
  out.facts.set("running", running_);
  collectResults(out);
  return out;
}

void Measurement::applyLocked(Action action, timestamp_t duration, bool clear) {
  switch (action) {
    case Action::None:
      break;
    case Action::Start:
      running_ = true;
      remaining_ = -1;
      break;
    case Action::StartFor:
      if (clear) clearLocked();
      running_ = true;
      remaining_ = duration;
      break;
    case Action::Stop:
      running_ = false;
      endCaptureLocked();
      remaining_ = -1;
      finished_.notify_all();
      break;
    case Action::Clear:
      clearLocked();
      break;
  }
}

void Measurement::clearLocked() {
  clearData();
  capture_duration_ = 0;
  overflow_count_ = 0;
  capturing_ = false;
  fresh_ = true;
}

void Measurement::streamStarting(bool in_overflow) {
  std::lock_guard lock(mutex_);
  plan_started_ = false;
  window_ = Window{};
  // Actions that waited for a block the last stream never reached take effect now.
  for (const PendingAction& p : pending_) applyLocked(p.action, p.duration, p.clear);
  pending_.clear();
  stream_ended_ = false;
  next_sequence_ = 0;
  in_overflow_ = in_overflow;
  capturing_ = false;
}

void Measurement::streamEnded() {
  std::lock_guard lock(mutex_);
  stream_ended_ = true;
  endCaptureLocked();
  finished_.notify_all();
}

void Measurement::endCaptureLocked() {
  if (!capturing_) return;
  onCaptureEnd();
  capturing_ = false;
}

void Measurement::processBlock(const TagBlock& block) {
  std::lock_guard lock(mutex_);
  block_ = &block;
  const struct BlockDone {
    const TagBlock*& block;
    ~BlockDone() { block = nullptr; }
  } block_done{block_};
  next_sequence_ = block.sequence + 1;
  std::size_t due = 0;
  while (due < pending_.size() && pending_[due].at_sequence <= block.sequence) {
    applyLocked(pending_[due].action, pending_[due].duration, pending_[due].clear);
    ++due;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(due));
  if (!running_) {
    trackOverflow(block, 0, block.tags.size());
    return;
  }

  if (plan_ && !plan_started_) {
    plan_begin_ = plan_->begin == ShardPlan::kStreamStart ? block.begin_time : plan_->begin;
    plan_started_ = true;
  }
  if (!plan_ && !capturing_) {
    onCaptureStart(block.begin_time, fresh_);
    capturing_ = true;
    fresh_ = false;
  }

  timestamp_t end = block.end_time;
  std::size_t tag_count = block.tags.size();
  const bool finishes = remaining_ >= 0 && block.end_time - block.begin_time >= remaining_;
  if (finishes) {
    end = block.begin_time + remaining_;
    tag_count = static_cast<std::size_t>(
        std::lower_bound(block.tags.begin(), block.tags.end(), end,
                         [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
        block.tags.begin());
  }

  if (plan_) {
    dispatchPlanned(block, tag_count, end);
  } else {
    dispatchSegment(block, 0, tag_count, end, kCounted);
    capture_duration_ += end - block.begin_time;
  }

  if (remaining_ >= 0) remaining_ -= end - block.begin_time;
  if (finishes) {
    running_ = false;
    endCaptureLocked();
    remaining_ = -1;
    // The rest of the block is not captured, but an overflow it opens or closes is the state
    // in which a later start() finds the stream.
    trackOverflow(block, tag_count, block.tags.size());
    finished_.notify_all();
  }
}

std::optional<std::span<const timestamp_t>> Measurement::sharedTimes(std::span<const Tag> tags,
                                                                     channel_t channel) const {
  if (block_ == nullptr || block_->shared == nullptr || tags.data() != block_->tags.data() ||
      tags.size() != block_->tags.size()) {
    return std::nullopt;
  }
  return block_->shared->times(channel, tags);
}

void Measurement::trackOverflow(const TagBlock& block, std::size_t from, std::size_t to) {
  auto index = std::lower_bound(block.special.begin(), block.special.end(), from);
  for (; index != block.special.end() && *index < to; ++index) {
    const TagType type = block.tags[*index].type;
    if (type == TagType::OverflowBegin) in_overflow_ = true;
    if (type == TagType::OverflowEnd) in_overflow_ = false;
  }
}

namespace {

std::size_t firstTagAtOrAfter(std::span<const Tag> tags, std::size_t from, std::size_t to,
                              timestamp_t time) {
  return static_cast<std::size_t>(
      std::lower_bound(tags.begin() + static_cast<std::ptrdiff_t>(from),
                       tags.begin() + static_cast<std::ptrdiff_t>(to), time,
                       [](const Tag& tag, timestamp_t t) { return tag.time < t; }) -
      tags.begin());
}

}  // namespace

void Measurement::setShardPlan(const ShardPlan& plan) {
  const std::optional<SplitSupport> support = splitSupport();
  const std::string who = kind_ + " '" + name_ + "'";
  if (!support) throw InvalidArgument(who + " cannot be split by time (it runs as one)");
  if (plan.count < 1 || plan.index < 0 || plan.index >= plan.count) {
    throw InvalidArgument(who + ": shard " + std::to_string(plan.index) + " of " +
                          std::to_string(plan.count) + " is invalid (valid: 0 <= index < count)");
  }
  if (plan.end <= plan.begin) {
    throw InvalidArgument(who + ": time range [" + std::to_string(plan.begin) + ", " +
                          std::to_string(plan.end) + ") ps is empty (valid: end > begin)");
  }
  if (plan.count > 1) {
    if (!support->any_order) {
      throw InvalidArgument(who +
                            ": its partial results merge only in time order, so it splits "
                            "into consecutive ranges but not into " +
                            std::to_string(plan.count) + " interleaved shards");
    }
    const timestamp_t margins = support->before + support->after;
    if (plan.chunk <= 0 || plan.chunk < margins) {
      throw InvalidArgument(
          who + ": chunk " + std::to_string(plan.chunk) +
          " ps is invalid (valid: >= " + std::to_string(std::max<timestamp_t>(margins, 1)) +
          " ps, the margins it reads around a chunk)");
    }
  }
  std::lock_guard lock(mutex_);
  plan_ = plan;
  split_ = *support;
  plan_started_ = false;
}

std::optional<ShardPlan> Measurement::shardPlan() const {
  std::lock_guard lock(mutex_);
  return plan_;
}

std::optional<Measurement::Window> Measurement::windowAfter(timestamp_t time) const {
  const timestamp_t begin = plan_begin_, end = plan_->end;
  const auto windowOf = [&](timestamp_t counted_begin, timestamp_t counted_end) {
    return Window{saturatingAdd(counted_begin, -split_.before), counted_begin, counted_end,
                  saturatingAdd(counted_end, split_.after)};
  };
  if (plan_->chunk == 0) {
    const Window window = windowOf(begin, end);
    if (window.end > time) return window;
    return std::nullopt;
  }
  const timestamp_t chunk = plan_->chunk;
  const auto count = static_cast<std::uint64_t>(plan_->count);
  const auto index = static_cast<std::uint64_t>(plan_->index);
  // Unsigned: the plan may end up to 2^64 ps after it begins. Chunk k begins before the end
  // for k < chunks, so k * chunk stays below the span and no chunk's start wraps.
  const std::uint64_t span = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
  const auto width = static_cast<std::uint64_t>(chunk);
  const std::uint64_t chunks = span / width + (span % width != 0 ? 1 : 0);
  const timestamp_t past = saturatingAdd(saturatingAdd(time, -split_.after), -begin);
  // Chunk k's window ends at begin + (k + 1) * chunk + after: the first that may end after
  // `time` is k = past / chunk; then the first owned one from there.
  auto k = past > 0 ? static_cast<std::uint64_t>(past / chunk) : std::uint64_t{0};
  k += (index + count - k % count) % count;
  for (; k < chunks; k += count) {
    const auto counted_begin =
        static_cast<timestamp_t>(static_cast<std::uint64_t>(begin) + k * width);
    const Window window =
        windowOf(counted_begin, std::min(end, saturatingAdd(counted_begin, chunk)));
    if (window.end > time) return window;
  }
  return std::nullopt;
}

void Measurement::dispatchPlanned(const TagBlock& block, std::size_t tag_count, timestamp_t end) {
  timestamp_t time = block.begin_time;
  std::size_t position = 0;
  while (time < end) {
    if (!capturing_) {
      const std::optional<Window> next = windowAfter(time);
      const timestamp_t begin = next ? std::max(next->begin, time) : end;
      if (begin >= end) {
        trackOverflow(block, position, tag_count);
        return;
      }
      const std::size_t first = firstTagAtOrAfter(block.tags, position, tag_count, begin);
      trackOverflow(block, position, first);
      position = first;
      time = begin;
      window_ = *next;
      onCaptureStart(time, fresh_);
      capturing_ = true;
      fresh_ = false;
      // The overflow began before this window: state built up from here on is as untrustworthy
      // as one pass would find it.
      if (in_overflow_) onOverflowBegin(Tag{TagType::OverflowBegin, 0, 0, 0, time});
    }
    const Part part = time < window_.counted_begin ? kLeadIn
                      : time < window_.counted_end ? kCounted
                                                   : kLeadOut;
    const timestamp_t boundary = part == kLeadIn    ? window_.counted_begin
                                 : part == kCounted ? window_.counted_end
                                                    : window_.end;
    const timestamp_t segment_end = std::min(boundary, end);
    const std::size_t stop = firstTagAtOrAfter(block.tags, position, tag_count, segment_end);
    dispatchSegment(block, position, stop, segment_end, part);
    if (part == kCounted) capture_duration_ += segment_end - time;
    position = stop;
    time = segment_end;
    if (time >= window_.end) endCaptureLocked();
  }
}

void Measurement::dispatchSegment(const TagBlock& block, std::size_t from, std::size_t to,
                                  timestamp_t segment_end, int part) {
  const auto deliver = [&](std::size_t first, std::size_t last) {
    const std::span<const Tag> tags = block.tags.subspan(first, last - first);
    if (part == kCounted) {
      processTimeTags(tags);
    } else if (part == kLeadIn) {
      processLeadIn(tags);
    } else {
      processLeadOut(tags);
    }
  };
  std::size_t position = from;
  auto index = std::lower_bound(block.special.begin(), block.special.end(), from);
  for (; index != block.special.end() && *index < to; ++index) {
    if (*index > position) deliver(position, *index);
    const Tag& tag = block.tags[*index];
    handleSpecial(tag, part == kCounted);
    position = *index + 1;
  }
  if (to > position) deliver(position, to);
  advanceTime(segment_end);
}

ResultSet Measurement::getPartialState() const {
  std::lock_guard lock(mutex_);
  ResultSet out = runFactsLocked();
  savePartialState(out);
  return out;
}

void Measurement::mergePartialState(const ResultSet& later) {
  const std::string who = kind_ + " '" + name_ + "'";
  if (!splitSupport()) throw InvalidArgument(who + " cannot be split by time (it runs as one)");
  if (later.kind != kind_ || later.parameters.entries() != parameters_.entries()) {
    throw InvalidArgument(who + ": cannot merge the partial state of " + later.kind + " '" +
                          later.name + "' (a merge needs the same kind and parameters)");
  }
  std::lock_guard lock(mutex_);
  mergePartial(later);  // first: a refused merge leaves everything as it was
  capture_duration_ += later.facts.getInt("capture_duration_ps");
  overflow_count_ += static_cast<std::uint64_t>(later.facts.getInt("overflow_count"));
  in_overflow_ = later.facts.getBool("in_overflow", false);
}

void Measurement::handleSpecial(const Tag& tag, bool counted) {
  advanceTime(tag.time);
  switch (tag.type) {
    case TagType::OverflowBegin:
      if (!in_overflow_ && counted) ++overflow_count_;
      in_overflow_ = true;
      onOverflowBegin(tag);
      break;
    case TagType::OverflowEnd:
      in_overflow_ = false;
      onOverflowEnd(tag);
      break;
    case TagType::MissedEvents:
      if (counted) onMissedEvents(tag);
      break;
    case TagType::Error:
      onError(tag);
      break;
    case TagType::TimeTag:
      break;
  }
}

}  // namespace tagflow
