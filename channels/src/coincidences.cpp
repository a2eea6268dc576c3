#include "tagflow/channels/coincidences.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

namespace {

constexpr timestamp_t kNeverSeen = std::numeric_limits<timestamp_t>::min();
// Longest window, 2^62 ps (about 53 days): a tag's time less the window stays a time.
constexpr timestamp_t kMaxWindow = timestamp_t{1} << 62;

// `group_name(g)` names group g in messages: "group 0", or the key of a one-group kind.
std::vector<channel_t> distinctChannels(const std::vector<std::vector<channel_t>>& groups,
                                        const std::string& label,
                                        const std::function<std::string(std::size_t)>& group_name) {
  if (groups.empty()) throw InvalidArgument(label + ": no groups given (valid: one or more)");
  std::vector<channel_t> channels;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& group = groups[g];
    if (group.size() < 2) {
      throw InvalidArgument(label + ": " + group_name(g) + " has " + std::to_string(group.size()) +
                            " channel(s) (valid: at least 2 distinct channels)");
    }
    std::set<channel_t> seen;
    for (channel_t channel : group) {
      if (!seen.insert(channel).second) {
        throw InvalidArgument(label + ": " + group_name(g) + " lists channel " +
                              std::to_string(channel) + " twice (valid: distinct channels)");
      }
    }
    for (channel_t channel : group) {
      if (std::find(channels.begin(), channels.end(), channel) == channels.end()) {
        channels.push_back(channel);
      }
    }
  }
  if (channels.size() > Coincidences::kMaxChannels) {
    throw InvalidArgument(label + ": " + std::to_string(channels.size()) +
                          " distinct channels (valid: at most 64)");
  }
  return channels;
}

Parameters coincidenceParameters(const ParameterSchema& schema,
                                 const std::vector<std::vector<channel_t>>& groups,
                                 timestamp_t window, CoincidenceTimestamp timestamp) {
  Parameters parameters;
  if (schema.find("channels") != nullptr && groups.size() == 1) {
    parameters.set("channels", std::vector<std::int64_t>(groups[0].begin(), groups[0].end()));
  } else {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      parameters.set("group_" + std::to_string(g),
                     std::vector<std::int64_t>(groups[g].begin(), groups[g].end()));
    }
  }
  parameters.set("coincidence_window", window);
  parameters.set("timestamp", std::string(toString(timestamp)));
  return parameters;
}

ParameterSpec windowKey() {
  return ParameterSpec::integer("coincidence_window")
      .unit("ps")
      .atLeast(1)
      .atMost(static_cast<double>(kMaxWindow))
      .byDefault(std::int64_t{1000})
      .help("the window within which all channels of a group must fire");
}

ParameterSpec timestampKey() {
  return ParameterSpec::text("timestamp")
      .oneOf({"Last", "Average", "First", "ListedFirst"})
      .byDefault(std::string("Last"))
      .help("the time a coincidence is stamped with");
}

}  // namespace

const ParameterSchema& Coincidences::schema() {
  static const ParameterSchema schema(
      "Coincidences", "Coincidence for several groups at once, one output channel per group",
      {ParameterSpec::channels("group").numbered().sizeBetween(2, 64).help(
           "the channels of one group, one output channel per group (64 distinct at most)"),
       windowKey(), timestampKey()});
  return schema;
}

const ParameterSchema& Coincidence::schema() {
  static const ParameterSchema schema(
      "Coincidence", "a tag whenever all listed channels fired within the window",
      {ParameterSpec::channels("channels").sizeBetween(2, 64).help("the channels that must fire"),
       windowKey(), timestampKey()});
  return schema;
}

CoincidenceTimestamp coincidenceTimestampFrom(std::string_view text) {
  for (auto choice : {CoincidenceTimestamp::Last, CoincidenceTimestamp::Average,
                      CoincidenceTimestamp::First, CoincidenceTimestamp::ListedFirst}) {
    if (text == toString(choice)) return choice;
  }
  throw InvalidArgument("timestamp '" + std::string(text) +
                        "' is invalid (valid: Last, Average, First, ListedFirst)");
}

std::string_view toString(CoincidenceTimestamp timestamp) {
  switch (timestamp) {
    case CoincidenceTimestamp::Last:
      return "Last";
    case CoincidenceTimestamp::Average:
      return "Average";
    case CoincidenceTimestamp::First:
      return "First";
    case CoincidenceTimestamp::ListedFirst:
      return "ListedFirst";
  }
  return "Last";
}

Coincidences::Coincidences(std::string name, std::vector<std::vector<channel_t>> groups,
                           timestamp_t window, CoincidenceTimestamp timestamp)
    : Coincidences(schema(), std::move(name), std::move(groups), window, timestamp) {}

