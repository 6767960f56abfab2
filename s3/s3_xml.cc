// A minimal pull reader for S3's XML responses (see s3_xml.h).
#include "s3/s3_xml.h"

#include <charconv>
#include <optional>

#include "schema/status.h"
#include "s3/trim.h"

namespace trialdb {

namespace {

struct XmlError {
  std::string what;
};

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void unescape_into(std::string& out, std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    size_t amp = text.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, amp - i));
    size_t semi = text.find(';', amp);
    if (semi == std::string_view::npos || semi - amp > 12)
      throw XmlError{"unterminated entity near '" + std::string(text.substr(amp, 12)) + "'"};
    std::string_view ent = text.substr(amp + 1, semi - amp - 1);
    if (ent == "amp") out.push_back('&');
    else if (ent == "lt") out.push_back('<');
    else if (ent == "gt") out.push_back('>');
    else if (ent == "quot") out.push_back('"');
    else if (ent == "apos") out.push_back('\'');
    else if (ent.size() >= 2 && ent[0] == '#') {
      bool hex = ent[1] == 'x' || ent[1] == 'X';
      std::string_view digits = ent.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), cp, hex ? 16 : 10);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || cp > 0x10FFFF ||
          (cp >= 0xD800 && cp <= 0xDFFF))
        throw XmlError{"bad character reference '&" + std::string(ent) + ";'"};
      append_utf8(out, cp);
    } else {
      throw XmlError{"unknown entity '&" + std::string(ent) + ";'"};
    }
    i = semi + 1;
  }
}

// Pull reader: start tags, end tags and (unescaped) text, skipping the prolog, comments and
// processing instructions. Element names lose any namespace prefix.
class XmlReader {
 public:
  enum Kind { kStart, kEnd, kText, kEof };
  struct Event {
    Kind kind = kEof;
    std::string_view name;
    std::string text;
  };

  explicit XmlReader(std::string_view xml) : s_(xml) {}

  Event next() {
    Event ev;
    if (pending_end_) {  // the end of a self-closing <tag/>
      ev.kind = kEnd;
      ev.name = *pending_end_;
      pending_end_.reset();
      return ev;
    }
    if (pos_ >= s_.size()) return ev;
    if (s_[pos_] != '<') {
      size_t lt = s_.find('<', pos_);
      if (lt == std::string_view::npos) lt = s_.size();
      ev.kind = kText;
      unescape_into(ev.text, s_.substr(pos_, lt - pos_));
      pos_ = lt;
      return ev;
    }
    if (starts_with("<?")) return skip_past("?>"), next();
    if (starts_with("<!--")) return skip_past("-->"), next();
    if (starts_with("<![CDATA[")) {
      size_t end = s_.find("]]>", pos_);
      if (end == std::string_view::npos) throw XmlError{"unterminated CDATA section"};
      ev.kind = kText;
      ev.text.assign(s_.substr(pos_ + 9, end - pos_ - 9));
      pos_ = end + 3;
      return ev;
    }
    if (starts_with("<!")) return skip_past(">"), next();  // DOCTYPE: S3 sends none

    size_t gt = s_.find('>', pos_);
    if (gt == std::string_view::npos) throw XmlError{"unterminated tag"};
    std::string_view tag = s_.substr(pos_ + 1, gt - pos_ - 1);
    pos_ = gt + 1;
    bool closing = !tag.empty() && tag[0] == '/';
    if (closing) tag.remove_prefix(1);
    bool self_closing = !closing && !tag.empty() && tag.back() == '/';
    if (self_closing) tag.remove_suffix(1);
    size_t name_end = tag.find_first_of(" \t\r\n");
    std::string_view name = tag.substr(0, name_end);
    if (size_t colon = name.find(':'); colon != std::string_view::npos) name.remove_prefix(colon + 1);
    if (name.empty()) throw XmlError{"empty tag name"};
    ev.kind = closing ? kEnd : kStart;
    ev.name = name;
    if (self_closing) pending_end_ = name;
    return ev;
  }

