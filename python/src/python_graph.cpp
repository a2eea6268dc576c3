#include "python_graph.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "conversions.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"

namespace tagflow::python {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

// The sources that feed a graph (touched with the GIL held). A source is read once: two
// graphs on one would take its blocks from each other, and free them twice.
std::set<const Source*>& boundSources() {
  static std::set<const Source*> sources;
  return sources;
}

// Every PythonGraph alive (touched with the GIL held), for stopAll().
std::set<PythonGraph*>& liveGraphs() {
  static std::set<PythonGraph*> graphs;
  return graphs;
}

}  // namespace

void PythonGraph::stopAll() {
  for (PythonGraph* graph : liveGraphs()) {
    if (!graph->running_) continue;
    graph->graph_->requestStop();
    py::gil_scoped_release release;
    graph->running_->wait();
  }
}

py::dict profileToDict(const Profile& profile) {
  py::list nodes;
  for (const NodeProfile& node : profile.nodes) {
    py::dict row;
    row["name"] = node.name;
    row["kind"] = node.kind;
    row["tags"] = node.tags;
    row["blocks"] = node.blocks;
    row["busy_s"] = node.busy_s;
    row["wait_s"] = node.wait_s;
    row["max_latency_s"] = node.max_latency_s;
    row["capacity_mtags_per_s"] = node.capacityMTagsPerSecond();
    row["share"] = node.kind == "source" ? py::object(py::none()) : py::cast(profile.share(node));
    nodes.append(row);
  }
  py::dict out;
  out["nodes"] = nodes;
  out["tags"] = profile.tags;
  out["blocks"] = profile.blocks;
  out["stream_duration_ps"] = profile.stream_duration_ps;
  out["wall_s"] = profile.wall_s;
  out["wall_mtags_per_s"] = profile.wallMTagsPerSecond();
  out["threads"] = profile.threads;
  out["max_blocks_in_flight"] = profile.max_blocks_in_flight;
  return out;
}

PythonGraph::PythonGraph(py::object source, int threads, std::size_t max_blocks_in_flight,
                         channel_t first_virtual_channel)
    : source_object_(std::move(source)),
      source_(&objectOf<Source>(source_object_,
                                "Graph: source must be a tagflow source "
                                "(tf.SyntheticSource(), tf.FileReader(path), ...)")) {
  if (boundSources().contains(source_)) {
    throw InvalidArgument(
        "Graph: this source already feeds another graph (valid: a source of its own for each "
        "graph, or the other graph deleted first)");
  }
  GraphOptions options;
  options.threads = threads;
  options.max_blocks_in_flight = max_blocks_in_flight;
  options.first_virtual_channel = first_virtual_channel;
  graph_ = std::make_unique<MeasurementGraph>(*source_, options);
  boundSources().insert(source_);
  liveGraphs().insert(this);
}

PythonGraph::~PythonGraph() {
  if (running_) {
    graph_->requestStop();
    py::gil_scoped_release release;
    running_->wait();
  }
  {
    // The graph's threads are gone; the nodes may go now, with the GIL (they are Python
    // objects).
    py::gil_scoped_release release;
    graph_.reset();
  }
  boundSources().erase(source_);
  liveGraphs().erase(this);
}

void PythonGraph::addMeasurement(py::object measurement) {
  graph_->add(objectOf<Measurement>(measurement, "add: expected a tagflow measurement"));
  measurements_.push_back(std::move(measurement));
}

void PythonGraph::addChannel(py::object channel) {
  if (running_) throw InvalidArgument("virtual channels cannot be added while the graph runs");
  graph_->add(objectOf<VirtualChannel>(channel, "add: expected a tagflow virtual channel"));
  channels_.push_back(std::move(channel));
}

bool PythonGraph::holdsChannel(const VirtualChannel& channel) const {
  return std::ranges::any_of(channels_, [&](const py::object& held) {
    return &held.cast<const VirtualChannel&>() == &channel;
  });
}

