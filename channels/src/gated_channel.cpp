#include "tagflow/channels/gated_channel.hpp"

#include "fast_path/inline_writer.hpp"
#include "tagflow/core/error.hpp"

namespace tagflow {

using namespace fast_path;

const ParameterSchema& GatedChannel::schema() {
  static const ParameterSchema schema(
      "GatedChannel", "the tags of a channel while an edge-triggered gate is open",
      {ParameterSpec::channel("input_channel").help("channel to pass"),
       ParameterSpec::channel("gate_start_channel").help("channel that opens the gate"),
       ParameterSpec::channel("gate_stop_channel")
           .help("channel that closes the gate (not the start channel)"),
       ParameterSpec::boolean("initially_open")
           .byDefault(false)
           .help("gate state at the start and after an overflow")});
  return schema;
}

GatedChannel::GatedChannel(std::string name, channel_t input, channel_t gate_start,
                           channel_t gate_stop, bool initially_open)
    : VirtualChannel(schema(), std::move(name),
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

// Branch-free: every tag is written as a candidate, only passed ones advance the end. The
// candidate buffer only grows, so no block pays for initialising it.
void GatedChannel::consume(std::span<const Tag> time_tags, std::vector<Tag>& emitted) {
  const channel_t output = outputChannel();
  if (candidates_.size() < time_tags.size()) candidates_.resize(time_tags.size());
  timestamp_t* out = candidates_.data();
  std::size_t end = 0;
  bool open = open_;
  const channel_t input = input_;  // locals: the stores below could alias the members
  const channel_t start = gate_start_;
  const channel_t stop = gate_stop_;
  for (const Tag& tag : time_tags) {
    prefetchAhead(&tag);
    out[end] = tag.time;
    end += ((tag.channel == input) & open) ? 1 : 0;
    open = (open | (tag.channel == start)) & (tag.channel != stop);
  }
  open_ = open;
  for (std::size_t i = 0; i < end; ++i) {
    emitted.push_back(Tag{TagType::TimeTag, 0, 0, output, out[i]});
  }
}

Tag* GatedChannel::transcribe(const TagBlock& block, Tag* out) {
  const channel_t output = outputChannel();
  InlineWriter writer(out, output);
  const TagRegister gated = tagTemplate(output);
  std::uint64_t open = open_ ? 1 : 0;
  const channel_t in = input_;
  const channel_t start = gate_start_;
  const channel_t stop = gate_stop_;
  for (const Tag& tag : block.tags) {
    prefetchAhead(&tag);
    const channel_t channel = tag.channel;
    const std::uint64_t is_input = channel == in ? 1 : 0;
    const std::uint64_t is_start = channel == start ? 1 : 0;
    const std::uint64_t is_stop = channel == stop ? 1 : 0;
    writer.copy(tag);
    writer.generateIf(is_input & open, gated);
    open = (open | is_start) & ~is_stop;
  }
  open_ = open != 0;
  return writer.finish();
}

void GatedChannel::onMissedEvents(const Tag& tag, std::vector<Tag>& emitted) {
  if (tag.channel != input_ || !open_) return;
  emitted.push_back(Tag{TagType::MissedEvents, 0, tag.missed_events, outputChannel(), tag.time});
}

}  // namespace tagflow
