// Record and replay: a FileWriter records channels 1 and 2 of the synthetic stream while a
// Correlation runs live; then a FileReader replays the recording, as fast as it can, through
// the same Correlation. The two histograms are identical, tag for tag: a recording is the
// stream. Exits 1 if they are not.
//
//   ./record_replay [folder] [stream seconds]
#include <filesystem>
#include <iostream>
#include <string>

#include "tagflow/core/measurement_graph.hpp"
#include "tagflow/io/source_registry.hpp"
#include "tagflow/io/sources/synthetic_source.hpp"
#include "tagflow/io/tagfile/file_reader.hpp"
#include "tagflow/io/tagfile/file_writer.hpp"
#include "tagflow/measurements/correlation.hpp"

int main(int argc, char** argv) {
  using namespace tagflow;
  const std::filesystem::path folder = argc > 1 ? argv[1] : ".";
  const double seconds = argc > 2 ? std::stod(argv[2]) : 0.5;
  const std::string recording = (folder / "pairs.ttf").string();

  SyntheticConfig config;
  config.channels = demoChannels();
  SyntheticSource live_source(config);
  MeasurementGraph live(live_source);
  auto& writer = live.emplace<FileWriter>("writer", recording, std::vector<channel_t>{1, 2});
  auto& live_g2 = live.emplace<Correlation>("g2", 2, 1, 10, 400);
  live.run(static_cast<timestamp_t>(seconds * kPicosecondsPerSecond));
  writer.close();
  std::cout << "recorded " << writer.getTotalEvents() << " tags in " << writer.getTotalSize()
            << " bytes ("
            << static_cast<double>(writer.getTotalSize()) /
                   static_cast<double>(writer.getTotalEvents())
            << " bytes per tag)\n";

  FileReader reader(recording);
  std::cout << "replaying channels";
  for (channel_t channel : reader.getChannelList()) std::cout << " " << channel;
  std::cout << "\n";
  MeasurementGraph replay(reader);
  auto& replay_g2 = replay.emplace<Correlation>("g2", 2, 1, 10, 400);
  const Profile profile = replay.run();
  std::cout << "replayed " << profile.tags << " tags at " << profile.wallMTagsPerSecond()
            << " MTags/s\n";

  const bool identical = live_g2.getData() == replay_g2.getData() &&
                         live_g2.getCaptureDuration() == replay_g2.getCaptureDuration();
  std::cout << (identical ? "live and replayed g2 are identical\n"
                          : "live and replayed g2 DIFFER\n");
  return identical ? 0 : 1;
}
