// The source kinds a configuration can name, built from a SourceSpec: flat keys plus named
// lists of sub-tables (the synthetic source's `channel` and `overflow` tables).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/parameter_schema.hpp"
#include "tagflow/core/parameters.hpp"
#include "tagflow/core/source.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"

namespace tagflow {

struct SourceSpec {
  std::string kind;
  Parameters parameters;
  std::map<std::string, std::vector<Parameters>> tables;
};

struct SourceKind {
  const ParameterSchema* schema;               // the [source] keys
  std::vector<const ParameterSchema*> tables;  // of the [[source.*]] tables, for the help
  std::function<std::unique_ptr<Source>(const SourceSpec&)> make;
  // Its stream can be read only once (it is received live): a recording of it keeps what it
  // wrote up to a failure, where one of a stream that can be read again is whole or nothing.
  bool comes_once = false;
};

const std::vector<SourceKind>& sourceKinds();

// Whether the stream of `spec` comes once: its kind's does, or, for a merge, an input's.
bool comesOnce(const SourceSpec& spec);

// Throws InvalidArgument naming an unknown kind or a bad key, IoError/DataError from a file.
// `[[source.delay]]` tables, which any kind takes, wrap the source in an InputDelaySource.
std::unique_ptr<Source> makeSource(const SourceSpec& spec);

// The keys of a [[source.delay]] table.
const ParameterSchema& inputDelaySchema();

SyntheticConfig syntheticConfigFrom(const SourceSpec& spec);

// What a source counted while it ran (the UDP receiver: datagrams, losses, malformed ones),
// for the results file; empty for sources that count nothing.
Parameters sourceStatistics(const Source& source);

// The demo stream: 8 channels with mixed rates (Poisson, a clock, a correlated partner).
std::vector<SyntheticChannel> demoChannels();

}  // namespace tagflow
