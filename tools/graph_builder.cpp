#include "graph_builder.hpp"

#include <charconv>
#include <map>
#include <optional>

#include "error_context.hpp"
#include "tagflow/channels/registry.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/kinds.hpp"

namespace tagflow::cli {

namespace {

bool isChannelKey(const std::string& key) {
  return key.find("channel") != std::string::npos || key.find("gate") != std::string::npos ||
         key.rfind("group", 0) == 0;
}

std::optional<std::int64_t> integerText(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

struct Reference {
  std::string name;
  std::size_t output = 0;
};

Reference parseReference(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return {text, 0};
  const auto index = integerText(text.substr(colon + 1));
  if (!index || *index < 0) return {text, 0};
  return {text.substr(0, colon), static_cast<std::size_t>(*index)};
}

// The names a node's channel keys refer to.
std::vector<std::string> referencedNames(const Parameters& parameters) {
  std::vector<std::string> names;
  for (const auto& [key, value] : parameters.entries()) {
    if (!isChannelKey(key)) continue;
    std::vector<std::string> texts;
    if (const auto* text = std::get_if<std::string>(&value)) texts.push_back(*text);
    if (const auto* list = std::get_if<std::vector<std::string>>(&value)) texts = *list;
    for (const auto& text : texts) {
      if (!integerText(text)) names.push_back(parseReference(text).name);
    }
  }
  return names;
}

class Resolver {
 public:
  void define(const std::string& name, std::vector<channel_t> outputs) {
    outputs_[name] = std::move(outputs);
  }

  // The parameters with every channel name replaced by its number.
  Parameters resolve(const Parameters& parameters, const std::string& owner) const {
    Parameters resolved;
    for (const auto& [key, value] : parameters.entries()) {
      if (!isChannelKey(key)) {
        resolved.set(key, value);
      } else if (const auto* text = std::get_if<std::string>(&value)) {
        resolved.set(key, channelFor(*text, owner, key));
      } else if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
        std::vector<std::int64_t> channels;
        for (const auto& item : *list) channels.push_back(channelFor(item, owner, key));
        resolved.set(key, channels);
      } else {
        resolved.set(key, value);
      }
    }
    return resolved;
  }

 private:
  std::int64_t channelFor(const std::string& text, const std::string& owner,
                          const std::string& key) const {
    if (const auto number = integerText(text)) return *number;
    const Reference reference = parseReference(text);
    const auto found = outputs_.find(reference.name);
    if (found == outputs_.end()) {
      std::string known;
      for (const auto& [name, outputs] : outputs_) known += (known.empty() ? "" : ", ") + name;
      throw InvalidArgument(owner + ", key '" + key + "': no virtual channel named '" +
                            reference.name + "' (defined: " + (known.empty() ? "none" : known) +
                            ")");
    }
    if (reference.output >= found->second.size()) {
      throw InvalidArgument(owner + ", key '" + key + "': '" + text + "' asks for output " +
                            std::to_string(reference.output) + " of '" + reference.name +
                            "' (valid: 0.." + std::to_string(found->second.size() - 1) + ")");
    }
    return found->second[reference.output];
  }

  std::map<std::string, std::vector<channel_t>> outputs_;
};

// Virtual channel specs in an order where every channel comes after those it names.
std::vector<std::size_t> buildOrder(const std::vector<MeasurementSpec>& channels) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const std::string& name = channels[i].name;
    // A reference is a number, a name, or "name:output": other names could not be referred to.
    if (integerText(name) || name.find(':') != std::string::npos) {
      throw InvalidArgument("[[channel]] name '" + name +
                            "' cannot be referred to (valid: not a number, no ':')");
    }
    by_name[name] = i;
  }
  enum class Mark { None, Visiting, Done };
  std::vector<Mark> marks(channels.size(), Mark::None);
  std::vector<std::size_t> order, path;
  const auto visit = [&](auto& self, std::size_t node) -> void {
    if (marks[node] == Mark::Done) return;
    if (marks[node] == Mark::Visiting) {
      std::string cycle;
      for (auto it = std::find(path.begin(), path.end(), node); it != path.end(); ++it) {
        cycle += "'" + channels[*it].name + "' -> ";
      }
      throw InvalidArgument("[[channel]] " + cycle + "'" + channels[node].name +
                            "' is a cycle (a virtual channel cannot read its own output)");
    }
    marks[node] = Mark::Visiting;
    path.push_back(node);
    for (const auto& name : referencedNames(channels[node].parameters)) {
      if (auto found = by_name.find(name); found != by_name.end()) self(self, found->second);
    }
    path.pop_back();
    marks[node] = Mark::Done;
    order.push_back(node);
  };
  for (std::size_t i = 0; i < channels.size(); ++i) visit(visit, i);
  return order;
}