Coincidences::Coincidences(const ParameterSchema& schema, std::string name,
                           std::vector<std::vector<channel_t>> groups, timestamp_t window,
                           CoincidenceTimestamp timestamp)
    : VirtualChannel(schema, name, coincidenceParameters(schema, groups, window, timestamp),
                     groups.size()),
      requested_window_(window),
      window_(window),
      timestamp_(timestamp),
      index_(distinctChannels(groups, schema.kind() + " '" + name + "'",
                              [one_group = schema.find("channels") != nullptr](std::size_t g) {
                                return one_group ? std::string("channels")
                                                 : "group " + std::to_string(g);
                              }),
             schema.kind() + " '" + name + "'") {
  groups_of_slot_.resize(index_.size() + 1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Group group;
    group.output_index = static_cast<channel_t>(g);
    for (channel_t channel : groups[g]) {
      group.slots.push_back(index_.slot(channel));
      groups_of_slot_[index_.slot(channel)].push_back(static_cast<std::uint32_t>(g));
    }
    groups_.push_back(std::move(group));
  }
  last_.assign(index_.size() + 2, kNeverSeen);
  if (timestamp_ == CoincidenceTimestamp::Last &&
      std::all_of(groups_.begin(), groups_.end(),
                  [](const Group& group) { return group.slots.size() == 2; })) {
    for (const auto& of_slot : groups_of_slot_) {
      groups_per_slot_ = std::max(groups_per_slot_, of_slot.size());
    }
    // The entry past the discard slot is never written: the partner of padding entries.
    const auto never = static_cast<std::uint32_t>(index_.size() + 1);
    partners_.assign(groups_of_slot_.size() * groups_per_slot_, Partner{0, never, 0});
    for (std::uint32_t slot = 0; slot < groups_of_slot_.size(); ++slot) {
      for (std::size_t k = 0; k < groups_of_slot_[slot].size(); ++k) {
        const Group& group = groups_[groups_of_slot_[slot][k]];
        const std::uint32_t other = group.slots[0] == slot ? group.slots[1] : group.slots[0];
        partners_[slot * groups_per_slot_ + k] = Partner{0, other, group.output_index};
      }
    }
  }
}

template <class Found>
void Coincidences::registerTag(std::uint32_t slot, timestamp_t time, Found found) {
  last_[slot] = time;  // stamp() reads the group's tags including this one
  for (std::uint32_t g : groups_of_slot_[slot]) {
    const Group& group = groups_[g];
    const bool complete = std::all_of(group.slots.begin(), group.slots.end(), [&](auto other) {
      return other == slot || (last_[other] != kNeverSeen && time - last_[other] <= window_);
    });
    if (complete) found(group.output_index, stamp(group, time));
  }
}

void Coincidences::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  if (selected_.size() < time_tags.size()) selected_.resize(time_tags.size());
  const std::size_t count = index_.select(time_tags, selected_.data());
  for (std::size_t i = 0; i < count; ++i) {
    registerTag(selected_[i].slot, selected_[i].time, [&](channel_t output, timestamp_t time) {
      emitted.push_back(Tag{TagType::TimeTag, 0, 0, outputChannel(output), time});
    });
  }
}

std::size_t Coincidences::transcribeRoom(const TagBlock& block) const {
  return 2 * block.tags.size() + 1;
}

// One pass. A coincidence needs a tag of another channel of its group within the window, so a
// tag can only complete one when the last tag of any group channel is that recent; that test
// is branch-free, and only the few tags that pass it evaluate their groups. Gives up, with the
// state as it was, in the rare block that completes more coincidences than it has tags.
Tag* Coincidences::transcribe(const TagBlock& block, Tag* out) {
  switch (partners_.empty() ? 0 : groups_per_slot_) {
    case 1:
      return transcribePairs<1>(block, out);
    case 2:
      return transcribePairs<2>(block, out);
    case 3:
      return transcribePairs<3>(block, out);
    default:
      break;
  }
  const channel_t first_output = outputChannel(0);
  InlineWriter writer(out, first_output, groups_.size());
  const ChannelIndex::Lookup slot_of = index_.lookup();
  const std::uint32_t discard = index_.discardSlot();
  const auto width = static_cast<std::uint64_t>(window_);
  timestamp_t* const last = last_.data();
  last_before_block_ = last_;
  std::size_t found_in_block = 0;
  // Unsigned: from a channel never seen (the smallest time) the distance is huge, not negative.
  std::uint64_t latest =
      static_cast<std::uint64_t>(*std::max_element(last_.begin(), last_.begin() + index_.size()));
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    // Read before anything is stored (see InlineWriter).
    const std::uint32_t slot = slot_of(tag.channel);
    const auto time = static_cast<std::uint64_t>(tag.time);
    writer.copy(tag);
    const std::uint64_t member = flagIfEqual(slot, discard) ^ 1;
    const std::uint64_t recent = member & opaqueFlag(time - latest <= width);
    latest = selectByFlag(member, time, latest);
    last[slot] = static_cast<timestamp_t>(time);  // the discard slot's entry absorbs others
    if (recent == 0) continue;
    found_.clear();
    registerTag(slot, tag.time, [this](channel_t output, timestamp_t stamped) {
      found_.push_back(Tag{TagType::TimeTag, 0, 0, output, stamped});
    });
    found_in_block += found_.size();
    if (found_in_block > block.tags.size()) [[unlikely]] {
      last_ = last_before_block_;
      return nullptr;
    }
    for (const Tag& found : found_) {
      const channel_t channel = first_output + found.channel;
      const timestamp_t placed = std::max(found.time, block.begin_time);  // see VirtualChannel
      if (placed == tag.time) {
        writer.generateIf(true, tagTemplate(channel));
      } else {
        writer.insertEarlier(Tag{TagType::TimeTag, 0, 0, channel, placed});
      }
    }
  }
  return writer.finish();
}

