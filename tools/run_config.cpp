#include "run_config.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <variant>

#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/sharded_measurement.hpp"

namespace tagflow::cli {

namespace {

std::string place(const toml::node& node) {
  const auto& where = node.source().begin;
  return "line " + std::to_string(where.line);
}

ParameterValue toParameter(const toml::node& node, const std::string& key) {
  if (auto v = node.as_integer()) return std::int64_t{v->get()};
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_string()) return v->get();
  if (auto array = node.as_array()) {
    const bool names_channels = std::any_of(
        array->begin(), array->end(), [](const toml::node& item) { return item.is_string(); });
    if (names_channels) {
      std::vector<std::string> values;
      for (const auto& item : *array) {
        if (auto text = item.as_string()) {
          values.push_back(text->get());
        } else if (auto integer = item.as_integer()) {
          values.push_back(std::to_string(integer->get()));
        } else {
          throw InvalidArgument("key '" + key + "' (" + place(node) +
                                "): a list holding names may hold only names and integers");
        }
      }
      return values;
    }
    if (array->is_homogeneous(toml::node_type::integer)) {
      std::vector<std::int64_t> values;
      for (const auto& item : *array) values.push_back(item.as_integer()->get());
      return values;
    }
    std::vector<double> values;
    for (const auto& item : *array) {
      if (auto i = item.as_integer()) {
        values.push_back(static_cast<double>(i->get()));
      } else if (auto f = item.as_floating_point()) {
        values.push_back(f->get());
      } else {
        throw InvalidArgument("key '" + key + "' (" + place(node) +
                              "): lists may hold only numbers");
      }
    }
    return values;
  }
  throw InvalidArgument("key '" + key + "' (" + place(node) +
                        "): expected a number, boolean, string or list of numbers");
}

Parameters toParameters(const toml::table& table, const std::string& prefix,
                        std::map<std::string, std::vector<Parameters>>* tables) {
  Parameters parameters;
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (auto array = node.as_array(); array && array->is_array_of_tables()) {
      if (tables == nullptr) {
        throw InvalidArgument("'" + prefix + name + "' (" + place(node) +
                              "): tables are not allowed here");
      }
      auto& list = (*tables)[name];
      for (const auto& item : *array) {
        list.push_back(toParameters(*item.as_table(), prefix + name + ".", nullptr));
      }
      continue;
    }
    if (node.is_table()) {
      throw InvalidArgument("'" + prefix + name + "' (" + place(node) +
                            "): tables are not allowed here");
    }
    parameters.set(name, toParameter(node, prefix + name));
  }
  return parameters;
}

