// The web app's files, embedded into the binary at build time (web/CMakeLists.txt generates
// assets()): `trialdb serve` serves these and nothing else.
#pragma once
#include <string_view>
#include <vector>

namespace trialdb::web {

struct Asset {
  std::string_view path;  // the URL path it is served at, "/index.html"
  std::string_view bytes;
};

// Every embedded file (generated).
const std::vector<Asset>& assets();

// The asset served at `path` ("/" is "/index.html"), or nullptr: no other path is ever served.
const Asset* find_asset(std::string_view path);

// Its Content-Type, from the file name's extension.
std::string_view content_type(std::string_view path);

}  // namespace trialdb::web
