#include "tagflow/channels/registry.hpp"

#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"

namespace tagflow {

namespace {

// Coincidences groups come as group_0, group_1, ... (checked to be in sequence).
std::vector<std::vector<channel_t>> groupsFrom(const Parameters& parameters) {
  std::vector<std::vector<channel_t>> groups;
  for (const auto& [key, value] : parameters.entries()) {
    if (key.rfind("group_", 0) == 0) groups.push_back(channelListArgument(parameters, key));
  }
  return groups;
}

std::vector<VirtualChannelKind> buildKinds() {
  std::vector<VirtualChannelKind> kinds;
  kinds.push_back({&DelayedChannel::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<DelayedChannel>(
                         name, channelArgument(p, "input_channel"), p.getInt("delay"));
                   }});
  kinds.push_back({&GatedChannel::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<GatedChannel>(name,
                                                           channelArgument(p, "input_channel"),
                                                           channelArgument(p, "gate_start_channel"),
                                                           channelArgument(p, "gate_stop_channel"),
                                                           p.getBool("initially_open", false));
                   }});
  kinds.push_back({&Combiner::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Combiner>(name, channelListArgument(p, "channels"));
                   }});
  kinds.push_back({&Coincidence::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Coincidence>(
                         name, channelListArgument(p, "channels"), p.getInt("coincidence_window"),
                         coincidenceTimestampFrom(p.getString("timestamp")));
                   }});
  kinds.push_back({&Coincidences::schema(), [](const std::string& name, const Parameters& p) {
                     return std::make_unique<Coincidences>(
                         name, groupsFrom(p), p.getInt("coincidence_window"),
                         coincidenceTimestampFrom(p.getString("timestamp")));
                   }});
  kinds.push_back(
      {&FrequencyMultiplier::schema(), [](const std::string& name, const Parameters& p) {
         return std::make_unique<FrequencyMultiplier>(name, channelArgument(p, "input_channel"),
                                                      p.getInt("multiplier"));
       }});
  kinds.push_back(
      {&ConstantFractionDiscriminator::schema(), [](const std::string& name, const Parameters& p) {
         return std::make_unique<ConstantFractionDiscriminator>(
             name, channelListArgument(p, "channels"), p.getInt("search_window"));
       }});
  kinds.push_back({&EventGenerator::schema(), [](const std::string& name, const Parameters& p) {
                     const auto pattern = p.getIntList("pattern");
                     return std::make_unique<EventGenerator>(
                         name, channelArgument(p, "trigger_channel"),
                         std::vector<timestamp_t>(pattern.begin(), pattern.end()),
                         p.getInt("trigger_divider"), p.getInt("divider_offset"),
                         p.contains("stop_channel") ? channelArgument(p, "stop_channel")
                                                    : CHANNEL_UNUSED);
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
  return makeNode(virtualChannelKinds(), kind, name, parameters, "virtual channel");
}

}  // namespace tagflow
