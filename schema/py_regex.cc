// PyRegex on PCRE2: compiling a Python pattern, and searching under explicit limits (py_regex.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "schema/py_regex.h"

#include <pcre2.h>

#include <new>
#include <string>
#include <string_view>

#include "schema/param_list.h"

namespace trialdb {

namespace {

// PCRE2's own match limit; set explicitly because a build may configure another. It bounds the
// work of one search (a pattern that backtracks catastrophically), whichever engine runs it.
constexpr uint32_t kMatchLimit = 10'000'000;
// How deep a search may nest: the JIT on a machine stack of its own (PCRE2's default, 32 KiB, is
// exhausted by `(a|a)*$` on 10,001 characters, which Python's re matches), the interpreter in
// frames on the heap. A search that still runs out is retried on the next engine down, so
// only the match limit, or these maxima, ever end one with an error.
constexpr size_t kJitStackStartBytes = 32 * 1024;
constexpr size_t kJitStackMaxBytes = 64 * 1024 * 1024;
constexpr uint32_t kDepthLimit = 100'000'000;
constexpr uint32_t kHeapLimitKiB = 256 * 1024;
// How much of the subject an error quotes.
constexpr size_t kQuotedSubjectBytes = 80;

const char* limit_name(int rc) {
  switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT: return "match limit";
    case PCRE2_ERROR_DEPTHLIMIT: return "depth limit";
    case PCRE2_ERROR_HEAPLIMIT: return "heap limit";
    case PCRE2_ERROR_JIT_STACKLIMIT: return "JIT stack limit";
    default: return nullptr;
  }
}

// The limit a search hit, as its error states it.
std::string limit_value(int rc) {
  switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT: return std::to_string(kMatchLimit) + " backtracking steps";
    case PCRE2_ERROR_DEPTHLIMIT: return "depth " + std::to_string(kDepthLimit);
    case PCRE2_ERROR_HEAPLIMIT: return std::to_string(kHeapLimitKiB / 1024) + " MiB of backtracking memory";
    default: return std::to_string(kJitStackMaxBytes >> 20) + " MiB of JIT stack";
  }
}

// The pattern a search runs: a leading `.*` left out. re.search finds `.*X` exactly where it
// finds X (the `.*` may match nothing), and PCRE2 then looks for X's first characters instead of
// running `.*` to the end of the subject at each start and backing off one character at a time
// (a quarter of the work on a tensor name). Not a lazy, possessive or counted `.*` (`.*?`, `.*+`,
// `.**`, `.*{2}`): those are other patterns, or none.
std::string_view searched_part(std::string_view translated) {
  if (translated.substr(0, 2) != ".*") return translated;
  if (translated.size() > 2 && std::string_view("?+*{").find(translated[2]) != std::string_view::npos)
    return translated;
  return translated.substr(2);
}

}  // namespace

std::string python_to_pcre2(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      out += '\\';
      out += p[i + 1] == 'Z' ? 'z' : p[i + 1];  // Python \Z is PCRE2 \z (absolute end)
      ++i;
    } else {
      out += p[i];
    }
  }
  return out;
}

Status PyRegex::compile(std::string_view pattern, std::unique_ptr<PyRegex>* out) {
  out->reset();
  std::string translated = python_to_pcre2(pattern);
  int code = 0;
  PCRE2_SIZE offset = 0;
  // Python str patterns are Unicode-aware: \w, \d and case folding follow Unicode (UCP).
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
  if (!re) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof buf);
    return Status::invalid("invalid regular expression '" + std::string(pattern) +
                           "': " + reinterpret_cast<const char*>(buf) + " at offset " + std::to_string(offset));
  }
  // The pattern as given compiled, its errors are the user's; the search runs its searched part.
  if (const std::string_view part = searched_part(translated); part.size() != translated.size()) {
    pcre2_code* searched = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(part.data()), part.size(),
                                         PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
    if (searched) {
      pcre2_code_free(re);
      re = searched;
    }
  }
  pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is missing
  std::unique_ptr<PyRegex> r(new PyRegex());
  r->pattern_ = std::string(pattern);
  r->code_ = re;
  r->match_data_ = pcre2_match_data_create_from_pattern(re, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  r->context_ = context;
  if (!r->match_data_ || !context) throw std::bad_alloc();
  pcre2_set_match_limit(context, kMatchLimit);
  pcre2_set_depth_limit(context, kDepthLimit);
  pcre2_set_heap_limit(context, kHeapLimitKiB);
  *out = std::move(r);
  return Status::ok();
}

PyRegex::~PyRegex() {
  pcre2_match_context_free(static_cast<pcre2_match_context*>(context_));
  pcre2_match_data_free(static_cast<pcre2_match_data*>(match_data_));
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

namespace {

// The match context of deep searches on this thread: the same limits as a pattern's own, and a
// JIT stack up to kJitStackMaxBytes (address space reserved once per thread, used as needed).
pcre2_match_context* deep_context() {
  struct Deep {
    pcre2_jit_stack* stack = pcre2_jit_stack_create(kJitStackStartBytes, kJitStackMaxBytes, nullptr);
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    Deep() {
      if (!context) throw std::bad_alloc();
      pcre2_set_match_limit(context, kMatchLimit);
      pcre2_set_depth_limit(context, kDepthLimit);
      pcre2_set_heap_limit(context, kHeapLimitKiB);
      if (stack) pcre2_jit_stack_assign(context, nullptr, stack);
    }
    ~Deep() {
      pcre2_match_context_free(context);
      pcre2_jit_stack_free(stack);
    }
  };
  thread_local Deep deep;
  return deep.context;
}

}  // namespace

bool PyRegex::search(std::string_view subject) const {
  auto* code = static_cast<pcre2_code*>(code_);
  auto* match_data = static_cast<pcre2_match_data*>(match_data_);
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  int rc = pcre2_match(code, text, subject.size(), 0, 0, match_data, static_cast<pcre2_match_context*>(context_));
  // The JIT's default stack is small: the same search on a large one, then on the interpreter,
  // whose frames live on the heap.
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) rc = pcre2_match(code, text, subject.size(), 0, 0, match_data, deep_context());
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(code, text, subject.size(), 0, PCRE2_NO_JIT, match_data, deep_context());
  if (rc >= 0) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  std::string quoted(subject.substr(0, kQuotedSubjectBytes));
  if (subject.size() > kQuotedSubjectBytes) quoted += "...";
  std::string why;
  if (const char* limit = limit_name(rc)) {
    why = std::string("hit PCRE2's ") + limit + " (" + limit_value(rc) + "; it backtracks too much, simplify it)";
  } else {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(rc, buf, sizeof buf);
    why = std::string("failed: ") + reinterpret_cast<const char*>(buf);
  }
  throw Error(Status::invalid("regular expression '" + pattern_ + "' searching '" + quoted + "' " + why));
}

Status PyRegexList::compile(std::string_view list, std::unique_ptr<PyRegexList>* out) {
  auto compiled = std::make_unique<PyRegexList>();
  for (std::string_view item : split_param_list(list)) {
    if (item.empty()) continue;
    std::unique_ptr<PyRegex> re;
    if (Status st = PyRegex::compile(item, &re); !st.is_ok())
      return st.prefixed("bad regular expression '" + std::string(item) + "': ");
    compiled->patterns.push_back(std::move(re));
  }
  *out = std::move(compiled);
  return Status::ok();
}

bool PyRegexList::search(std::string_view subject) const {
  for (const auto& re : patterns)
    if (re->search(subject)) return true;
  return false;
}

}  // namespace trialdb
