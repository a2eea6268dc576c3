// Sources, the graph, profiles, results files and the declarations of every kind.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "bindings.hpp"
#include "conversions.hpp"
#include "python_graph.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/tagfile/merge_stream_files.hpp"
#include "tagflow/kinds.hpp"

namespace tagflow::python {

namespace {

// A source by kind: keyword arguments are its keys; a list of dicts is a table
// ([[source.channel]] -> channel=[{...}, ...]). A source comes before its graph: a virtual
// channel object among its keys is of another graph.
std::unique_ptr<Source> makeSourceFrom(const std::string& kind, const py::dict& kwargs) {
  SourceSpec spec;
  spec.kind = kind;
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key).cast<std::string>();
    if (value.is_none()) continue;
    // {channel: delay_ps}: the [[source.delay]] tables.
    if (name == "input_delays") {
      if (!py::isinstance<py::dict>(value)) {
        throw InvalidArgument("input_delays " + py::repr(value).cast<std::string>() +
                              " is invalid (valid: a dict {channel: delay_ps})");
      }
      auto& rows = spec.tables["delay"];
      for (const auto& [channel, delay] : value.cast<py::dict>()) {
        Parameters row;
        row.set("channel", parameterValue("input_delays channel", channel, nullptr));
        row.set("delay_ps", parameterValue("input_delays delay", delay, nullptr));
        rows.push_back(std::move(row));
      }
      continue;
    }
    // A list of dicts is a table, and so is an empty list: no source key takes a list.
    const bool is_table =
        py::isinstance<py::list>(value) &&
        (py::len(value) == 0 || py::isinstance<py::dict>(value.cast<py::list>()[0]));
    if (is_table) {
      auto& rows = spec.tables[name];
      for (const py::handle row : value.cast<py::list>()) {
        rows.push_back(parametersFrom(row.cast<py::dict>(), nullptr));
      }
    } else {
      spec.parameters.set(name, parameterValue(name, value, nullptr));
    }
  }
  return makeSource(spec);
}

// One input array of memory_source(): its name and unit for the messages, and its range.
struct Column {
  const char* name;
  const char* unit;  // what its values count (" of ps"), for "is not a whole number<unit>"
  std::int64_t min;
  std::int64_t max;
  const char* range;  // [min, max] in words
};

constexpr Column kTimes{"times", " of ps", INT64_MIN, INT64_MAX, "64-bit signed integers"};
constexpr Column kChannels{"channels", "", INT32_MIN, INT32_MAX, "32-bit signed integers"};
constexpr const char* kWholeNumbers = "(valid: integers, or floats without a fractional part)";
constexpr int kContiguous = py::array::c_style | py::array::forcecast;

// "times[i] = <the element as Python prints it>", the start of each message on an element.
std::string element(const Column& column, const py::array& values, py::ssize_t i) {
  return std::string(column.name) + "[" + std::to_string(i) +
         "] = " + py::str(values[py::int_(i)]).cast<std::string>();
}

[[noreturn]] void refuseOutOfRange(const Column& column, const py::array& values, py::ssize_t i) {
  throw InvalidArgument(element(column, values, i) + " is out of range (valid: " + column.range +
                        ")");
}

std::int64_t checkedInteger(const Column& column, const py::array& values, py::ssize_t i,
                            std::int64_t value) {
  if (value < column.min || value > column.max) refuseOutOfRange(column, values, i);
  return value;
}

// Only a finite whole float in range converts exactly; anything else would become another
// time or channel.
std::int64_t checkedReal(const Column& column, const py::array& values, py::ssize_t i,
                         long double value) {
  if (!std::isfinite(value) || std::trunc(value) != value) {
    throw InvalidArgument(element(column, values, i) + " is not a whole number" + column.unit +
                          " " + kWholeNumbers);
  }
  // max + 1 is a power of two: exact even where max itself would round up to it.
  if (value < static_cast<long double>(column.min) ||
      value >= static_cast<long double>(column.max) + 1) {
    refuseOutOfRange(column, values, i);
  }
  return static_cast<std::int64_t>(value);
}