 private:
  bool starts_with(std::string_view p) const { return s_.substr(pos_, p.size()) == p; }
  void skip_past(std::string_view end) {
    size_t at = s_.find(end, pos_);
    if (at == std::string_view::npos) throw XmlError{"unterminated '" + std::string(s_.substr(pos_, 4)) + "'"};
    pos_ = at + end.size();
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::optional<std::string_view> pending_end_;
};

// Walks the whole document, calling on_element(path, text) at each element's end, where path is
// the element names from the root and text its own character data. Checks nesting.
template <class OnElement>
void walk(std::string_view xml, OnElement&& on_element) {
  XmlReader reader(xml);
  std::vector<std::string_view> path;
  std::vector<std::string> text;
  bool seen_root = false;
  for (;;) {
    XmlReader::Event ev = reader.next();
    switch (ev.kind) {
      case XmlReader::kStart:
        if (path.empty() && seen_root) throw XmlError{"more than one root element"};
        seen_root = true;
        path.push_back(ev.name);
        text.emplace_back();
        break;
      case XmlReader::kEnd:
        if (path.empty() || path.back() != ev.name) throw XmlError{"unexpected </" + std::string(ev.name) + ">"};
        on_element(path, text.back());
        path.pop_back();
        text.pop_back();
        break;
      case XmlReader::kText:
        if (!text.empty()) text.back() += ev.text;
        break;
      case XmlReader::kEof:
        if (!path.empty()) throw XmlError{"document ends inside <" + std::string(path.back()) + ">"};
        if (!seen_root) throw XmlError{"no root element"};
        return;
    }
  }
}

bool path_is(const std::vector<std::string_view>& path, std::initializer_list<std::string_view> want) {
  if (path.size() != want.size()) return false;
  size_t i = 0;
  for (std::string_view w : want)
    if (path[i++] != w) return false;
  return true;
}

}  // namespace

std::string xml_unescape(std::string_view text) {
  std::string out;
  try {
    unescape_into(out, text);
  } catch (const XmlError& e) {
    throw Error(ErrorKind::kIo, "bad XML text: " + e.what);
  }
  return out;
}

S3ListPage parse_list_objects_v2(std::string_view xml) {
  S3ListPage page;
  S3Object current;
  bool have_key = false, have_size = false;
  std::string_view root;
  try {
    walk(xml, [&](const std::vector<std::string_view>& path, const std::string& text) {
      if (path.size() == 1) root = path[0];
      if (path[0] != "ListBucketResult") return;
      if (path_is(path, {"ListBucketResult", "Contents", "Key"})) {
        current.key = text;  // keys are taken verbatim: spaces are significant
        have_key = true;
      } else if (path_is(path, {"ListBucketResult", "Contents", "Size"})) {
        std::string_view digits = trim_ascii_space(text);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), current.size);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
          throw XmlError{"bad <Size> '" + text + "'"};
        have_size = true;
      } else if (path_is(path, {"ListBucketResult", "Contents"})) {
        if (!have_key || !have_size) throw XmlError{"<Contents> without <Key> or <Size>"};
        page.objects.push_back(std::move(current));
        current = S3Object{};
        have_key = have_size = false;
      } else if (path_is(path, {"ListBucketResult", "IsTruncated"})) {
        std::string_view v = trim_ascii_space(text);
        if (v != "true" && v != "false") throw XmlError{"bad <IsTruncated> '" + text + "'"};
        page.truncated = v == "true";
      } else if (path_is(path, {"ListBucketResult", "NextContinuationToken"})) {
        page.next_continuation_token = text;
      }
    });
  } catch (const XmlError& e) {
    throw Error(ErrorKind::kIo, "malformed ListObjectsV2 response: " + e.what);
  }
  if (root != "ListBucketResult")
    throw Error(ErrorKind::kIo, "malformed ListObjectsV2 response: root element is <" + std::string(root) +
                                    ">, expected <ListBucketResult>");
  return page;
}

std::string xml_root_name(std::string_view xml) {
  std::string root;
  try {
    walk(xml, [&](const std::vector<std::string_view>& path, const std::string&) {
      if (path.size() == 1) root = std::string(path.front());
    });
  } catch (const XmlError&) {
    return "";
  }
  return root;
}

S3ErrorBody parse_s3_error(std::string_view xml) {
  S3ErrorBody err;
  try {
    walk(xml, [&](const std::vector<std::string_view>& path, const std::string& text) {
      if (path_is(path, {"Error", "Code"})) err.code = std::string(trim_ascii_space(text));
      else if (path_is(path, {"Error", "Message"})) err.message = std::string(trim_ascii_space(text));
    });
  } catch (const XmlError&) {
    // Not XML (a proxy's HTML page, an empty HEAD body): whatever was read so far is kept.
  }
  return err;
}

}  // namespace trialdb
