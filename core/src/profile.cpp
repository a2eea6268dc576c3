#include "tagflow/core/profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <ostream>

#include "tagflow/core/error.hpp"

namespace tagflow {

double Profile::share(const NodeProfile& node) const {
  double total = 0;
  for (const NodeProfile& other : nodes) total += other.kind == "source" ? 0 : other.busy_s;
  return total > 0 ? node.busy_s / total : 0;
}

double Profile::engineMTagsPerSecond(int threads) const {
  double total = 0, slowest = 0;
  for (const NodeProfile& node : nodes) {
    if (node.kind == "source") continue;
    total += node.busy_s;
    slowest = std::max(slowest, node.busy_s);
  }
  const double busy = std::max(slowest, total / std::max(threads, 1));
  return busy > 0 ? static_cast<double>(tags) / busy * 1e-6 : 0;
}

double Profile::sourceMTagsPerSecond() const {
  double busy = 0;
  for (const NodeProfile& node : nodes) {
    if (node.kind == "source") busy = std::max(busy, node.busy_s);
  }
  return busy > 0 ? static_cast<double>(tags) / busy * 1e-6 : 0;
}

void printProfile(std::ostream& out, const Profile& profile) {
  const auto flags = out.flags();
  out << std::left << std::setw(20) << "node" << std::setw(16) << "kind" << std::right
      << std::setw(14) << "tags" << std::setw(10) << "busy s" << std::setw(12) << "MTags/s"
      << std::setw(8) << "share" << std::setw(10) << "wait s" << std::setw(14) << "max lat. ms"
      << '\n';
  for (std::size_t i = 0; i < profile.nodes.size(); ++i) {
    const auto& node = profile.nodes[i];
    out << std::left << std::setw(20) << node.name << std::setw(16) << node.kind << std::right
        << std::setw(14) << node.tags << std::fixed << std::setprecision(3) << std::setw(10)
        << node.busy_s << std::setprecision(1) << std::setw(12) << node.capacityMTagsPerSecond();
    if (node.kind == "source") {
      out << std::setw(8) << "-";
    } else {
      out << std::setw(7) << profile.share(node) * 100 << '%';
    }
    out << std::setprecision(3) << std::setw(10) << node.wait_s << std::setw(14)
        << node.max_latency_s * 1e3 << '\n';
  }
  out << std::fixed << std::setprecision(1) << "graph: " << profile.tags << " tags in "
      << std::setprecision(3) << profile.wall_s << " s wall = " << std::setprecision(1)
      << profile.wallMTagsPerSecond() << " MTags/s on " << profile.threads << " thread(s), "
      << profile.blocks << " blocks, stream time " << std::setprecision(6)
      << profile.stream_duration_ps * 1e-12 << " s\n";
  const double engine_1 = profile.engineMTagsPerSecond(1);
  const double engine_n = profile.engineMTagsPerSecond(profile.threads);
  const double source = profile.sourceMTagsPerSecond();
  if (engine_1 > 0) {
    out << std::setprecision(1) << "engine: the measurements sustain " << engine_1
        << " MTags/s on one core, " << engine_n << " MTags/s on " << profile.threads
        << " thread(s); the source delivered " << source << " MTags/s"
        << (source > 0 && source < engine_n ? ", so the source set this run's pace\n"
                                            : ", so the measurements set this run's pace\n");
  }
  out.flags(flags);
}

namespace {

std::string jsonEscape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    escaped += c;
  }
  return escaped;
}

}  // namespace

void writeChromeTrace(const std::string& path, const Profile& profile) {
  std::ofstream out(path);
  if (!out) throw IoError("cannot write trace file '" + path + "': " + std::strerror(errno));
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  for (std::size_t i = 0; i < profile.nodes.size(); ++i) {
    const auto& node = profile.nodes[i];
    out << (first ? "" : ",") << "\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << i
        << ",\"args\":{\"name\":\"" << jsonEscape(node.name) << " (" << jsonEscape(node.kind)
        << ")\"}}";
    first = false;
    for (const auto& span : node.trace) {
      out << ",\n{\"name\":\"block " << span.sequence << "\",\"cat\":\"" << jsonEscape(node.kind)
          << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << i << ",\"ts\":" << std::fixed
          << std::setprecision(3) << span.begin_us << ",\"dur\":" << span.duration_us << "}";
    }
  }
  out << "\n]}\n";
  out.flush();
  if (!out) throw IoError("writing trace file '" + path + "' failed: " + std::strerror(errno));
}

}  // namespace tagflow
