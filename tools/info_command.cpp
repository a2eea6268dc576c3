// `tagflow info FILE`: what a vendor's time-tag file holds, from its header: the format, the
// records, and every header entry with its type and value, as a table or, with --json, as a
// JSON object (format, path, size, records, data_offset, warnings, provenance, header).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <variant>

#include "commands.hpp"
#include "tagflow/io/vendor/vendor_formats.hpp"

namespace tagflow::cli {

namespace {

nlohmann::json provenanceJson(const Parameters& provenance) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [key, value] : provenance.entries()) {
    std::visit([&, &key = key](const auto& v) { json[key] = v; }, value);
  }
  return json;
}

void printJson(const VendorFile& file) {
  nlohmann::json header = nlohmann::json::array();
  for (const HeaderField& field : file.header.fields()) {
    header.push_back({{"name", field.name}, {"type", field.type}, {"value", field.value}});
  }
  const nlohmann::json json{{"path", file.path},
                            {"format", file.format},
                            {"size", file.file_size},
                            {"records", file.records},
                            {"data_offset", file.data_offset},
                            {"warnings", file.warnings},
                            {"provenance", provenanceJson(file.provenance)},
                            {"header", header}};
  std::cout << json.dump(2) << "\n";
}

void printTable(const VendorFile& file) {
  std::cout << fmt::format("{}\n  format  {}\n  size    {} bytes\n  records {} from byte {}\n",
                           file.path, file.format, file.file_size, file.records, file.data_offset);
  for (const std::string& warning : file.warnings) std::cout << "  warning: " << warning << "\n";
  std::size_t name_width = 4, type_width = 4;
  for (const HeaderField& field : file.header.fields()) {
    name_width = std::max(name_width, field.name.size());
    type_width = std::max(type_width, field.type.size());
  }
  std::cout << fmt::format("\n{:<{}}  {:<{}}  value\n", "name", name_width, "type", type_width);
  for (const HeaderField& field : file.header.fields()) {
    std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", field.name, name_width, field.type, type_width,
                             field.value);
  }
}

}  // namespace

int infoCommand(const InfoOptions& options) {
  const VendorFile file = openVendorFile(options.path, options.format);
  if (options.json) {
    printJson(file);
  } else {
    printTable(file);
  }
  return 0;
}

}  // namespace tagflow::cli
