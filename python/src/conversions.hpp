// Conversions between Python and tagflow for the bindings: keyword arguments to Parameters
// (checked later against the kind's declaration, so Python gets the C++ messages), vectors to
// numpy arrays without a second copy (the array takes the vector), result sets to dicts of
// arrays, blocks of tags to zero-copy numpy structured arrays, and tagflow's exceptions to
// Python's (InvalidType to TypeError, InvalidArgument and DataError to ValueError, IoError to
// OSError).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <span>
#include <string>
#include <vector>

#include "tagflow/core/parameters.hpp"
#include "tagflow/core/result_set.hpp"
#include "tagflow/core/tag.hpp"

namespace tagflow::python {

namespace py = pybind11;

class PythonGraph;

// A keyword argument's value: int, float, bool, str, a virtual channel (its channel), or a
// list of those. TypeError naming the key for anything else. A virtual channel object must
// have been added to `graph` (nullptr: no graph yet, as for a source's keys), for its number
// in another graph is another channel: ValueError naming it otherwise.
ParameterValue parameterValue(const std::string& key, const py::handle& value,
                              const PythonGraph* graph);
Parameters parametersFrom(const py::dict& kwargs, const PythonGraph* graph);
py::object pythonValue(const ParameterValue& value);

// An integer argument (a Python or numpy integer, not a bool) inside [lowest, highest]: else a
// TypeError, or a ValueError "NAME VALUE is invalid (valid: VALID)" also for values beyond
// 64 bits, which pybind's own conversion reports only as a signature mismatch.
std::int64_t integerArgument(const py::handle& value, const std::string& name, std::int64_t lowest,
                             std::int64_t highest, const std::string& valid);

// The vector moved into a numpy array of the given shape (default: 1-d).
template <class T>
py::array_t<T> toNumpy(std::vector<T>&& values, std::vector<py::ssize_t> shape = {}) {
  auto* owned = new std::vector<T>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  if (shape.empty()) shape.push_back(static_cast<py::ssize_t>(owned->size()));
  return py::array_t<T>(shape, owned->data(), free_when_done);
}

// The tagflow object that `object` wraps; else TypeError "<expected>, got <its type>".
template <class T>
T& objectOf(const py::handle& object, const char* expected) {
  try {
    return object.cast<T&>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(expected) + ", got " +
                         py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>());
  }
}

// The numpy dtype of a Tag: type, reserved, missed_events, channel, time.
py::dtype tagDtype();
// A structured array of the tags, moved (getData of TagStream) or viewed (the block a Python
// measurement is handed, valid during the call only).
py::array tagsToNumpy(std::vector<Tag>&& tags);
py::array tagsView(std::span<const Tag> tags);

py::dict resultsToDict(ResultSet&& results);

void registerExceptions();

}  // namespace tagflow::python