// An element of an object array (a Python int beyond 64 bits, None, ...), taken on its own.
std::int64_t checkedObject(const Column& column, const py::array& values, py::ssize_t i) {
  const py::object item = values[py::int_(i)];
  const bool is_bool = py::isinstance<py::bool_>(item);
  if (!is_bool && PyIndex_Check(item.ptr()) != 0) {
    std::int64_t value = 0;
    try {
      value = item.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      refuseOutOfRange(column, values, i);
    }
    return checkedInteger(column, values, i, value);
  }
  if (!is_bool && (py::isinstance<py::float_>(item) ||
                   py::isinstance(item, py::module_::import("numpy").attr("floating")))) {
    return checkedReal(column, values, i, item.cast<double>());
  }
  throw InvalidType(element(column, values, i) + " is not a number " + kWholeNumbers);
}

// The 1-d `values` as int64, each element checked against `column`: integers of any dtype as
// they are, floats only where they are whole numbers.
py::array_t<std::int64_t> wholeNumbers(const py::array& values, const Column& column) {
  const py::ssize_t n = values.size();
  py::array_t<std::int64_t> out(n);
  std::int64_t* integers = out.mutable_data();
  switch (values.dtype().kind()) {
    case 'i': {
      const py::array_t<std::int64_t, kContiguous> signed_values(values);
      for (py::ssize_t i = 0; i < n; ++i) {
        integers[i] = checkedInteger(column, values, i, signed_values.data()[i]);
      }
      break;
    }
    case 'u': {
      const py::array_t<std::uint64_t, kContiguous> unsigned_values(values);
      for (py::ssize_t i = 0; i < n; ++i) {
        const std::uint64_t value = unsigned_values.data()[i];
        if (value > static_cast<std::uint64_t>(column.max)) refuseOutOfRange(column, values, i);
        integers[i] = checkedInteger(column, values, i, static_cast<std::int64_t>(value));
      }
      break;
    }
    case 'f': {
      // Every float dtype converts to long double exactly.
      const py::array_t<long double, kContiguous> reals(values);
      for (py::ssize_t i = 0; i < n; ++i) {
        integers[i] = checkedReal(column, values, i, reals.data()[i]);
      }
      break;
    }
    case 'O':
      for (py::ssize_t i = 0; i < n; ++i) integers[i] = checkedObject(column, values, i);
      break;
    default:
      throw InvalidType(std::string(column.name) + " must hold numbers, got dtype " +
                        py::str(values.dtype()).cast<std::string>() + " " + kWholeNumbers);
  }
  return out;
}

py::array oneDimensional(const py::object& values, const Column& column) {
  const py::array array(values);
  if (array.ndim() != 1) {
    throw InvalidType(std::string(column.name) + " must be a 1-d array or list, got " +
                      (array.ndim() == 0
                           ? py::str(values.get_type().attr("__name__")).cast<std::string>()
                           : std::to_string(array.ndim()) + "-d array"));
  }
  return array;
}

// Tags from arrays (or lists) of times in ps and channels; floats are taken only where they
// are whole numbers, so that no value is silently rounded.
std::unique_ptr<Source> memorySource(const py::object& times, const py::object& channels,
                                     std::size_t block_size, std::optional<timestamp_t> begin,
                                     std::optional<timestamp_t> end) {
  const py::array time_values = oneDimensional(times, kTimes);
  const py::array channel_values = oneDimensional(channels, kChannels);
  if (time_values.size() != channel_values.size()) {
    throw InvalidArgument("times and channels must have the same length (got " +
                          std::to_string(time_values.size()) + " and " +
                          std::to_string(channel_values.size()) + " elements)");
  }
  const py::array_t<std::int64_t> checked_times = wholeNumbers(time_values, kTimes);
  const py::array_t<std::int64_t> checked_channels = wholeNumbers(channel_values, kChannels);
  auto tags = std::make_shared<std::vector<Tag>>();
  tags->reserve(static_cast<std::size_t>(checked_times.size()));
  const std::int64_t* t = checked_times.data();
  const std::int64_t* c = checked_channels.data();
  for (py::ssize_t i = 0; i < checked_times.size(); ++i) {
    if (i > 0 && t[i] < t[i - 1]) {
      throw InvalidArgument("times[" + std::to_string(i) + "] = " + std::to_string(t[i]) +
                            " ps is earlier than times[" + std::to_string(i - 1) +
                            "] = " + std::to_string(t[i - 1]) + " ps (valid: sorted in time)");
    }
    tags->push_back(makeTimeTag(static_cast<channel_t>(c[i]), t[i]));
  }
  if (begin || end) {
    const timestamp_t first = begin.value_or(tags->empty() ? 0 : tags->front().time);
    const timestamp_t last = end.value_or(tags->empty() ? first + 1 : tags->back().time + 1);
    return std::make_unique<MemorySource>(std::move(tags), block_size, first, last);
  }
  return std::make_unique<MemorySource>(std::move(tags), block_size);
}