// A measurement spec whose channel names are resolved and whose parameters are checked
// against its kind's declaration, defaults filled in: what its factory receives.
struct CheckedMeasurement {
  const MeasurementSpec* spec;
  const MeasurementKind* kind;
  Parameters parameters;
};

CheckedMeasurement checkMeasurement(const MeasurementSpec& spec, const Resolver& resolver,
                                    const RunConfig& config) {
  const std::string owner = "measurement '" + spec.name + "' (" + spec.kind + ")";
  return withContext(owner, [&] {
    Parameters parameters = resolver.resolve(spec.parameters, owner);
    // A recording carries the configuration that produced it, unless one is given.
    if (spec.kind == "FileWriter" && !parameters.contains("configuration")) {
      parameters.set("configuration", config.text);
    }
    const MeasurementKind& kind = findKind(allMeasurementKinds(), spec.kind, "measurement");
    if (spec.parallel > 1) requireSplitsByTime(kind);
    return CheckedMeasurement{
        &spec, &kind, kind.schema->validate(parameters, kind.kind() + " '" + spec.name + "'")};
  });
}

std::unique_ptr<Measurement> makeChecked(const CheckedMeasurement& checked) {
  const MeasurementSpec& spec = *checked.spec;
  return withContext("measurement '" + spec.name + "' (" + spec.kind + ")", [&] {
    if (spec.parallel == 1) return checked.kind->make(spec.name, checked.parameters);
    const auto make = [kind = checked.kind, name = spec.name, parameters = checked.parameters] {
      return kind->make(name, parameters);
    };
    return std::unique_ptr<Measurement>(
        std::make_unique<ShardedMeasurement>(make, static_cast<int>(spec.parallel)));
  });
}

}  // namespace

BuiltGraph buildGraph(const RunConfig& config, MeasurementGraph& graph) {
  BuiltGraph built;
  Resolver resolver;
  // Every check comes before any node is made: a FileWriter creates (and so empties) its file
  // when it is made, and a configuration error must leave an earlier recording there intact.
  for (const MeasurementSpec& spec : config.measurements) checkResultsName(spec.name);
  for (const MeasurementSpec& spec : config.channels) checkVirtualChannelName(spec.name);
  for (std::size_t i : buildOrder(config.channels)) {
    const MeasurementSpec& spec = config.channels[i];
    const std::string owner = "channel '" + spec.name + "' (" + spec.kind + ")";
    auto channel = withContext(owner, [&] {
      return makeVirtualChannel(spec.kind, spec.name, resolver.resolve(spec.parameters, owner));
    });
    graph.add(*channel);
    resolver.define(spec.name, channel->getChannels());
    built.channels.push_back(std::move(channel));
  }
  std::vector<CheckedMeasurement> checked;
  for (const MeasurementSpec& spec : config.measurements) {
    checked.push_back(checkMeasurement(spec, resolver, config));
  }
  // The FileWriters last, so that the checks other kinds make when built come first too.
  std::vector<std::unique_ptr<Measurement>> made(checked.size());
  for (const bool writes_file : {false, true}) {
    for (std::size_t i = 0; i < checked.size(); ++i) {
      if ((checked[i].spec->kind == "FileWriter") == writes_file) {
        made[i] = makeChecked(checked[i]);
      }
    }
  }
  for (auto& measurement : made) {
    graph.add(*measurement);
    built.measurements.push_back(std::move(measurement));
  }
  graph.validate();
  return built;
}

std::vector<ResultSet> BuiltGraph::results() const {
  std::vector<ResultSet> results;
  for (const auto& measurement : measurements) results.push_back(measurement->getResults());
  return results;
}

GraphOptions graphOptionsOf(const RunConfig& config) {
  GraphOptions options;
  options.threads = config.threads;
  options.max_blocks_in_flight = config.max_blocks_in_flight;
  options.first_virtual_channel = config.first_virtual_channel;
  return options;
}

}  // namespace tagflow::cli
