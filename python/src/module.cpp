// _tagflow: the compiled half of the tagflow Python package (python/tagflow/__init__.py is
// the other). Bindings only: every behaviour is the C++ library's.
#include "bindings.hpp"
#include "conversions.hpp"
#include "python_graph.hpp"
#include "tagflow/version.hpp"

PYBIND11_MODULE(_tagflow, module) {
  using namespace tagflow::python;
  module.doc() = "tagflow: time-tag stream processing (compiled part)";
  module.attr("__version__") = tagflow::kVersion;
  registerExceptions();
  bindEngine(module);
  bindMeasurements(module);
  bindChannels(module);
  bindServe(module);
  py::module_::import("atexit").attr("register")(py::cpp_function(&PythonGraph::stopAll));
}
