// PythonMeasurement: a measurement written in Python. A subclass implements
//   process(self, tags)  -- tags: a read-only numpy structured array (type, reserved,
//                           missed_events, channel, time) viewing a run of time tags of the
//                           block, valid during the call only (copy what you keep);
//   clear(self)          -- drop the data (optional; tagflow's Python layer calls it under the
//                           measurement's lock, from the lifecycle's clear());
//   results(self)        -- a dict of name -> numpy array, for getResults() and HDF5 (optional).
// It runs in the graph like any node, on the graph's threads: the GIL is taken only around
// process(), so the profile shows what the Python code costs.
#pragma once

#include <pybind11/pybind11.h>

#include "tagflow/core/measurement.hpp"

namespace tagflow::python {

namespace py = pybind11;

class PythonMeasurement : public Measurement {
 public:
  explicit PythonMeasurement(std::string name);

  virtual void process(py::object tags) = 0;
  virtual void clearPython() {}
  virtual py::object resultsPython() { return py::dict(); }

 protected:
  void processTimeTags(std::span<const Tag> tags) final;
  void clearData() final;
  void collectResults(ResultSet& out) const final;
};

// Dispatches the virtual methods to the Python subclass.
class PythonMeasurementTrampoline : public PythonMeasurement {
 public:
  using PythonMeasurement::PythonMeasurement;
  void process(py::object tags) override;
  void clearPython() override;
  py::object resultsPython() override;
};

}  // namespace tagflow::python
