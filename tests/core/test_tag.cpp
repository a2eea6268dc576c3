// The Tag record: the 16-byte layout of spec 1.1, the channel conventions of 1.3.
#include <catch2/catch.hpp>

#include <cstring>

#include "tagflow/core/tag.hpp"

using namespace tagflow;

TEST_CASE("Tag has the 16-byte little-endian layout of the reference record", "[tag]") {
  const Tag tag{TagType::MissedEvents, 0, 0x1234, -7, 0x0102030405060708};
  unsigned char bytes[sizeof(Tag)];
  std::memcpy(bytes, &tag, sizeof bytes);
  REQUIRE(sizeof(Tag) == 16);
  CHECK(bytes[0] == 4);  // type
  CHECK(bytes[1] == 0);  // reserved
  CHECK(bytes[2] == 0x34);
  CHECK(bytes[3] == 0x12);  // missed_events, little-endian
  std::int32_t channel;
  std::memcpy(&channel, bytes + 4, 4);
  CHECK(channel == -7);
  CHECK(bytes[8] == 0x08);
  CHECK(bytes[15] == 0x01);  // time, little-endian
}

TEST_CASE("makeTimeTag builds a plain time tag", "[tag]") {
  const Tag tag = makeTimeTag(-3, 123456789012345);
  CHECK(tag.type == TagType::TimeTag);
  CHECK(tag.reserved == 0);
  CHECK(tag.missed_events == 0);
  CHECK(tag.channel == -3);
  CHECK(tag.time == 123456789012345);
  CHECK(tag == Tag{TagType::TimeTag, 0, 0, -3, 123456789012345});
  CHECK_FALSE(tag == makeTimeTag(3, 123456789012345));
}

TEST_CASE("Tag types and CHANNEL_UNUSED have the reference values", "[tag]") {
  CHECK(static_cast<int>(TagType::TimeTag) == 0);
  CHECK(static_cast<int>(TagType::Error) == 1);
  CHECK(static_cast<int>(TagType::OverflowBegin) == 2);
  CHECK(static_cast<int>(TagType::OverflowEnd) == 3);
  CHECK(static_cast<int>(TagType::MissedEvents) == 4);
  CHECK(CHANNEL_UNUSED == -(1 << 27));
  CHECK(tagTypeName(TagType::TimeTag) == "TimeTag");
  CHECK(tagTypeName(TagType::OverflowBegin) == "OverflowBegin");
  CHECK(tagTypeName(TagType::MissedEvents) == "MissedEvents");
  CHECK(tagTypeName(static_cast<TagType>(9)) == "invalid");
}
