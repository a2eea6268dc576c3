// Which configured streams come once: a UDP stream, and a merge that takes one; every file and
// the synthetic generator can be read again. `tagflow record` keeps what it wrote of the first
// kind when it fails, and writes the second whole or not at all.
#include <catch2/catch.hpp>

#include "tagflow/io/source_registry.hpp"

using namespace tagflow;

namespace {

SourceSpec specOf(const std::string& kind) {
  SourceSpec spec;
  spec.kind = kind;
  return spec;
}

SourceSpec mergeOf(const std::vector<std::string>& kinds) {
  SourceSpec spec = specOf("merged");
  for (const std::string& kind : kinds) {
    Parameters input;
    input.set("kind", kind);
    spec.tables["input"].push_back(input);
  }
  return spec;
}

}  // namespace

TEST_CASE("A UDP stream comes once, and so does a merge that takes one", "[io]") {
  CHECK(comesOnce(specOf("udp")));
  for (const std::string kind : {"synthetic", "raw", "tagfile", "photon_hdf5", "ptu", "merged"}) {
    INFO(kind);
    CHECK_FALSE(comesOnce(specOf(kind)));
  }
  CHECK(comesOnce(mergeOf({"tagfile", "udp"})));
  CHECK_FALSE(comesOnce(mergeOf({"tagfile", "raw"})));
  // Only a merge's inputs are sources.
  SourceSpec synthetic = specOf("synthetic");
  synthetic.tables = mergeOf({"udp"}).tables;
  CHECK_FALSE(comesOnce(synthetic));
}
