#include "tagflow/core/virtual_channel.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "tagflow/core/error.hpp"

namespace tagflow {

VirtualChannel::VirtualChannel(const ParameterSchema& schema, std::string name,
                               const Parameters& parameters, std::size_t output_count)
    : kind_(schema.kind()),
      name_(std::move(name)),
      parameters_(schema.validate(parameters, kind_ + " '" + name_ + "'")),
      schema_(schema),
      output_count_(output_count) {
  if (name_.empty()) throw InvalidArgument(kind_ + ": the name must not be empty");
}

channel_t VirtualChannel::getChannel() const {
  if (!first_output_) {
    throw InvalidArgument(kind_ + " '" + name_ +
                          "' has no channel yet: add it to a graph first (the graph allocates "
                          "virtual channel numbers)");
  }
  return *first_output_;
}

std::vector<channel_t> VirtualChannel::getChannels() const {
  std::vector<channel_t> channels;
  const channel_t first = getChannel();
  for (std::size_t i = 0; i < output_count_; ++i) {
    channels.push_back(static_cast<channel_t>(first + static_cast<channel_t>(i)));
  }
  return channels;
}

void VirtualChannel::setLiveSetting(const std::string& key, std::int64_t /*value*/) {
  std::string valid;
  for (const auto& [name, value] : liveSettings()) valid += (valid.empty() ? "" : ", ") + name;
  throw InvalidArgument(kind_ + " '" + name_ + "': '" + key +
                        "' cannot be changed while the stream runs (valid: " +
                        (valid.empty() ? std::string("none") : valid) + ")");
}

std::vector<VirtualChannel::SettingChange> VirtualChannel::settingChanges() const {
  std::lock_guard lock(changes_mutex_);
  return changes_;
}

void VirtualChannel::settingApplied(std::string key, std::int64_t value) {
  std::lock_guard lock(changes_mutex_);
  changes_.push_back(SettingChange{std::move(key), value, block_begin_});
}

ResultSet VirtualChannel::getResults() const {
  ResultSet out;
  out.kind = kind_;
  out.name = name_;
  out.parameters = parameters_;
  out.parameter_units = schema_.units();
  if (hasChannels()) {
    const std::vector<channel_t> channels = getChannels();
    out.facts.set("output_channels", std::vector<std::int64_t>(channels.begin(), channels.end()));
  }
  const std::vector<SettingChange> changes = settingChanges();
  for (const auto& setting : liveSettings()) {
    const std::string& key = setting.first;
    std::vector<std::int64_t> values, from;
    for (const SettingChange& change : changes) {
      if (change.key != key) continue;
      values.push_back(change.value);
      from.push_back(change.from);
    }
    const ParameterSpec* spec = schema_.find(key);
    const std::string unit = spec != nullptr && !spec->unitName().empty() ? spec->unitName() : "1";
    const std::size_t count = values.size();
    out.add(key + "_changes", unit, {count}, std::move(values),
            "the values " + key +
                " took while the stream ran, in order (before the first: the "
                "parameter's)");
    out.add(key + "_changed_from", "ps", {count}, std::move(from),
            "stream time from which each value held: the start of the first block that used it");
  }
  return out;
}

void VirtualChannel::assignChannels(channel_t first_output) {
  if (first_output_ && *first_output_ != first_output) {
    throw InvalidArgument(kind_ + " '" + name_ + "' already has channel " +
                          std::to_string(*first_output_) + " (a node belongs to one graph)");
  }
  first_output_ = first_output;
}

void VirtualChannel::streamStarting() {
  forgetHistory();
  dropOwed();
  in_overflow_ = false;
}

void VirtualChannel::process(const TagBlock& in, BlockBuffer& out) {
  if (clear_requested_.exchange(false, std::memory_order_acq_rel)) {
    forgetHistory();
    dropOwed();
  }
  block_begin_ = in.begin_time;
  applySettings();
  const std::size_t room = in.special.empty() && !in_overflow_ ? transcribeRoom(in) : 0;
  if (room != 0 && room <= kMaxTranscribeRoom * in.tags.size()) {
    if (out.storage.size() < room) out.storage.resize(room);
    if (const Tag* end = transcribe(in, out.storage.data())) {
      out.begin_time = in.begin_time;
      out.end_time = in.end_time;
      out.special.clear();
      out.tags = std::span<const Tag>(out.storage.data(), end);
      return;
    }
  }
  generate(in);
  merge(in, out);
}

void VirtualChannel::generate(const TagBlock& in) {
  emitted_.clear();
  passed_on_.clear();
  passed_on_at_.clear();
  std::size_t position = 0;
  for (std::uint32_t index : in.special) {
    if (index > position) consume(in.tags.subspan(position, index - position), emitted_);
    const Tag& tag = in.tags[index];
    switch (tag.type) {
      case TagType::OverflowBegin:
        forgetHistory();
        break;
      case TagType::Error:
        emitOwed(tag.time, emitted_);
        dropOwed();
        forgetHistory();
        break;
      case TagType::MissedEvents:
        // Right after the input's missed-events tag, so the count stays inside its interval.
        onMissedEvents(tag, passed_on_);
        passed_on_at_.resize(passed_on_.size(), index + 1);
        break;
      case TagType::OverflowEnd:
      case TagType::TimeTag:
        break;
    }
    position = index + 1;
  }
  if (in.tags.size() > position) consume(in.tags.subspan(position), emitted_);
  emitOwed(in.end_time, emitted_);

  const auto by_time = [](const Tag& a, const Tag& b) { return a.time < b.time; };
  if (!std::is_sorted(emitted_.begin(), emitted_.end(), by_time)) {
    std::stable_sort(emitted_.begin(), emitted_.end(), by_time);
  }
  if (!emitted_.empty() && emitted_.back().time >= in.end_time) {
    throw std::logic_error(kind_ + " '" + name_ + "' emitted a tag at " +
                           std::to_string(emitted_.back().time) + " ps, after its block's end " +
                           std::to_string(in.end_time) + " ps");
  }
  for (Tag& tag : emitted_) {
    if (tag.time >= in.begin_time) break;
    tag.time = in.begin_time;
  }
}

namespace {

// Copies tags with fixed-size memcpy calls, which the compiler inlines: runs between
// generated tags are short, and a library memmove call per run costs more than the copy.
Tag* copyRun(const Tag* from, const Tag* to, Tag* out) {
  for (; to - from >= 4; from += 4, out += 4) std::memcpy(out, from, 4 * sizeof(Tag));
  for (; from != to; ++from, ++out) std::memcpy(out, from, sizeof(Tag));
  return out;
}

}  // namespace

// For each generated tag, the number of input tags at or before its time (generated tags go
// after input tags of the same time). A branch-free binary search per generated tag: the
// searches do not depend on each other, so the processor overlaps them, where a forward scan
// would pay a misprediction at every generated tag.
void VirtualChannel::findInsertionPoints(std::span<const Tag> input) {
  insert_at_.resize(emitted_.size());
  if (input.empty()) {
    std::fill(insert_at_.begin(), insert_at_.end(), 0);
    return;
  }
  const Tag* const first = input.data();
  const Tag* const generated = emitted_.data();
  std::size_t* const insert_at = insert_at_.data();
  for (std::size_t j = 0; j < emitted_.size(); ++j) {
    const timestamp_t time = generated[j].time;
    const Tag* base = first;
    std::size_t length = input.size();
    while (length > 1) {
      const std::size_t half = length / 2;
      base = base[half].time <= time ? base + half : base;
      length -= half;
    }
    insert_at[j] = static_cast<std::size_t>(base - first) + (base->time <= time ? 1 : 0);
  }
}

// The common case, nothing special in the block: a branch-free two-way merge (the source of
// each output tag is selected, not branched on, so interleaving costs no mispredictions).
void VirtualChannel::mergePlain(std::span<const Tag> input, Tag* out) const {
  const Tag* in = input.data();
  const Tag* const in_end = in + input.size();
  const Tag* generated = emitted_.data();
  const Tag* const generated_end = generated + emitted_.size();
  while (in != in_end && generated != generated_end) {
    const bool take_generated = generated->time < in->time;
    *out++ = *(take_generated ? generated : in);
    generated += take_generated ? 1 : 0;
    in += take_generated ? 0 : 1;
  }
  out = copyRun(in, in_end, out);
  copyRun(generated, generated_end, out);
}

// Input, passed-on missed events and generated tags in order. Walks the input's special tags
// alongside to know, for each generated tag, whether it falls inside an overflow interval.
void VirtualChannel::merge(const TagBlock& in, BlockBuffer& out) {
  out.begin_time = in.begin_time;
  out.end_time = in.end_time;
  out.special.clear();
  std::size_t next_special = 0;
  std::size_t inserted = 0;
  const auto pass_specials_before = [&](std::size_t end) {
    for (; next_special < in.special.size() && in.special[next_special] < end; ++next_special) {
      const TagType type = in.tags[in.special[next_special]].type;
      if (type == TagType::OverflowBegin) in_overflow_ = true;
      if (type == TagType::OverflowEnd) in_overflow_ = false;
      out.special.push_back(static_cast<std::uint32_t>(in.special[next_special] + inserted));
    }
  };

  if (emitted_.empty() && passed_on_.empty()) {
    pass_specials_before(in.tags.size());
    out.tags = in.tags;
    return;
  }

  // Grown once, never shrunk: resizing down and up again would zero-fill every block.
  const std::size_t total = in.tags.size() + emitted_.size() + passed_on_.size();
  if (out.storage.size() < total) out.storage.resize(total);
  const bool plain = in.special.empty() && !in_overflow_ &&
                     std::all_of(emitted_.begin(), emitted_.end(),
                                 [](const Tag& tag) { return tag.type == TagType::TimeTag; });
  if (plain) {
    mergePlain(in.tags, out.storage.data());
    out.tags = std::span<const Tag>(out.storage.data(), total);
    return;
  }
  findInsertionPoints(in.tags);

  Tag* write = out.storage.data();
  std::size_t read = 0;
  std::size_t next_emitted = 0;
  std::size_t next_passed = 0;
  while (next_emitted < emitted_.size() || next_passed < passed_on_.size()) {
    // At one insertion point a passed-on count comes first: it belongs to the input tag just
    // before, a generated tag is at or after that tag's time.
    const bool passed =
        next_passed < passed_on_.size() &&
        (next_emitted == emitted_.size() || passed_on_at_[next_passed] <= insert_at_[next_emitted]);
    const std::size_t insert_at = passed ? passed_on_at_[next_passed] : insert_at_[next_emitted];
    Tag tag = passed ? passed_on_[next_passed++] : emitted_[next_emitted++];
    pass_specials_before(insert_at);
    write = copyRun(in.tags.data() + read, in.tags.data() + insert_at, write);
    read = insert_at;
    if (in_overflow_ && tag.type == TagType::TimeTag) {
      tag.type = TagType::MissedEvents;
      tag.missed_events = 1;
    }
    if (tag.type != TagType::TimeTag) {
      out.special.push_back(static_cast<std::uint32_t>(write - out.storage.data()));
    }
    *write++ = tag;
    ++inserted;
  }
  pass_specials_before(in.tags.size());
  copyRun(in.tags.data() + read, in.tags.data() + in.tags.size(), write);
  out.tags = std::span<const Tag>(out.storage.data(), total);
}

}  // namespace tagflow
