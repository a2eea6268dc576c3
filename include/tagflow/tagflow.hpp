// tagflow: one include for the whole library. The engine (blocks, graph, profile), every
// measurement and virtual channel, the sources, tag files, the UDP link, the HDF5 results
// writer and the live web view (serve). For smaller builds include the headers of the parts
// you use instead.
#pragma once

#include "tagflow/version.hpp"

#include "tagflow/core/error.hpp"
#include "tagflow/core/measurement.hpp"
#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/result_codec.hpp"
#include "tagflow/core/sharded_measurement.hpp"
#include "tagflow/core/synchronized_measurements.hpp"
#include "tagflow/core/tag.hpp"
#include "tagflow/core/virtual_channel.hpp"

#include "tagflow/measurements/correlation.hpp"
#include "tagflow/measurements/counter.hpp"
#include "tagflow/measurements/countrate.hpp"
#include "tagflow/measurements/frequency_stability.hpp"
#include "tagflow/measurements/histogram_log_bins.hpp"
#include "tagflow/measurements/phase_noise.hpp"

#include "tagflow/channels/coincidences.hpp"
#include "tagflow/channels/combiner.hpp"
#include "tagflow/channels/constant_fraction_discriminator.hpp"
#include "tagflow/channels/delayed_channel.hpp"
#include "tagflow/channels/event_generator.hpp"
#include "tagflow/channels/frequency_multiplier.hpp"
#include "tagflow/channels/gated_channel.hpp"

#include "tagflow/io/hdf5/photon_hdf5.hpp"
#include "tagflow/io/hdf5/results_writer.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/memory_source.hpp"
#include "tagflow/io/sources/raw_file.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/io/udp/stream_sender.hpp"
#include "tagflow/io/udp/stream_source.hpp"

#include "tagflow/serve/server.hpp"

#include "tagflow/kinds.hpp"
