// assets.h: finding an embedded file and its content type.
#include "web/assets.h"

namespace trialdb::web {

const Asset* find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const Asset& a : assets())
    if (a.path == path) return &a;
  return nullptr;
}

std::string_view content_type(std::string_view path) {
  if (path.ends_with(".html")) return "text/html; charset=utf-8";
  if (path.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace trialdb::web
