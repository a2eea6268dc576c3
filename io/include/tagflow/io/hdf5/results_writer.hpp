// Writes results to a self-describing HDF5 file: one group per measurement (named by the
// measurement), every array as a dataset with `unit` and `description` attributes, the
// measurement's parameters and run facts as group attributes, the virtual channels and the
// changes of their live settings under /virtual_channels, the engine profile under /profile,
// and file attributes naming the producer, version, creation time and source.
// The file is built in memory, written under a temporary name in the same folder, synced and
// renamed at the end, so a failed run never leaves a half-written file under the final name.
// Layout: docs/hdf5-layout.md.
#pragma once

#include <string>
#include <vector>

#include "tagflow/core/parameters.hpp"
#include "tagflow/core/profile.hpp"
#include "tagflow/core/result_set.hpp"

namespace tagflow {

struct RunInfo {
  std::string source;  // Source::describe()
  std::string config;  // the configuration text the run was started with, if any
  // What the source counted (sourceStatistics()): attributes of /source when not empty.
  Parameters source_statistics{};
  // The run was stopped by a signal before its end: the results cover what was captured
  // (each measurement's capture_duration_ps says how much).
  bool interrupted = false;
  // Written while the run goes on (the profile is empty then).
  bool checkpoint = false;
  // The source's message when its input ended in a damaged tail (a file cut inside a record):
  // the results cover the stream before it. "" when the input was whole.
  std::string damaged_tail{};
  // The graph's virtual channels (VirtualChannel::getResults()): a group each under
  // /virtual_channels, with the changes of their live settings.
  std::vector<ResultSet> virtual_channels{};
};

class MeasurementGraph;
class Source;

// The RunInfo of a run of `graph` from `source`: the source's description and statistics, the
// configuration text and the graph's virtual channels.
RunInfo runInfoOf(const Source& source, const MeasurementGraph& graph, std::string config);

// Throws IoError naming the path and the reason when the file cannot be written.
void writeResultsHdf5(const std::string& path, const std::vector<ResultSet>& results,
                      const Profile& profile, const RunInfo& info);

// Fails early, before a long run, if `path` cannot be created: an IoError where its folder is
// missing or not writable or a folder, device or other non-file is there, an InvalidArgument
// where it is empty. Leaves nothing behind. The messages call the file's content `content`.
void checkOutputWritable(const std::string& path, const std::string& content = "results");
// InvalidArgument unless `name` can name a measurement's group: not empty, not "profile",
// "source" or "virtual_channels" (the file's own groups), not "." or "..", no '/' and no
// control character.
void checkResultsName(const std::string& name);
// The same for a virtual channel's group, which lies inside /virtual_channels: any name but
// an empty one, "." or "..", one with '/' or a control character.
void checkVirtualChannelName(const std::string& name);

std::string tagflowVersion();

// The name the results are written under before they are renamed to `path`.
std::string resultsTemporaryPath(const std::string& path);

// For a program that closes every HDF5 file it opens (the tagflow command): leaves out HDF5's
// own clean-up at exit, which crashes where a file could not be closed (its last write failed
// on a full disk) after the error was reported. Call before any other use of HDF5.
void skipHdf5CleanupAtExit();

}  // namespace tagflow
