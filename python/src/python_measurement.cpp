#include "python_measurement.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <limits>

#include "conversions.hpp"

namespace tagflow::python {

namespace {

std::string typeName(const py::handle& value) {
  if (py::isinstance<py::dtype>(value)) return py::str(value).cast<std::string>();
  return py::str(value.get_type().attr("__name__")).cast<std::string>();
}

}  // namespace

PythonMeasurement::PythonMeasurement(std::string name)
    : Measurement("PythonMeasurement", std::move(name), Parameters{}) {}

void PythonMeasurement::processTimeTags(std::span<const Tag> tags) {
  py::gil_scoped_acquire gil;
  process(tagsView(tags));
}

void PythonMeasurement::clearData() {
  py::gil_scoped_acquire gil;
  clearPython();
}

void PythonMeasurement::collectResults(ResultSet& out) const {
  py::gil_scoped_acquire gil;
  const py::object results = const_cast<PythonMeasurement*>(this)->resultsPython();
  if (results.is_none()) return;
  const std::string owner = "CustomMeasurement '" + name() + "': results()";
  if (!py::isinstance<py::dict>(results)) {
    throw py::type_error(owner + " returned " + typeName(results) +
                         " (valid: a dict of numeric arrays, or None)");
  }
  for (const auto& [key, value] : results.cast<py::dict>()) {
    const std::string name = py::str(key).cast<std::string>();
    const py::array array = py::array::ensure(value);
    if (!array) throw py::type_error(owner + "['" + name + "'] is not an array");
    // Numbers only: anything else (text, objects) has no HDF5 result type.
    if (const char kind = array.dtype().kind();
        kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
      throw py::type_error(owner + "['" + name + "'] holds " + typeName(array.dtype()) +
                           " values (valid: integers, floats or bools)");
    }
    std::vector<std::size_t> shape(array.shape(), array.shape() + array.ndim());
    if (array.dtype().kind() == 'f') {
      const py::array_t<double, py::array::c_style | py::array::forcecast> values(array);
      out.add(name, "1", shape, std::vector<double>(values.data(), values.data() + values.size()),
              "");
    } else {
      if (array.dtype().kind() == 'u' && array.dtype().itemsize() == 8 && array.size() > 0) {
        // Results are signed 64-bit integers: a larger count would wrap silently.
        const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast> values(array);
        const std::uint64_t largest =
            *std::max_element(values.data(), values.data() + values.size());
        if (largest > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          throw py::value_error(owner + "['" + name + "'] holds " + std::to_string(largest) +
                                " (valid: integers up to 2^63-1)");
        }
      }
      const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> values(array);
      out.add(name, "1", shape,
              std::vector<std::int64_t>(values.data(), values.data() + values.size()), "");
    }
  }
}

void PythonMeasurementTrampoline::process(py::object tags) {
  PYBIND11_OVERRIDE_PURE(void, PythonMeasurement, process, tags);
}

void PythonMeasurementTrampoline::clearPython() {
  PYBIND11_OVERRIDE_NAME(void, PythonMeasurement, "_clear_data", clearPython);
}

py::object PythonMeasurementTrampoline::resultsPython() {
  PYBIND11_OVERRIDE_NAME(py::object, PythonMeasurement, "results", resultsPython);
}

}  // namespace tagflow::python
