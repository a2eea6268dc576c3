// The parts of the _tagflow module, each bound in a file of its own.
#pragma once

#include <pybind11/pybind11.h>

namespace tagflow::python {

namespace py = pybind11;

void bindEngine(py::module_& module);        // sources, the graph, profiles, HDF5, kinds
void bindMeasurements(py::module_& module);  // every measurement, Python ones included
void bindChannels(py::module_& module);      // every virtual channel
void bindServe(py::module_& module);         // the live view

}  // namespace tagflow::python