// A numbered key (group_0, group_1, ...) takes its place among the arguments as one list of
// lists under its plural (groups), which the Python wrapper numbers.
py::list schemaKeys(const ParameterSchema& schema) {
  py::list keys;
  for (const ParameterSpec& spec : schema.keys()) {
    keys.append(spec.isNumbered() ? spec.name() + "s" : spec.name());
  }
  return keys;
}

py::dict numberedKeys(const ParameterSchema& schema) {
  py::dict numbered;
  for (const ParameterSpec& spec : schema.keys()) {
    if (spec.isNumbered()) numbered[py::str(spec.name() + "s")] = spec.name();
  }
  return numbered;
}

template <typename Kinds>
py::dict kindTable(const Kinds& kinds) {
  py::dict table;
  for (const auto& kind : kinds) {
    table[py::str(kind.schema->kind())] =
        py::make_tuple(schemaKeys(*kind.schema), kind.schema->summary(), kind.schema->help("    "),
                       numberedKeys(*kind.schema));
  }
  return table;
}

// A run's duration in ps: the graph checks its range; beyond 64 bits it is named here.
timestamp_t durationArgument(const py::object& duration_ps) {
  return integerArgument(duration_ps, "run duration", std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max(),
                         "> 0, or -1 for the whole stream");
}

}  // namespace

