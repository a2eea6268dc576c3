#include "tagflow/core/tag.hpp"

namespace tagflow {

std::string_view tagTypeName(TagType type) {
  switch (type) {
    case TagType::TimeTag:
      return "TimeTag";
    case TagType::Error:
      return "Error";
    case TagType::OverflowBegin:
      return "OverflowBegin";
    case TagType::OverflowEnd:
      return "OverflowEnd";
    case TagType::MissedEvents:
      return "MissedEvents";
  }
  return "invalid";
}

namespace {

int rankAtEqualTime(TagType type) {
  switch (type) {
    case TagType::OverflowBegin:
      return 0;
    case TagType::Error:
      return 1;
    case TagType::MissedEvents:
      return 2;
    case TagType::OverflowEnd:
      return 3;
    case TagType::TimeTag:
      return 4;
  }
  return 5;
}

}  // namespace

bool canonicalTagOrder(const Tag& a, const Tag& b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.type != b.type) return rankAtEqualTime(a.type) < rankAtEqualTime(b.type);
  return a.channel < b.channel;
}

}  // namespace tagflow
