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

}  // namespace tagflow