void bindEngine(py::module_& module) {
  py::class_<Source>(module, "Source", "a stream of time-ordered blocks of tags")
      .def("describe", &Source::describe)
      .def(
          "timeSpan",
          [](Source& source) -> py::object {
            const std::optional<StreamSpan> span = source.timeSpan();
            if (!span) return py::none();
            return py::make_tuple(span->begin, span->end);
          },
          "(begin, end) of the stream in ps when the source knows it without reading (a tag "
          "file with its time index, memory), else None");
  module.def("make_source", &makeSourceFrom, py::arg("kind"), py::arg("kwargs"),
             "a source of `kind` (synthetic, raw, tagfile, udp, ptu, file, ...) from its keys");
  module.def("memory_source", &memorySource, py::arg("times"), py::arg("channels"),
             py::arg("block_size") = 16384, py::arg("begin_time") = py::none(),
             py::arg("end_time") = py::none());

  py::class_<PythonGraph>(module, "Graph")
      .def(py::init([](py::object source, const py::object& threads,
                       const py::object& max_blocks_in_flight,
                       const py::object& first_virtual_channel) {
             return std::make_unique<PythonGraph>(
                 std::move(source),
                 static_cast<int>(integerArgument(threads, "threads", 0,
                                                  MeasurementGraph::kMaxThreads,
                                                  "0 for all cores, or 1..1024")),
                 static_cast<std::size_t>(
                     integerArgument(max_blocks_in_flight, "max_blocks_in_flight", 1,
                                     MeasurementGraph::kMaxBlocksInFlight, "1..4096")),
                 static_cast<channel_t>(integerArgument(
                     first_virtual_channel, "first_virtual_channel", 0,
                     std::numeric_limits<channel_t>::max() - 1,
                     "0 for 1000, or 1..2147483646: where virtual channel numbers begin")));
           }),
           py::arg("source"), py::arg("threads") = 0, py::arg("max_blocks_in_flight") = 8,
           py::arg("first_virtual_channel") = 0)
      .def("_add_measurement", &PythonGraph::addMeasurement)
      .def("_add_channel", &PythonGraph::addChannel)
      .def("remove", &PythonGraph::removeMeasurement, py::arg("measurement"),
           "take a measurement out of the graph (it keeps its data)")
      .def("_unique_name", &PythonGraph::uniqueName)
      .def(
          "start",
          [](PythonGraph& graph, const py::object& duration_ps) {
            graph.start(durationArgument(duration_ps));
          },
          py::arg("duration_ps") = -1,
          "run in the background for duration_ps of stream time (-1: the whole stream)")
      .def("wait", &PythonGraph::wait, py::arg("timeout") = -1.0,
           "wait for the run to end; its profile, or None on timeout")
      .def(
          "run",
          [](PythonGraph& graph, const py::object& duration_ps) {
            return graph.run(durationArgument(duration_ps));
          },
          py::arg("duration_ps") = -1,
          "run and wait; Ctrl-C stops the run cleanly and keeps the data")
      .def("runRange", &PythonGraph::runRange, py::arg("begin"), py::arg("end"),
           py::arg("origin") = ShardPlan::kStreamStart,
           "count only stream time [begin, end) ps (docs/parallel.md): the source seeks there "
           "when it can; the measurements' getPartialState() then merge in time order")
      .def("stop", &PythonGraph::stop, "end the run after the block being produced")
      .def("isRunning", &PythonGraph::isRunning)
      .def("profile", &PythonGraph::profile, "the profile of the last run, as plain data")
      .def_property_readonly("measurements", &PythonGraph::measurements)
      .def_property_readonly(
          "source", [](PythonGraph& graph) -> Source& { return graph.source(); },
          py::return_value_policy::reference_internal);

  module.def(
      "write_hdf5",
      [](const std::string& path, PythonGraph& graph, const std::string& config) {
        // Results are read without the GIL: a running graph may hold a measurement's lock while
        // its Python code waits for the GIL. `objects` keeps them alive meanwhile (and goes
        // after the GIL is back).
        const std::vector<py::object> objects = graph.measurements();
        std::vector<Measurement*> measurements;
        for (const py::object& object : objects)
          measurements.push_back(&object.cast<Measurement&>());
        const Profile profile = graph.lastProfile().value_or(Profile{});
        py::gil_scoped_release release;
        std::vector<ResultSet> results;
        for (Measurement* measurement : measurements) results.push_back(measurement->getResults());
        writeResultsHdf5(path, results, profile, runInfoOf(graph.source(), graph.graph(), config));
      },
      py::arg("path"), py::arg("graph"), py::arg("config") = "",
      "write every measurement of the graph, its virtual channels and its last profile, in "
      "tagflow run's layout");

  module.def(
      "merge_stream_files",
      [](const std::string& output, const std::vector<std::string>& inputs,
         const std::vector<channel_t>& channel_offsets,
         const std::vector<timestamp_t>& time_offsets, bool overlap_only,
         std::uint64_t max_file_size, const std::string& compression) {
        const tagfile::Compression method = tagfile::compressionFromName(compression);
        MergedFilesSummary summary;
        {
          py::gil_scoped_release release;
          summary = mergeStreamFiles(output, inputs, channel_offsets, time_offsets, overlap_only,
                                     max_file_size, method);
        }
        py::dict out;
        out["tags"] = summary.tags;
        out["bytes"] = summary.bytes;
        out["begin"] = summary.begin;
        out["end"] = summary.end;
        return out;
      },
      py::arg("output"), py::arg("inputs"), py::arg("channel_offsets"), py::arg("time_offsets"),
      py::arg("overlap_only"), py::arg("max_file_size"), py::arg("compression"));

  module.def(
      "require_splits_by_time",
      [](const std::string& kind) {
        requireSplitsByTime(findKind(allMeasurementKinds(), kind, "measurement"));
      },
      py::arg("kind"), "raise ValueError if the kind cannot run as shards (parallel > 1)");
  module.def("measurement_kinds", [] { return kindTable(allMeasurementKinds()); });
  module.def("channel_kinds", [] { return kindTable(virtualChannelKinds()); });
  module.def("source_kinds", [] { return kindTable(sourceKinds()); });
}

}  // namespace tagflow::python
