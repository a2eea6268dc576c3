// The source kinds a configuration can name, built from a SourceSpec: flat keys plus named
// lists of sub-tables (the synthetic source's `channel` and `overflow` tables).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tagflow/core/parameters.hpp"
#include "tagflow/core/source.hpp"
#include "tagflow/io/synthetic_source.hpp"

namespace tagflow {

struct SourceSpec {
  std::string kind;
  Parameters parameters;
  std::map<std::string, std::vector<Parameters>> tables;
};

struct SourceKindHelp {
  std::string_view kind;
  std::string_view summary;
  std::vector<std::pair<std::string_view, std::string_view>> keys;
};

const std::vector<SourceKindHelp>& sourceKinds();

// Throws InvalidArgument naming an unknown kind or a bad key, IoError/DataError from a file.
std::unique_ptr<Source> makeSource(const SourceSpec& spec);

SyntheticConfig syntheticConfigFrom(const SourceSpec& spec);

// What a source counted while it ran (the UDP receiver: datagrams, losses, malformed ones),
// for the results file; empty for sources that count nothing.
Parameters sourceStatistics(const Source& source);

// The demo stream: 8 channels with mixed rates (Poisson, a clock, a correlated partner).
std::vector<SyntheticChannel> demoChannels();

}  // namespace tagflow