// The [[section]] tables: kind, name (default: kind and position) and the other keys.
std::vector<MeasurementSpec> nodeSpecs(const toml::table& root, const std::string& section) {
  std::vector<MeasurementSpec> specs;
  const toml::node* node = root.get(section);
  if (node == nullptr) return specs;
  const toml::array* tables = node->as_array();
  if (tables == nullptr || !tables->is_array_of_tables()) {
    throw InvalidArgument("'" + section + "' (" + place(*node) + ") must be written [[" + section +
                          "]]");
  }
  for (std::size_t i = 0; i < tables->size(); ++i) {
    Parameters p = toParameters(*tables->get(i)->as_table(), section + ".", nullptr);
    if (!p.contains("kind")) {
      throw InvalidArgument("[[" + section + "]] #" + std::to_string(i + 1) + " (" +
                            place(*tables->get(i)) +
                            "): missing key 'kind' (tagflow run --help lists the kinds)");
    }
    MeasurementSpec spec;
    spec.kind = p.getString("kind");
    spec.name = p.getString("name", spec.kind + std::to_string(i));
    const bool measurement = section == "measurement";
    if (measurement) spec.parallel = p.getInt("parallel", 1);
    if (spec.parallel < 1 || spec.parallel > ShardedMeasurement::kMaxShards) {
      throw InvalidArgument(section + " '" + spec.name + "': parallel " +
                            std::to_string(spec.parallel) + " is invalid (valid: 1 to " +
                            std::to_string(ShardedMeasurement::kMaxShards) + ")");
    }
    for (const auto& [key, value] : p.entries()) {
      if (key != "kind" && key != "name" && !(measurement && key == "parallel")) {
        spec.parameters.set(key, value);
      }
    }
    for (const auto& other : specs) {
      if (other.name == spec.name) {
        throw InvalidArgument("[[" + section + "]] #" + std::to_string(i + 1) + " (" +
                              place(*tables->get(i)) + "): duplicate name '" + spec.name +
                              "' (names must be unique)");
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

RunConfig parseRunConfig(const std::string& text, const std::string& origin,
                         bool need_measurements) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& error) {
    const auto& where = error.source().begin;
    throw InvalidArgument("config '" + origin + "' line " + std::to_string(where.line) +
                          ", column " + std::to_string(where.column) + ": " +
                          std::string(error.description()));
  }
  RunConfig config;
  config.text = text;
  for (const auto& [key, node] : root) {
    const std::string name(key.str());
    if (name != "run" && name != "source" && name != "channel" && name != "measurement") {
      throw InvalidArgument("config '" + origin + "': unknown section '" + name + "' (" +
                            place(node) + "; valid: run, source, channel, measurement)");
    }
  }

  // A [[run]] array or a `run = ...` value would otherwise be passed over with its keys.
  for (const char* section : {"run", "source"}) {
    if (const toml::node* node = root.get(section); node != nullptr && !node->is_table()) {
      throw InvalidArgument("config '" + origin + "': '" + section + "' is not a [" + section +
                            "] table (" + place(*node) + ")");
    }
  }
  if (auto run = root["run"].as_table()) {
    const Parameters p = toParameters(*run, "run.", nullptr);
    p.requireOnly({"output", "duration_ps", "threads", "max_blocks_in_flight", "checkpoint_s",
                   "first_virtual_channel"},
                  "[run]");
    config.checkpoint_s = p.getDouble("checkpoint_s", 0);
    if (!(config.checkpoint_s >= 0) || config.checkpoint_s > 86400 * 365) {
      throw InvalidArgument("[run] checkpoint_s " + formatParameter(p.at("checkpoint_s")) +
                            " is invalid (valid: 0 for none, or up to 31536000 seconds, a "
                            "year)");
    }
    config.output = p.getString("output", config.output);
    if (p.contains("duration_ps")) {
      // Stream times stay within 2^62 ps, as every source's do.
      config.duration_ps = p.getInt("duration_ps");
      if (config.duration_ps <= 0 || config.duration_ps > (timestamp_t{1} << 62)) {
        throw InvalidArgument(
            "[run] duration_ps " + std::to_string(config.duration_ps) +
            " is invalid (valid: 1..2^62 = 4611686018427387904; leave it out to run until the "
            "source ends)");
      }
    }
    const std::int64_t threads = p.getInt("threads", 0);
    if (threads < 0 || threads > 1024) {
      throw InvalidArgument("[run] threads " + std::to_string(threads) +
                            " is invalid (valid: 0 for all cores, or 1..1024)");
    }
    config.threads = static_cast<int>(threads);
    const std::int64_t in_flight = p.getInt("max_blocks_in_flight", 8);
    if (in_flight < 1 || in_flight > 4096) {
      throw InvalidArgument("[run] max_blocks_in_flight " + std::to_string(in_flight) +
                            " is invalid (valid: 1..4096)");
    }
    config.max_blocks_in_flight = static_cast<std::size_t>(in_flight);
    const std::int64_t first_virtual = p.getInt("first_virtual_channel", 0);
    if (first_virtual < 0 || first_virtual >= std::numeric_limits<channel_t>::max()) {
      throw InvalidArgument("[run] first_virtual_channel " + std::to_string(first_virtual) +
                            " is invalid (valid: 0 for " +
                            std::to_string(MeasurementGraph::kFirstVirtualChannel) + ", or 1.." +
                            std::to_string(std::numeric_limits<channel_t>::max() - 1) + ")");
    }
    config.first_virtual_channel = static_cast<channel_t>(first_virtual);
  }

  const toml::table* source = root["source"].as_table();
  if (source == nullptr) throw InvalidArgument("config '" + origin + "': missing section [source]");
  config.source.parameters = toParameters(*source, "source.", &config.source.tables);
  if (!config.source.parameters.contains("kind")) {
    std::string kinds;
    for (const SourceKind& kind : sourceKinds()) {
      kinds += (kinds.empty() ? "" : ", ") + kind.schema->kind();
    }
    throw InvalidArgument("config '" + origin + "': [source] has no key 'kind' (valid: " + kinds +
                          ")");
  }
  config.source.kind = config.source.parameters.getString("kind");

  config.channels = nodeSpecs(root, "channel");
  config.measurements = nodeSpecs(root, "measurement");
  if (need_measurements && config.measurements.empty()) {
    throw InvalidArgument("config '" + origin + "': no [[measurement]] given");
  }
  return config;
}

RunConfig loadRunConfig(const std::string& path, bool need_measurements) {
  // A folder opens as a stream that reads nothing: it would pass for an empty configuration.
  if (std::filesystem::is_directory(path)) {
    throw IoError("cannot read config file '" + path + "': it is a folder");
  }
  std::ifstream in(path);
  if (!in) throw IoError("cannot read config file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parseRunConfig(text.str(), path, need_measurements);
}

void overrideRun(RunConfig& config, const std::string& output, int threads) {
  if (!output.empty()) config.output = output;
  if (threads >= 0) config.threads = threads;
}

std::vector<Recording> recordingsOf(const RunConfig& config) {
  std::vector<Recording> recordings;
  for (const MeasurementSpec& spec : config.measurements) {
    if (spec.kind != "FileWriter" || !spec.parameters.contains("path")) continue;
    if (const auto* path = std::get_if<std::string>(&spec.parameters.at("path"))) {
      recordings.push_back({spec.name, *path});
    }
  }
  return recordings;
}

}  // namespace tagflow::cli
