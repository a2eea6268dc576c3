#include "tagflow/channels/registry.hpp"

#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

namespace {

channel_t channelOf(const Parameters& parameters, std::string_view key) {
  const auto channels = channelList(Parameters{{std::string(key), parameters.getInt(key)}}, key);
  return channels.front();
}

// Coincidences groups come as group_0, group_1, ... (TOML has no nested integer lists here).
std::vector<std::vector<channel_t>> groupsFrom(const Parameters& parameters,
                                               const std::string& owner) {
  std::vector<std::vector<channel_t>> groups;
  for (const auto& [key, value] : parameters.entries()) {
    if (key.rfind("group_", 0) != 0) continue;
    if (key != "group_" + std::to_string(groups.size())) {
      throw InvalidArgument(owner + ": key '" + key + "' out of order (valid: group_0, group_1, " +
                            "... in sequence)");
    }
    groups.push_back(channelList(parameters, key));
  }
  return groups;
}

std::vector<VirtualChannelKind> buildKinds() {
  std::vector<VirtualChannelKind> kinds;
  kinds.push_back(VirtualChannelKind{
      "DelayedChannel",
      "a copy of a channel shifted later in time",
      {{"input_channel", "channel to copy"}, {"delay", "delay in ps (>= 0)"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly({"input_channel", "delay"}, "DelayedChannel '" + name + "'");
        return std::make_unique<DelayedChannel>(name, channelOf(p, "input_channel"),
                                                p.getInt("delay"));
      }});
  kinds.push_back(VirtualChannelKind{
      "GatedChannel",
      "the tags of a channel while an edge-triggered gate is open",
      {{"input_channel", "channel to pass"},
       {"gate_start_channel", "channel that opens the gate"},
       {"gate_stop_channel", "channel that closes the gate (not the start channel)"},
       {"initially_open", "gate state at the start and after an overflow, default false"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly(
            {"input_channel", "gate_start_channel", "gate_stop_channel", "initially_open"},
            "GatedChannel '" + name + "'");
        return std::make_unique<GatedChannel>(
            name, channelOf(p, "input_channel"), channelOf(p, "gate_start_channel"),
            channelOf(p, "gate_stop_channel"), p.getBool("initially_open", false));
      }});
  kinds.push_back(VirtualChannelKind{
      "Combiner",
      "the logical OR of channels: one tag per input tag",
      {{"channels", "list of channels to merge"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly({"channels"}, "Combiner '" + name + "'");
        return std::make_unique<Combiner>(name, channelList(p, "channels"));
      }});
  kinds.push_back(VirtualChannelKind{
      "Coincidence",
      "a tag whenever all listed channels fired within the window",
      {{"channels", "list of at least 2 channels"},
       {"coincidence_window", "window in ps (> 0), default 1000"},
       {"timestamp", "Last (default), Average, First or ListedFirst"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly({"channels", "coincidence_window", "timestamp"},
                      "Coincidence '" + name + "'");
        return std::make_unique<Coincidence>(
            name, channelList(p, "channels"), p.getInt("coincidence_window", 1000),
            coincidenceTimestampFrom(p.getString("timestamp", "Last")));
      }});
  kinds.push_back(VirtualChannelKind{
      "Coincidences",
      "Coincidence for several groups at once, one output channel per group",
      {{"group_0, group_1, ...", "lists of channels, one per group (64 distinct at most)"},
       {"coincidence_window", "window in ps (> 0), default 1000"},
       {"timestamp", "Last (default), Average, First or ListedFirst"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        const std::string owner = "Coincidences '" + name + "'";
        for (const auto& [key, value] : p.entries()) {
          if (key != "coincidence_window" && key != "timestamp" && key.rfind("group_", 0) != 0) {
            throw InvalidArgument("unknown key '" + key + "' for " + owner +
                                  " (valid keys: group_0, group_1, ..., coincidence_window, "
                                  "timestamp)");
          }
        }
        return std::make_unique<Coincidences>(
            name, groupsFrom(p, owner), p.getInt("coincidence_window", 1000),
            coincidenceTimestampFrom(p.getString("timestamp", "Last")));
      }});
  kinds.push_back(VirtualChannelKind{
      "FrequencyMultiplier",
      "a periodic channel at multiplier times its rate (undoes an event divider)",
      {{"input_channel", "periodic channel"}, {"multiplier", "factor (1..1000000)"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly({"input_channel", "multiplier"}, "FrequencyMultiplier '" + name + "'");
        return std::make_unique<FrequencyMultiplier>(name, channelOf(p, "input_channel"),
                                                     p.getInt("multiplier"));
      }});
  kinds.push_back(VirtualChannelKind{
      "ConstantFractionDiscriminator",
      "mean time of each pulse's rising and falling edge, one output per channel",
      {{"channels", "rising-edge channels (> 0); their falling edges must be in the stream"},
       {"search_window", "longest pulse in ps (> 0)"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly({"channels", "search_window"},
                      "ConstantFractionDiscriminator '" + name + "'");
        return std::make_unique<ConstantFractionDiscriminator>(name, channelList(p, "channels"),
                                                               p.getInt("search_window"));
      }});
  kinds.push_back(VirtualChannelKind{
      "EventGenerator",
      "a pattern of tags after every n-th trigger",
      {{"trigger_channel", "channel that triggers the pattern"},
       {"pattern", "list of offsets in ps (>= 0)"},
       {"trigger_divider", "use every n-th trigger (>= 1), default 1"},
       {"divider_offset", "which of the n (0..n-1), default 0"},
       {"stop_channel", "channel that aborts pending patterns, default none"}},
      [](const std::string& name, const Parameters& p) -> std::unique_ptr<VirtualChannel> {
        p.requireOnly(
            {"trigger_channel", "pattern", "trigger_divider", "divider_offset", "stop_channel"},
            "EventGenerator '" + name + "'");
        const auto pattern = p.getIntList("pattern");
        return std::make_unique<EventGenerator>(
            name, channelOf(p, "trigger_channel"),
            std::vector<timestamp_t>(pattern.begin(), pattern.end()),
            p.getInt("trigger_divider", 1), p.getInt("divider_offset", 0),
            p.contains("stop_channel") ? channelOf(p, "stop_channel") : CHANNEL_UNUSED);
      }});
  return kinds;
}

}  // namespace

const std::vector<VirtualChannelKind>& virtualChannelKinds() {
  static const std::vector<VirtualChannelKind> kinds = buildKinds();
  return kinds;
}

std::unique_ptr<VirtualChannel> makeVirtualChannel(std::string_view kind, const std::string& name,
                                                   const Parameters& parameters) {
  std::string known;
  for (const auto& entry : virtualChannelKinds()) {
    if (entry.kind == kind) return entry.make(name, parameters);
    known += (known.empty() ? "" : ", ") + std::string(entry.kind);
  }
  throw InvalidArgument("unknown virtual channel kind '" + std::string(kind) +
                        "' (valid: " + known + ")");
}

}  // namespace tagflow