void PythonGraph::removeMeasurement(py::object measurement) {
  // A measurement run as shards (parallel=N) is in the graph as its ShardedMeasurement.
  if (py::hasattr(measurement, "_sharded")) measurement = measurement.attr("_sharded");
  Measurement& node = objectOf<Measurement>(measurement, "remove: expected a tagflow measurement");
  {
    py::gil_scoped_release release;
    graph_->remove(node);
  }
  std::erase_if(measurements_, [&](const py::object& held) { return held.is(measurement); });
}

std::string PythonGraph::uniqueName(const std::string& kind, const py::object& name,
                                    bool measurement) {
  const auto taken = [&](const std::string& candidate) {
    if (measurement) {
      return std::ranges::any_of(graph_->measurements(), [&](const Measurement* node) {
        return node->name() == candidate;
      });
    }
    return std::ranges::any_of(channels_, [&](const py::object& channel) {
      return channel.cast<const VirtualChannel&>().name() == candidate;
    });
  };
  if (!name.is_none()) {
    const std::string chosen = name.cast<std::string>();
    // Refused before the node is made: a FileWriter creates its file when it is built.
    if (measurement) {
      checkResultsName(chosen);
    } else {
      checkVirtualChannelName(chosen);
    }
    if (taken(chosen)) {
      throw InvalidArgument("duplicate " +
                            std::string(measurement ? "measurement" : "virtual channel") +
                            " name '" + chosen + "' (names must be unique in a graph)");
    }
    return chosen;
  }
  std::string chosen;
  do {
    const int number = ++names_[kind];
    chosen = number == 1 ? kind : kind + "_" + std::to_string(number);
  } while (taken(chosen));
  return chosen;
}

void PythonGraph::start(timestamp_t duration_ps) {
  if (running_) throw InvalidArgument("the graph is already running");
  running_ = graph_->runAsync(duration_ps).share();
  ++run_number_;
}

py::object PythonGraph::collect(const std::shared_future<Profile>& run, std::uint64_t number) {
  if (running_ && run_number_ == number) running_.reset();
  profile_ = run.get();
  return profileToDict(*profile_);
}

py::object PythonGraph::wait(double timeout_s) {
  if (!running_) throw InvalidArgument("the graph is not running (start() it first)");
  if (std::isnan(timeout_s)) {
    throw InvalidArgument(
        "wait timeout nan is invalid (valid: seconds >= 0, or negative or "
        "inf for no limit)");
  }
  // Held here: another thread's wait() may collect the run and clear running_ meanwhile.
  const std::shared_future<Profile> run = *running_;
  const std::uint64_t number = run_number_;
  // Beyond about 30 years, and negative, mean no limit (and a duration too large for the
  // clock would overflow it).
  const bool limited = timeout_s >= 0 && timeout_s < 1e9;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(limited ? timeout_s : 0));
  for (;;) {
    bool ready;
    {
      py::gil_scoped_release release;
      ready = run.wait_for(kPollInterval) == std::future_status::ready;
    }
    if (ready) break;
    if (PyErr_CheckSignals() != 0) {
      // Ctrl-C: stop at the next block, keep what was measured, then let Python see it.
      graph_->requestStop();
      {
        py::gil_scoped_release release;
        run.wait();
      }
      collect(run, number);
      throw py::error_already_set();
    }
    if (limited && std::chrono::steady_clock::now() >= deadline) return py::none();
  }
  return collect(run, number);
}

py::object PythonGraph::run(timestamp_t duration_ps) {
  start(duration_ps);
  return wait(-1);
}

py::object PythonGraph::runRange(timestamp_t begin, timestamp_t end, timestamp_t origin) {
  if (running_) throw InvalidArgument("the graph is already running");
  running_ = std::async(std::launch::async, [this, begin, end, origin] {
               return graph_->runRange(begin, end, origin);
             }).share();
  ++run_number_;
  return wait(-1);
}

void PythonGraph::stop() {
  graph_->requestStop();
}

bool PythonGraph::isRunning() const {
  return running_.has_value() &&
         running_->wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

py::object PythonGraph::profile() const {
  if (!profile_) return py::none();
  return profileToDict(*profile_);
}

std::vector<py::object> PythonGraph::measurements() const {
  return measurements_;
}

}  // namespace tagflow::python
