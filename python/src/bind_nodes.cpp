// Every measurement and virtual channel, with the reference software's method names. A node
// is built for a graph from keyword arguments checked against its kind's declaration (the C++
// messages), its virtual channel objects against the graph's; python/tagflow/__init__.py adds
// positional arguments. Every call that takes a node's lock releases the GIL first: a Python
// measurement holds the lock while it waits for the GIL.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "bindings.hpp"
#include "conversions.hpp"
#include "python_graph.hpp"
#include "python_measurement.hpp"
#include "tagflow/core/error.hpp"
#include "tagflow/measurements/tag_stream.hpp"
#include "tagflow/tagflow.hpp"

namespace tagflow::python {

namespace {

template <class F>
auto released(F&& call) {
  py::gil_scoped_release release;
  return call();
}

bool holdsVirtualChannel(const py::handle& value) {
  if (py::isinstance<VirtualChannel>(value)) return true;
  if (py::isinstance<py::str>(value) || !py::isinstance<py::sequence>(value)) return false;
  for (const py::handle item : value) {
    if (py::isinstance<VirtualChannel>(item)) return true;
  }
  return false;
}

// A virtual channel stands for its channel number only where the kind expects a channel:
// given as a bin width or a count it would pass as that number.
void refuseChannelsAsNumbers(const ParameterSchema& schema, const py::dict& kwargs) {
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key).cast<std::string>();
    const ParameterSpec* spec = schema.find(name);
    if (spec == nullptr || spec->type() == ParameterType::Channel ||
        spec->type() == ParameterType::ChannelList || !holdsVirtualChannel(value)) {
      continue;
    }
    throw py::type_error("argument '" + name + "': a virtual channel is a channel, not " +
                         std::string(parameterTypeDescription(spec->type())));
  }
}

template <class Node, class Base>
std::unique_ptr<Node> build(const std::vector<NodeKind<Base>>& kinds, const std::string& kind,
                            const PythonGraph& graph, const std::string& name,
                            const py::dict& kwargs) {
  const char* what = std::is_same_v<Base, Measurement> ? "measurement" : "virtual channel";
  refuseChannelsAsNumbers(*findKind(kinds, kind, what).schema, kwargs);
  std::unique_ptr<Base> node = makeNode(kinds, kind, name, parametersFrom(kwargs, &graph), what);
  auto* typed = dynamic_cast<Node*>(node.get());
  if (typed == nullptr) throw std::logic_error("kind '" + kind + "' built another type");
  node.release();
  return std::unique_ptr<Node>(typed);
}

template <class Node>
std::unique_ptr<Node> measurement(const std::string& kind, const PythonGraph& graph,
                                  const std::string& name, const py::dict& kwargs) {
  return build<Node>(allMeasurementKinds(), kind, graph, name, kwargs);
}

template <class Node>
std::unique_ptr<Node> channel(const std::string& kind, const PythonGraph& graph,
                              const std::string& name, const py::dict& kwargs) {
  return build<Node>(virtualChannelKinds(), kind, graph, name, kwargs);
}

template <class Node>
py::class_<Node, Measurement> measurementClass(py::module_& module, const char* kind) {
  return py::class_<Node, Measurement>(module, kind)
      .def(py::init(
               [kind](const PythonGraph& graph, const std::string& name, const py::dict& kwargs) {
                 return measurement<Node>(kind, graph, name, kwargs);
               }),
           py::arg("graph"), py::arg("name"), py::arg("kwargs"));
}

template <class Node>
py::class_<Node, VirtualChannel> channelClass(py::module_& module, const char* kind) {
  return py::class_<Node, VirtualChannel>(module, kind)
      .def(py::init(
               [kind](const PythonGraph& graph, const std::string& name, const py::dict& kwargs) {
                 return channel<Node>(kind, graph, name, kwargs);
               }),
           py::arg("graph"), py::arg("name"), py::arg("kwargs"));
}

// Each Python class derives from VirtualChannel alone, so both coincidence classes get it.
template <class Node>
void withWindowSetter(py::class_<Node, VirtualChannel> node_class) {
  node_class
      .def("setCoincidenceWindow", &Node::setCoincidenceWindow, py::arg("window"),
           "the window in ps from the next block on")
      .def("getCoincidenceWindow", &Node::getCoincidenceWindow);
}

