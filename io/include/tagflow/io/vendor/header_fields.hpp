// HeaderFields: the entries of a vendor file's header, in file order, each with its name, its
// type as the format calls it and its value as text (numbers in full precision, dates in ISO
// 8601, arrays as lists), so that `tagflow info` can show all of them and the results file can
// keep them as provenance. The values tagflow itself uses (resolutions, sync period, record
// type) are also kept as numbers by the reader that needs them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tagflow {

struct HeaderField {
  std::string name;
  std::string type;
  std::string value;
};

class HeaderFields {
 public:
  void add(std::string name, std::string type, std::string value) {
    fields_.push_back({std::move(name), std::move(type), std::move(value)});
  }
  const std::vector<HeaderField>& fields() const { return fields_; }
  // The first field named `name`, or nullptr.
  const HeaderField* find(std::string_view name) const {
    for (const auto& field : fields_) {
      if (field.name == name) return &field;
    }
    return nullptr;
  }

 private:
  std::vector<HeaderField> fields_;
};

}  // namespace tagflow
