// tagflow-bench --link: the stream link's figures on one core. The 8-channel stream is encoded
// once into datagrams of the given MTU (held in memory, as they would sit in the receive
// ring); then decoding and expanding them into a reused block of 16-byte tags that stays in
// cache (what the UDP source does per datagram), and encoding them (what the emulator does),
// beside a plain scan of the 16-byte tags from memory in the same run. Medians of `runs`.
// Rates over the network come from `tagflow linktest`.
#pragma once

#include <cstddef>
#include <string>

namespace tagflow::bench {

struct LinkBenchOptions {
  std::size_t tags = 20'000'000;
  std::size_t block_size = 16384;
  int runs = 5;
  std::string json;
};

int runLinkBench(const LinkBenchOptions& options);

}  // namespace tagflow::bench