bool waitUntilFinished(Measurement& m, double timeout_s) {
  if (std::isnan(timeout_s)) {
    throw InvalidArgument(
        "waitUntilFinished timeout nan is invalid (valid: seconds >= 0, or "
        "negative or inf for no limit)");
  }
  // Beyond about 30 years, and negative, mean no limit (and overflow the clock).
  const bool limited = timeout_s >= 0 && timeout_s < 1e9;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(limited ? timeout_s : 0));
  // In slices, so that Ctrl-C is seen.
  for (;;) {
    const bool finished = released([&] { return m.waitUntilFinished(50); });
    if (finished) return true;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (limited && std::chrono::steady_clock::now() >= deadline) return false;
    // An unbounded run never finishes, nor one whose stream ended before its duration.
    if (!released([&] { return m.mayFinish(); })) return false;
  }
}

py::dict parametersDict(const Parameters& parameters) {
  py::dict out;
  for (const auto& [key, value] : parameters.entries()) out[py::str(key)] = pythonValue(value);
  return out;
}

py::ssize_t size(std::size_t n) {
  return static_cast<py::ssize_t>(n);
}

}  // namespace

void bindMeasurements(py::module_& module) {
  py::class_<Measurement>(module, "Measurement")
      .def_property_readonly("name", &Measurement::name)
      .def_property_readonly("kind", &Measurement::kind)
      .def_property_readonly("parameters",
                             [](const Measurement& m) { return parametersDict(m.parameters()); })
      .def("start", &Measurement::start, py::call_guard<py::gil_scoped_release>())
      .def(
          "startFor",
          [](Measurement& m, const py::object& duration, bool clear) {
            const timestamp_t ps =
                integerArgument(duration, m.name() + ": startFor duration",
                                std::numeric_limits<std::int64_t>::min(),
                                std::numeric_limits<std::int64_t>::max(), "> 0 ps");
            released([&] { m.startFor(ps, clear); });
          },
          py::arg("duration"), py::arg("clear") = true)
      .def("stop", &Measurement::stop, py::call_guard<py::gil_scoped_release>())
      .def("clear", &Measurement::clear, py::call_guard<py::gil_scoped_release>())
      .def("isRunning", &Measurement::isRunning, py::call_guard<py::gil_scoped_release>())
      .def("waitUntilFinished", &waitUntilFinished, py::arg("timeout") = -1.0,
           "wait for a startFor() run to capture its duration (seconds; -1: no limit)")
      .def("getCaptureDuration", &Measurement::getCaptureDuration,
           py::call_guard<py::gil_scoped_release>())
      .def("getOverflowCount", &Measurement::getOverflowCount,
           py::call_guard<py::gil_scoped_release>())
      .def(
          "getResults",
          [](const Measurement& m) {
            return resultsToDict(released([&] { return m.getResults(); }));
          },
          "every result array, named as in the HDF5 file")
      .def(
          "getPartialState",
          [](const Measurement& m) {
            const std::vector<std::uint8_t> bytes =
                released([&] { return encodeResultSets({m.getPartialState()}); });
            return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "what this measurement counted, as bytes (for another process): merge it into the "
          "same measurement of another range with mergePartialState()")
      .def(
          "mergePartialState",
          [](Measurement& m, const py::bytes& state) {
            const std::string bytes = state;
            released([&] {
              const std::vector<ResultSet> states = decodeResultSets(
                  std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
              if (states.size() != 1) {
                throw InvalidArgument(m.kind() + " '" + m.name() + "': a partial state holds " +
                                      std::to_string(states.size()) +
                                      " measurements (valid: 1, from getPartialState())");
              }
              m.mergePartialState(states.front());
              return 0;
            });
          },
          py::arg("state"),
          "add the partial state of the range right after this one's (any range for the kinds "
          "that merge in any order)");

  py::class_<ShardedMeasurement, Measurement>(module, "ShardedMeasurement")
      .def(py::init([](const std::string& kind, const PythonGraph& graph, const std::string& name,
                       const py::dict& kwargs, const py::object& parallel_argument) {
             const auto parallel = static_cast<int>(
                 integerArgument(parallel_argument, kind + " '" + name + "': parallel", 1,
                                 ShardedMeasurement::kMaxShards,
                                 "1 to " + std::to_string(ShardedMeasurement::kMaxShards)));
             requireSplitsByTime(findKind(allMeasurementKinds(), kind, "measurement"));
             const Parameters parameters = parametersFrom(kwargs, &graph);
             return std::make_unique<ShardedMeasurement>(
                 [kind, name, parameters] {
                   return makeNode(allMeasurementKinds(), kind, name, parameters, "measurement");
                 },
                 parallel);
           }),
           py::arg("kind"), py::arg("graph"), py::arg("name"), py::arg("kwargs"),
           py::arg("parallel"))
      .def_property_readonly("parallel", &ShardedMeasurement::shardCount)
      .def(
          "merged",
          [](const ShardedMeasurement& m) { return released([&] { return m.merged(); }); },
          "a fresh measurement of the kind holding every shard's counts");

  py::class_<CounterData>(module, "CounterData",
                          "bins taken from a Counter by getDataObject(), oldest first")
      .def_readonly("size", &CounterData::size, "bins returned")
      .def_readonly("dropped_bins", &CounterData::dropped_bins,
                    "bins completed since the last removal but overwritten before it")
      .def_readonly("overflow", &CounterData::overflow,
                    "whether a returned bin was touched by an overflow interval")
      .def_readonly("first_bin", &CounterData::first_bin,
                    "the first returned bin's number (the capture's first bin is 0)")
      .def("getChannels",
           [](const CounterData& d) { return toNumpy(std::vector<channel_t>(d.channels)); })
      .def("getData",
           [](const CounterData& d) {
             return toNumpy(std::vector<std::int64_t>(d.data),
                            {size(d.channels.size()), size(d.size)});
           })
      .def("getDataNormalized",
           [](const CounterData& d) {
             return toNumpy(d.dataNormalized(), {size(d.channels.size()), size(d.size)});
           })
      .def("getOverflowMask",
           [](const CounterData& d) { return toNumpy(std::vector<std::int8_t>(d.overflow_mask)); })
      .def("getIndex", [](const CounterData& d) { return toNumpy(d.index()); })
      .def("getTime",
           [](const CounterData& d) { return toNumpy(std::vector<timestamp_t>(d.time)); })
      .def("getDataTotalCounts", [](const CounterData& d) {
        return toNumpy(std::vector<std::uint64_t>(d.total_counts));
      });

  measurementClass<Counter>(module, "Counter")
      .def(
          "getDataObject",
          [](Counter& c, bool remove) { return released([&] { return c.getDataObject(remove); }); },
          py::arg("remove") = false,
          "the completed bins not removed before (at most n_values); remove=True removes them, "
          "so that polling with it returns every bin once")
      .def(
          "getData",
          [](const Counter& c, bool rolling) {
            return toNumpy(released([&] { return c.getData(rolling); }),
                           {size(c.channels().size()), size(c.nValues())});
          },
          py::arg("rolling") = true)
      .def(
          "getDataNormalized",
          [](const Counter& c, bool rolling) {
            return toNumpy(released([&] { return c.getDataNormalized(rolling); }),
                           {size(c.channels().size()), size(c.nValues())});
          },
          py::arg("rolling") = true)
      .def(
          "getOverflowMask",
          [](const Counter& c, bool rolling) {
            return toNumpy(released([&] { return c.getOverflowMask(rolling); }));
          },
          py::arg("rolling") = true)
      .def("getIndex",
           [](const Counter& c) { return toNumpy(released([&] { return c.getIndex(); })); })
      .def("getDataTotalCounts", [](const Counter& c) {
        return toNumpy(released([&] { return c.getDataTotalCounts(); }));
      });

  measurementClass<Countrate>(module, "Countrate")
      .def("getData",
           [](const Countrate& c) { return toNumpy(released([&] { return c.getData(); })); })
      .def("getCountsTotal", [](const Countrate& c) {
        return toNumpy(released([&] { return c.getCountsTotal(); }));
      });

  measurementClass<Correlation>(module, "Correlation")
      .def("getData",
           [](const Correlation& c) { return toNumpy(released([&] { return c.getData(); })); })
      .def("getIndex",
           [](const Correlation& c) { return toNumpy(released([&] { return c.getIndex(); })); })
      .def("getDataNormalized",
           [](const Correlation& c) {
             return toNumpy(released([&] { return c.getDataNormalized(); }));
           })
      .def("getEventCounts", &Correlation::getEventCounts,
           py::call_guard<py::gil_scoped_release>());

  py::class_<HistogramLogBinsData>(module, "HistogramLogBinsData",
                                   "what a HistogramLogBins reports, taken at one moment")
      .def_readonly("accumulation_time_start", &HistogramLogBinsData::accumulation_time_start,
                    "ps of accumulation with the start gate open")
      .def_readonly("accumulation_time_click", &HistogramLogBinsData::accumulation_time_click,
                    "ps of accumulation with the click gate open")
      .def_readonly("n_start", &HistogramLogBinsData::n_start, "starts counted during accumulation")
      .def_readonly("n_click", &HistogramLogBinsData::n_click, "clicks counted during accumulation")
      .def("getBinEdges",
           [](const HistogramLogBinsData& d) {
             return toNumpy(std::vector<std::int64_t>(d.bin_edges));
           })
      .def("getCounts",
           [](const HistogramLogBinsData& d) {
             return toNumpy(std::vector<std::uint64_t>(d.counts));
           })
      .def("getG2",
           [](const HistogramLogBinsData& d) { return toNumpy(std::vector<double>(d.g2)); })
      .def("getG2Normalization", [](const HistogramLogBinsData& d) {
        return toNumpy(std::vector<double>(d.g2_normalization));
      });

  measurementClass<HistogramLogBins>(module, "HistogramLogBins")
      .def("getDataObject",
           [](const HistogramLogBins& h) { return released([&] { return h.getDataObject(); }); })
      .def("getAccumulationTimeStart", &HistogramLogBins::getAccumulationTimeStart,
           py::call_guard<py::gil_scoped_release>())
      .def("getAccumulationTimeClick", &HistogramLogBins::getAccumulationTimeClick,
           py::call_guard<py::gil_scoped_release>())
      .def("getBinEdges",
           [](const HistogramLogBins& h) {
             return toNumpy(std::vector<std::int64_t>(h.getBinEdges()));
           })
      .def("getData",
           [](const HistogramLogBins& h) { return toNumpy(released([&] { return h.getData(); })); })
      .def("getDataNormalizedCountsPerPs",
           [](const HistogramLogBins& h) {
             return toNumpy(released([&] { return h.getDataNormalizedCountsPerPs(); }));
           })
      .def("getDataNormalizedG2", [](const HistogramLogBins& h) {
        return toNumpy(released([&] { return h.getDataNormalizedG2(); }));
      });

  auto stability = measurementClass<FrequencyStability>(module, "FrequencyStability");
  const auto stabilityGetter = [&](const char* name,
                                   std::vector<double> FrequencyStabilityData::*field) {
    stability.def(name, [field](const FrequencyStability& f) {
      return toNumpy(released([&] { return f.getDataObject().*field; }));
    });
  };
  stabilityGetter("getTau", &FrequencyStabilityData::tau);
  stabilityGetter("getADEV", &FrequencyStabilityData::adev);
  stabilityGetter("getMDEV", &FrequencyStabilityData::mdev);
  stabilityGetter("getHDEV", &FrequencyStabilityData::hdev);
  stabilityGetter("getSTDD", &FrequencyStabilityData::stdd);
  stabilityGetter("getADEVScaled", &FrequencyStabilityData::adev_scaled);
  stabilityGetter("getTDEV", &FrequencyStabilityData::tdev);
  stabilityGetter("getHDEVScaled", &FrequencyStabilityData::hdev_scaled);
  stabilityGetter("getTraceIndex", &FrequencyStabilityData::trace_index);
  stabilityGetter("getTracePhase", &FrequencyStabilityData::trace_phase);
  stabilityGetter("getTraceFrequency", &FrequencyStabilityData::trace_frequency);
  stability
      .def(
          "getTraceFrequencyAbsolute",
          [](const FrequencyStability& f, double input_frequency) {
            return toNumpy(released([&] { return f.getTraceFrequencyAbsolute(input_frequency); }));
          },
          py::arg("input_frequency") = 0.0)
      .def("getMeanPeriod", &FrequencyStability::getMeanPeriod,
           py::call_guard<py::gil_scoped_release>());

  measurementClass<PhaseNoise>(module, "PhaseNoise")
      .def("getDataObject",
           [](const PhaseNoise& p) {
             std::vector<PhaseNoiseSpectrum> spectra = released([&] { return p.getDataObject(); });
             py::list out;
             for (PhaseNoiseSpectrum& spectrum : spectra) {
               py::dict row;
               row["frequency"] = spectrum.frequency;
               row["offset"] = toNumpy(std::move(spectrum.offset));
               row["phase_noise"] = toNumpy(std::move(spectrum.phase_noise));
               row["bin_width"] = toNumpy(std::move(spectrum.bin_width));
               row["segments"] = toNumpy(std::move(spectrum.segments));
               row["averaged_sequences"] = spectrum.averaged_sequences;
               out.append(row);
             }
             return out;
           })
      .def(
          "getIntegratedJitter",
          [](const PhaseNoise& p, double lower, double upper) {
            return toNumpy(released([&] { return p.getIntegratedJitter(lower, upper); }));
          },
          py::arg("lower") = 0.0, py::arg("upper") = std::numeric_limits<double>::infinity());

  measurementClass<FileWriter>(module, "FileWriter")
      .def("getTotalEvents", &FileWriter::getTotalEvents, py::call_guard<py::gil_scoped_release>())
      .def("getTotalSize", &FileWriter::getTotalSize, py::call_guard<py::gil_scoped_release>())
      .def("setMarker", &FileWriter::setMarker, py::call_guard<py::gil_scoped_release>())
      .def("split", py::overload_cast<const std::string&>(&FileWriter::split),
           py::arg("new_filename") = std::string(), py::call_guard<py::gil_scoped_release>(),
           "the next block to a new part; with new_filename, to a new tag file set there")
      .def("getPath", &FileWriter::getPath, py::call_guard<py::gil_scoped_release>())
      .def("flush", &FileWriter::flush, py::call_guard<py::gil_scoped_release>())
      .def("close", &FileWriter::close, py::call_guard<py::gil_scoped_release>());

  measurementClass<TagStream>(module, "TagStream")
      .def(
          "getData",
          [](TagStream& t) { return tagsToNumpy(released([&] { return t.getData(); })); },
          "the tags since the last call: a numpy structured array (type, reserved, "
          "missed_events, channel, time)")
      .def("getDropped", &TagStream::getDropped, py::call_guard<py::gil_scoped_release>());

  py::class_<PythonMeasurement, Measurement, PythonMeasurementTrampoline>(module,
                                                                          "PythonMeasurement")
      .def(py::init<std::string>(), py::arg("name"))
      .def("process", &PythonMeasurement::process)
      .def("_clear_data", &PythonMeasurement::clearPython)
      .def("results", &PythonMeasurement::resultsPython);
}

void bindChannels(py::module_& module) {
  py::class_<VirtualChannel>(module, "VirtualChannel")
      .def_property_readonly("name", &VirtualChannel::name)
      .def_property_readonly("kind", &VirtualChannel::kind)
      .def_property_readonly("parameters",
                             [](const VirtualChannel& c) { return parametersDict(c.parameters()); })
      .def("getChannel", &VirtualChannel::getChannel)
      .def("getChannels", &VirtualChannel::getChannels)
      .def("clear", &VirtualChannel::clear)
      .def(
          "setting_changes",
          [](const VirtualChannel& c) {
            py::list changes;
            for (const VirtualChannel::SettingChange& change : c.settingChanges()) {
              changes.append(py::make_tuple(change.key, change.value, change.from));
            }
            return changes;
          },
          "the changes of live settings taken up so far, in order: (key, value, from_ps), "
          "from_ps the stream time of the first block that used the value");
  channelClass<DelayedChannel>(module, "DelayedChannel")
      .def("setDelay", &DelayedChannel::setDelay, py::arg("delay"),
           "the delay in ps from the next block on (copies already owed keep theirs)")
      .def("getDelay", &DelayedChannel::getDelay);
  channelClass<GatedChannel>(module, "GatedChannel");
  channelClass<Combiner>(module, "Combiner");
  withWindowSetter(channelClass<Coincidence>(module, "Coincidence"));
  withWindowSetter(channelClass<Coincidences>(module, "Coincidences"));
  channelClass<FrequencyMultiplier>(module, "FrequencyMultiplier");
  channelClass<ConstantFractionDiscriminator>(module, "ConstantFractionDiscriminator");
  channelClass<EventGenerator>(module, "EventGenerator");
}

}  // namespace tagflow::python
