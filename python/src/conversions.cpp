#include "conversions.hpp"

#include <pybind11/stl.h>

#include <cstddef>

#include "python_graph.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/core/virtual_channel.hpp"

namespace tagflow::python {

namespace {

bool isBool(const py::handle& value) {
  // numpy's bool is no Python bool, and no integer either (its __index__ is deprecated).
  return py::isinstance<py::bool_>(value) ||
         py::str(value.get_type().attr("__name__")).cast<std::string>() == "bool_";
}

ParameterValue scalar(const std::string& key, const py::handle& value, const PythonGraph* graph) {
  // bool before int: Python's bool is an int.
  if (isBool(value)) return PyObject_IsTrue(value.ptr()) == 1;
  if (py::isinstance<VirtualChannel>(value)) {
    const auto& channel = value.cast<const VirtualChannel&>();
    if (graph == nullptr || !graph->holdsChannel(channel)) {
      throw py::value_error("argument '" + key + "': " + channel.kind() + " '" + channel.name() +
                            "' (channel " + std::to_string(channel.getChannel()) +
                            ") belongs to another graph (valid: the virtual channels made on "
                            "this graph)");
    }
    return std::int64_t{channel.getChannel()};
  }
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__")) {
    try {
      return value.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error("argument '" + key + "': " + py::str(value).cast<std::string>() +
                            " does not fit a 64-bit integer");
    }
  }
  // float, numpy's floats of every width, and other real numbers.
  if (py::isinstance<py::float_>(value) || py::hasattr(value, "__float__")) {
    return py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  // A path object (pathlib.Path) as the text of its path.
  if (py::hasattr(value, "__fspath__")) {
    const py::object path = py::module_::import("os").attr("fsdecode")(value);
    return path.cast<std::string>();
  }
  throw py::type_error("argument '" + key +
                       "': expected a number, bool, str, path, virtual channel or "
                       "a list of those, got " +
                       py::str(value.get_type().attr("__name__")).cast<std::string>());
}

}  // namespace

std::int64_t integerArgument(const py::handle& value, const std::string& name, std::int64_t lowest,
                             std::int64_t highest, const std::string& valid) {
  if (isBool(value) || !py::hasattr(value, "__index__")) {
    throw py::type_error(name + " must be an integer, got " +
                         py::str(value.get_type().attr("__name__")).cast<std::string>());
  }
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) throw py::error_already_set();
  const auto integer = py::reinterpret_steal<py::int_>(index);
  std::int64_t result = 0;
  bool fits = true;
  try {
    result = integer.cast<std::int64_t>();
  } catch (const py::cast_error&) {
    fits = false;
  }
  if (!fits || result < lowest || result > highest) {
    throw py::value_error(name + " " + py::cast<std::string>(py::str(integer.ptr())) +
                          " is invalid (valid: " + valid + ")");
  }
  return result;
}

ParameterValue parameterValue(const std::string& key, const py::handle& value,
                              const PythonGraph* graph) {
  // A numpy array (a sequence whose items are numpy scalars) as the list of Python values.
  if (py::isinstance<py::array>(value)) {
    const py::object values = value.attr("tolist")();
    return parameterValue(key, values, graph);
  }
  // Bytes are sequences of small integers, never meant as a list of numbers: refused as
  // scalars.
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
      PyByteArray_Check(value.ptr()) || !py::isinstance<py::sequence>(value)) {
    return scalar(key, value, graph);
  }
  std::vector<std::int64_t> integers;
  std::vector<double> reals;
  bool any_real = false;
  const auto sequence = value.cast<py::sequence>();
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    // Owned: a sequence may make its items as they are asked for (a range, an array).
    const py::object item = sequence[i];
    const ParameterValue element = scalar(key, item, graph);
    if (const auto* integer = std::get_if<std::int64_t>(&element)) {
      integers.push_back(*integer);
      reals.push_back(static_cast<double>(*integer));
    } else if (const auto* real = std::get_if<double>(&element)) {
      any_real = true;
      reals.push_back(*real);
    } else {
      throw py::type_error("argument '" + key + "': a list may hold only numbers and channels");
    }
  }
  if (any_real) return reals;
  return integers;
}

Parameters parametersFrom(const py::dict& kwargs, const PythonGraph* graph) {
  Parameters parameters;
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key).cast<std::string>();
    if (value.is_none()) continue;  // left out: the declaration's default applies
    parameters.set(name, parameterValue(name, value, graph));
  }
  return parameters;
}

py::object pythonValue(const ParameterValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

py::dtype tagDtype() {
  static_assert(sizeof(Tag) == 16 && offsetof(Tag, channel) == 4 && offsetof(Tag, time) == 8);
  py::list fields;
  fields.append(py::make_tuple("type", "u1"));
  fields.append(py::make_tuple("reserved", "u1"));
  fields.append(py::make_tuple("missed_events", "<u2"));
  fields.append(py::make_tuple("channel", "<i4"));
  fields.append(py::make_tuple("time", "<i8"));
  return py::dtype::from_args(fields);
}

py::array tagsToNumpy(std::vector<Tag>&& tags) {
  auto* owned = new std::vector<Tag>(std::move(tags));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<Tag>*>(p); });
  return py::array(tagDtype(), {static_cast<py::ssize_t>(owned->size())}, {sizeof(Tag)},
                   owned->data(), free_when_done);
}

py::array tagsView(std::span<const Tag> tags) {
  // A base object that owns nothing makes numpy treat the memory as borrowed: no copy.
  py::array view(tagDtype(), {static_cast<py::ssize_t>(tags.size())}, {sizeof(Tag)}, tags.data(),
                 py::none());
  view.attr("flags").attr("writeable") = false;
  return view;
}

py::dict resultsToDict(ResultSet&& results) {
  py::dict out;
  for (ResultArray& array : results.arrays) {
    std::vector<py::ssize_t> shape(array.shape.begin(), array.shape.end());
    out[py::str(array.name)] = std::visit(
        [&](auto& data) -> py::object { return toNumpy(std::move(data), shape); }, array.data);
  }
  return out;
}

void registerExceptions() {
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const InvalidType& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DataError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });
}

}  // namespace tagflow::python
