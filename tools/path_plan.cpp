#include "path_plan.hpp"

#include <fmt/format.h>

#include <system_error>
#include <utility>
#include <variant>

#include "tagflow/core/error.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/writer.hpp"

namespace tagflow::cli {

namespace {

std::filesystem::path resolved(const std::string& path) {
  // Absolute first: of a relative path whose first part does not exist, weakly_canonical keeps
  // it relative.
  const std::filesystem::path absolute = std::filesystem::absolute(path).lexically_normal();
  std::error_code error;
  std::filesystem::path full = std::filesystem::weakly_canonical(absolute, error);
  return error ? absolute : full;
}

// The same path, or two names of one existing file (a hard link).
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  if (a == b) return true;
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

}  // namespace

void PathPlan::reads(const std::string& path, std::string role) {
  if (!path.empty()) reads_.push_back({path, resolved(path), std::move(role)});
}

void PathPlan::writes(const std::string& path, std::string role) {
  if (!path.empty()) writes_.push_back({path, resolved(path), std::move(role)});
}

void PathPlan::readsTagFileSet(const std::string& path, const std::string& role) {
  reads(path, role);
  for (const std::string& part : partsReadAfter(path)) {
    reads(part, fmt::format("{} '{}', read on into its later part", role, path));
  }
}

void PathPlan::writesTagFileSet(const std::string& path, const std::string& role) {
  writes(path, role);
  for (const std::string& part : TagFileWriter::laterParts(path)) {
    writes(part, role + "'s later part");
  }
}

void PathPlan::check() const {
  for (std::size_t i = 0; i < writes_.size(); ++i) {
    const Entry& output = writes_[i];
    if (output.path == "-") {
      throw InvalidArgument(fmt::format(
          "{} '-': standard output is not written to (valid: a file path, e.g. ./-)", output.role));
    }
    for (const Entry& input : reads_) {
      if (sameFile(output.resolved, input.resolved)) {
        throw InvalidArgument(
            fmt::format("{} '{}' is the same file as {} '{}': writing it would destroy it (valid: "
                        "another path)",
                        output.role, output.path, input.role, input.path));
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (sameFile(output.resolved, writes_[j].resolved)) {
        throw InvalidArgument(fmt::format(
            "{} '{}' and {} '{}' are the same file: one would overwrite the other (valid: two "
            "paths)",
            writes_[j].role, writes_[j].path, output.role, output.path));
      }
    }
  }
}

namespace {

void planReads(const Parameters& parameters, const std::string& owner, PathPlan& plan) {
  const bool tag_file = parameters.contains("kind") &&
                        std::get_if<std::string>(&parameters.at("kind")) != nullptr &&
                        std::get<std::string>(parameters.at("kind")) == "tagfile";
  for (const char* key : {"path", "set_file"}) {
    if (!parameters.contains(key)) continue;
    // A path of another type is refused, by name, when the source is made.
    if (const auto* path = std::get_if<std::string>(&parameters.at(key))) {
      const std::string role = fmt::format("{} {}", owner, key);
      if (tag_file) {
        plan.readsTagFileSet(*path, role);
      } else {
        plan.reads(*path, role);
      }
    }
  }
}

}  // namespace

void planSourceReads(const SourceSpec& source, PathPlan& plan) {
  Parameters parameters = source.parameters;
  parameters.set("kind", source.kind);
  planReads(parameters, "[source]", plan);
  // A merged source's inputs.
  if (const auto inputs = source.tables.find("input"); inputs != source.tables.end()) {
    for (std::size_t i = 0; i < inputs->second.size(); ++i) {
      planReads(inputs->second[i], fmt::format("[[source.input]] #{}", i), plan);
    }
  }
}

PathPlan runPaths(const RunConfig& config, const std::string& config_path) {
  PathPlan plan;
  plan.reads(config_path, "the configuration");
  planSourceReads(config.source, plan);
  plan.writes(config.output, "[run] output");
  for (const Recording& recording : recordingsOf(config)) {
    plan.writesTagFileSet(recording.path, fmt::format("FileWriter '{}' path", recording.writer));
  }
  return plan;
}

}  // namespace tagflow::cli
