// PathPlan: the files a command reads and the files it writes, checked before anything is
// opened for writing. An output that is one of the inputs (the configuration, the source's
// file) or that another output also writes would destroy data the user still needs; check()
// refuses both with an InvalidArgument naming the two roles and the path. Paths are compared
// as the file system resolves them (links, "..", the working folder), whether they exist or not,
// and two names of one existing file (hard links) count as the same file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run_config.hpp"
#include "tagflow/io/source_registry.hpp"

namespace tagflow::cli {

class PathPlan {
 public:
  // `role` names the path in a message: "the configuration", "[source] path", ...
  void reads(const std::string& path, std::string role);
  void writes(const std::string& path, std::string role);
  // A tag file set: `path` and the later parts that exist. A reader goes on from the part
  // `path`'s header names (partsReadAfter); a writer writes `path` as part 0 and replaces the
  // parts named after it.
  void readsTagFileSet(const std::string& path, const std::string& role);
  void writesTagFileSet(const std::string& path, const std::string& role);
  void check() const;

 private:
  struct Entry {
    std::string path;
    std::filesystem::path resolved;
    std::string role;
  };
  std::vector<Entry> reads_;
  std::vector<Entry> writes_;
};

// The files a source spec reads: its `path` and an .spc's `set_file`.
void planSourceReads(const SourceSpec& source, PathPlan& plan);
// What a run of `config` (read from `config_path`) reads and writes: the configuration, the
// source's files, the results and every FileWriter's recording.
PathPlan runPaths(const RunConfig& config, const std::string& config_path);

}  // namespace tagflow::cli
