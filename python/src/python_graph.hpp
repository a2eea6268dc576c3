// PythonGraph: a MeasurementGraph as Python holds it. It keeps the Python objects of its source
// and of every node added from Python alive as long as it lives (the C++ graph only refers to
// them), runs on its own threads with the GIL released, and turns Ctrl-C during a blocking
// call into a clean stop: the run ends at the next block, every measurement keeps its data,
// then KeyboardInterrupt is raised. Dropping a graph that runs stops it and waits for it, as
// does the interpreter's exit.
#pragma once

#include <pybind11/pybind11.h>

#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tagflow/core/measurement_graph.hpp"

namespace tagflow::python {

namespace py = pybind11;

class PythonGraph {
 public:
  PythonGraph(py::object source, int threads, std::size_t max_blocks_in_flight,
              channel_t first_virtual_channel);
  ~PythonGraph();
  PythonGraph(const PythonGraph&) = delete;
  PythonGraph& operator=(const PythonGraph&) = delete;

  void addMeasurement(py::object measurement);
  void addChannel(py::object channel);
  // Whether `channel` was added to this graph: its number means another channel elsewhere.
  bool holdsChannel(const VirtualChannel& channel) const;
  void removeMeasurement(py::object measurement);
  // `name` when given, else the kind followed by a number that makes it unique among the
  // graph's measurements (`measurement`) or channels. A name given that another node has, or
  // that cannot name a measurement's group of the results file, is an InvalidArgument.
  std::string uniqueName(const std::string& kind, const py::object& name, bool measurement);

  // Runs in the background; wait() or run() collect the profile.
  void start(timestamp_t duration_ps);
  // Blocks until the run started by start() ends (Ctrl-C stops it); returns its profile as a
  // dict. timeout_s < 0 or infinite waits without limit (NaN is refused); None on timeout.
  // Several threads may wait for one run: each gets its profile (or its exception).
  py::object wait(double timeout_s);
  // start() then wait().
  py::object run(timestamp_t duration_ps);
  // MeasurementGraph::runRange() in the background, then wait().
  py::object runRange(timestamp_t begin, timestamp_t end, timestamp_t origin);
  void stop();
  bool isRunning() const;
  // The profile of the last run that ended, as a dict; None before the first.
  py::object profile() const;
  // Stops every graph that still runs and waits for it: at the interpreter's exit, before it
  // finalizes, so that no run's thread takes the GIL of an interpreter that is going away
  // (a Python measurement would otherwise end the process with an error).
  static void stopAll();
  const std::optional<Profile>& lastProfile() const { return profile_; }

  MeasurementGraph& graph() { return *graph_; }
  Source& source() { return *source_; }
  std::vector<py::object> measurements() const;

 private:
  // The finished run `run`: its profile as a dict, or its exception; the first caller also
  // clears `running_`.
  py::object collect(const std::shared_future<Profile>& run, std::uint64_t number);

  py::object source_object_;
  Source* source_;
  std::unique_ptr<MeasurementGraph> graph_;
  std::vector<py::object> measurements_;
  std::vector<py::object> channels_;
  std::map<std::string, int> names_;
  std::optional<std::shared_future<Profile>> running_;
  std::uint64_t run_number_ = 0;  // counts start()s, so a waiter knows its run from a later one
  std::optional<Profile> profile_;
};

py::dict profileToDict(const Profile& profile);

}  // namespace tagflow::python
