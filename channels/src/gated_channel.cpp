#include "tagflow/channels/gated_channel.hpp"

#include "tagflow/core/error.hpp"

namespace tagflow {

GatedChannel::GatedChannel(std::string name, channel_t input, channel_t gate_start,
                           channel_t gate_stop, bool initially_open)
    : VirtualChannel("GatedChannel", std::move(name),
                     Parameters{{"input_channel", std::int64_t{input}},
                                {"gate_start_channel", std::int64_t{gate_start}},
                                {"gate_stop_channel", std::int64_t{gate_stop}},
                                {"initially_open", initially_open}}),
      input_(input),
      gate_start_(gate_start),
      gate_stop_(gate_stop),
      initially_open_(initially_open),
      open_(initially_open) {
  for (channel_t channel : {input, gate_start, gate_stop}) {
    if (channel == CHANNEL_UNUSED) {
      throw InvalidArgument("GatedChannel '" + this->name() +
                            "': input, gate_start and gate_stop channels must all be set");
    }
  }
  if (gate_start == gate_stop) {
    throw InvalidArgument("GatedChannel '" + this->name() + "': gate_start_channel " +
                          std::to_string(gate_start) +
                          " equals gate_stop_channel (valid: two different channels)");
  }
}

void GatedChannel::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  for (const Tag& tag : time_tags) {
    if (tag.channel == input_ && open_) {
      emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, tag.time});
    }
    if (tag.channel == gate_start_) open_ = true;
    if (tag.channel == gate_stop_) open_ = false;
  }
}

void GatedChannel::onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) {
  if (tag.channel != input_ || !open_) return;
  emitted.push_back(Tag{TagType::MissedEvents, 0, tag.missed_events, outputChannel(), tag.time});
}

}  // namespace tagflow