// Groups of two channels stamped Last, the common case, without a branch: each tag is tested
// against the last tag of its partner in each of its groups (padded to the same number of
// groups, kGroupsPerSlot, for every slot with a partner never seen). The earliest time a partner
// may have is computed once per tag, so each group costs one comparison with memory; a partner
// never seen has the smallest time, before any such bound (the bound of a tag within `window`
// of that smallest time wraps, and no stream reaches there). A tag in several groups may
// complete a coincidence in each: where the output might outgrow transcribeRoom(), the pass
// gives up, with the state as it was, and the block takes the general path.
template <std::size_t kGroupsPerSlot>
Tag* Coincidences::transcribePairs(const TagBlock& block, Tag* out) {
  const channel_t first_output = outputChannel(0);
  InlineWriter writer(out, first_output, groups_.size());
  const ChannelIndex::Lookup slot_of = index_.lookup();
  const std::uint64_t minus_window = 0 - static_cast<std::uint64_t>(window_);
  for (Partner& partner : partners_) partner.header = timeTagHeader(first_output + partner.output);
  const Partner* const partners = partners_.data();
  timestamp_t* const last = last_.data();
  // A tag writes itself and a candidate per group past the output so far: past `last_start`
  // that might not fit.
  [[maybe_unused]] const Tag* last_start = out;
  if constexpr (kGroupsPerSlot > 1) {
    const std::size_t room = transcribeRoom(block);
    if (room < 1 + kGroupsPerSlot) return nullptr;
    last_start = out + (room - 1 - kGroupsPerSlot);
    last_before_block_ = last_;
  }
  for (const Tag& tag : block.tags) {
    if constexpr (kGroupsPerSlot > 1) {
      if (writer.end() > last_start) [[unlikely]] {
        last_ = last_before_block_;
        return nullptr;
      }
    }
    prefetchAhead(&tag);
    // Read before anything is stored (see InlineWriter).
    const timestamp_t time = tag.time;
    const std::uint32_t slot = slot_of(tag.channel);
    writer.copy(tag);
    const auto earliest = static_cast<timestamp_t>(static_cast<std::uint64_t>(time) + minus_window);
    const Partner* const partner = partners + slot * kGroupsPerSlot;
    for (std::size_t k = 0; k < kGroupsPerSlot; ++k) {
      writer.generateIfNotBelow(last[partner[k].slot], earliest, TagRegister::load(&partner[k]));
    }
    last[slot] = time;
  }
  return writer.finish();
}

timestamp_t Coincidences::stamp(const Group& group, timestamp_t now) const {
  switch (timestamp_) {
    case CoincidenceTimestamp::Last:
      return now;
    case CoincidenceTimestamp::First: {
      timestamp_t first = now;
      for (std::uint32_t slot : group.slots) first = std::min(first, last_[slot]);
      return first;
    }
    case CoincidenceTimestamp::Average: {
      // Offsets from `now` are within the window, so the sum cannot overflow.
      timestamp_t sum = 0;
      for (std::uint32_t slot : group.slots) sum += last_[slot] - now;
      const auto n = static_cast<timestamp_t>(group.slots.size());
      return now + (sum >= 0 ? sum / n : -((-sum + n - 1) / n));
    }
    case CoincidenceTimestamp::ListedFirst:
      return last_[group.slots.front()];
  }
  return now;
}

void Coincidences::setCoincidenceWindow(timestamp_t window) {
  windowKey().check(ParameterValue{window}, kind() + " '" + name() + "'", "coincidence_window");
  requested_window_.store(window, std::memory_order_release);
}

void Coincidences::setLiveSetting(const std::string& key, std::int64_t value) {
  if (key != "coincidence_window") return VirtualChannel::setLiveSetting(key, value);
  setCoincidenceWindow(value);
}

void Coincidences::applySettings() {
  const timestamp_t requested = requested_window_.load(std::memory_order_acquire);
  if (requested == window_) return;
  window_ = requested;
  settingApplied("coincidence_window", requested);
}

void Coincidences::forgetHistory() {
  std::fill(last_.begin(), last_.end(), kNeverSeen);
}

Coincidence::Coincidence(std::string name, std::vector<channel_t> channels, timestamp_t window,
                         CoincidenceTimestamp timestamp)
    : Coincidences(schema(), std::move(name), {std::move(channels)}, window, timestamp) {}

}  // namespace tagflow
