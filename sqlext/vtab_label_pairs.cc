// rule_label_pairs(labels, predictions, argmax): a table-valued function yielding one row
// (label, prediction, n, example_label, example_prediction) per distinct pair of class indices:
// a label and the prediction at the same position, each truncated toward zero to an INTEGER as
// CAST(x AS INTEGER) does (numpy's astype(int)), n the number of positions holding it, in
// ascending order of label, then prediction. Both are read as float64; a NaN prediction is NULL
// (after the numbers of its label), and NaN labels are not counted. example_label and
// example_prediction are the first pair as the tensors hold it (by label, then prediction) in
// which a value is not a class index, the same on every row; NULL when every value is one. With
// argmax the predictions are first reduced to the index of their largest element along the last
// axis (numpy's argmax: the first NaN wins). No rows when either tensor is NULL, a string or
// complex tensor, or the number of predictions differs from the number of labels; a blob that
// does not decode is an error. The confusion and class_imbalance rules count their cells from it:
// truncated here, a tensor of probabilities gives a row per class pair, not one per distinct
// probability for SQL to group.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT label, prediction, n FROM rule_label_pairs(tensor_from_json('[0, 1, 1]'),
//      ...>   tensor_from_json('[0.25, 1.5, 1]'), 0);
//   0|0|1
//   1|1|2
//   sqlite> SELECT count(*) FROM rule_label_pairs(tensor_from_json('[1, 0]'), tensor_from_json('[1]'), 0);
//   0
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "sqlext/table_function.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

constexpr const char* kName = "rule_label_pairs";

enum Column {
  kColLabel = 0,
  kColPrediction,
  kColCount,
  kColExampleLabel,
  kColExamplePrediction,
  kColLabels,
  kColPredictions,
  kColArgmax
};
enum Argument { kArgLabels = 0, kArgPredictions, kArgArgmax, kArgumentCount };

// A pair of class indices; a NaN prediction has none (prediction unused), and comes after the
// indices of its label.
struct ClassPair {
  int64_t label = 0;
  bool prediction_is_nan = false;
  int64_t prediction = 0;
  bool operator<(const ClassPair& o) const {
    return std::tie(label, prediction_is_nan, prediction) < std::tie(o.label, o.prediction_is_nan, o.prediction);
  }
};

struct PairsCursor {
  sqlite3_vtab_cursor base;                          // first: SQLite casts between the two
  std::vector<std::pair<ClassPair, int64_t>> pairs;  // pair -> n
  std::optional<std::pair<double, double>> example;  // the first pair that is not of indices
  size_t i = 0;
};

// 2^63: the doubles in [-2^63, 2^63) are those an int64 holds after truncation.
constexpr double kTwoTo63 = 9223372036854775808.0;

// x truncated toward zero as SQLite's CAST(x AS INTEGER) does, clamped to the int64 range (NaN is
// never passed).
int64_t class_index(double x) {
  if (x <= -kTwoTo63) return std::numeric_limits<int64_t>::min();
  if (x >= kTwoTo63) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(x);
}

// Whether x = CAST(x AS INTEGER) in SQLite, which compares an integer and a real exactly.
bool is_class_index(double x) { return x >= -kTwoTo63 && x < kTwoTo63 && x == std::trunc(x); }

// The predictions as one number per label: as they are, or their argmax over the last axis.
std::vector<double> predicted(const TensorView& pv, bool argmax) {
  std::vector<double> predictions = to_doubles(pv);
  if (!argmax || pv.ndim < 1) return predictions;
  const int64_t k = pv.dims[pv.ndim - 1];
  if (k <= 0) return {};
  const int64_t rows = pv.numel / k;
  std::vector<double> best_index(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    double best_x = predictions[r * k];
    for (int64_t j = 1; j < k && !std::isnan(best_x); ++j) {  // numpy: the first NaN wins
      double x = predictions[r * k + j];
      if (x > best_x || std::isnan(x)) best = j, best_x = x;
    }
    best_index[r] = static_cast<double>(best);
  }
  return best_index;
}

// The order of pairs as the tensors hold them: by label (never NaN), then by prediction with NaN
// after every number.
bool raw_pair_before(const std::pair<double, double>& a, const std::pair<double, double>& b) {
  if (a.first != b.first) return a.first < b.first;
  if (std::isnan(a.second) || std::isnan(b.second)) return !std::isnan(a.second) && std::isnan(b.second);
  return a.second < b.second;
}

// Decodes one tensor argument: false with the error in zErrMsg when it is not a value blob or
// does not decode; *real false when it is NULL or not real numbers (no rows).
bool tensor_argument(sqlite3_vtab_cursor* cur, sqlite3_value* arg, int argno, TensorArg* out, bool* real) {
  *real = false;
  const int type = sqlite3_value_type(arg);
  if (type == SQLITE_NULL) return true;
  if (type != SQLITE_BLOB) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s: argument %d is not a value blob", kName, argno + 1);
    return false;
  }
  const Status st =
      decode_checked(sqlite3_value_blob(arg), static_cast<size_t>(sqlite3_value_bytes(arg)), out, kMaxInflatedBytes);
  if (!st.is_ok()) {
    cur->pVtab->zErrMsg = sqlite3_mprintf("%s: argument %d: %s", kName, argno + 1, st.cause().c_str());
    return false;
  }
  *real = dtype_is_real(out->view.dtype);
  return true;
}

int pairs_filter(sqlite3_vtab_cursor* cur, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<PairsCursor*>(cur);
  c->i = 0;
  c->pairs.clear();
  c->example.reset();
  if (idx_num == 0 || argc < kArgumentCount) {
    cur->pVtab->zErrMsg =
        sqlite3_mprintf("%s: missing an argument, as in rule_label_pairs(labels, predictions, argmax)", kName);
    return SQLITE_ERROR;
  }
  try {
    TensorArg l, p;
    bool l_real = false, p_real = false;
    if (!tensor_argument(cur, argv[kArgLabels], kArgLabels, &l, &l_real) ||
        !tensor_argument(cur, argv[kArgPredictions], kArgPredictions, &p, &p_real))
      return SQLITE_ERROR;
    if (!l_real || !p_real) return SQLITE_OK;
    const std::vector<double> predictions = predicted(p.view, sqlite3_value_int(argv[kArgArgmax]) != 0);
    if (static_cast<int64_t>(predictions.size()) != l.view.numel) return SQLITE_OK;
    const std::vector<double> labels = to_doubles(l.view);
    std::map<ClassPair, int64_t> counts;
    for (size_t k = 0; k < labels.size(); ++k) {
      const double label = labels[k], prediction = predictions[k];
      if (std::isnan(label)) continue;
      const bool nan = std::isnan(prediction);
      ++counts[{class_index(label), nan, nan ? 0 : class_index(prediction)}];
      if (is_class_index(label) && (nan || is_class_index(prediction))) continue;
      if (!c->example || raw_pair_before({label, prediction}, *c->example)) c->example = {label, prediction};
    }
    c->pairs.assign(counts.begin(), counts.end());
  } catch (const std::bad_alloc&) {
    c->pairs.clear();
    c->example.reset();
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int pairs_next(sqlite3_vtab_cursor* cur) {
  ++reinterpret_cast<PairsCursor*>(cur)->i;
  return SQLITE_OK;
}

int pairs_eof(sqlite3_vtab_cursor* cur) {
  auto* c = reinterpret_cast<PairsCursor*>(cur);
  return c->i >= c->pairs.size();
}

int pairs_column(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<PairsCursor*>(cur);
  const auto& [key, n] = c->pairs[c->i];
  switch (col) {
    case kColLabel: sqlite3_result_int64(ctx, key.label); break;
    case kColPrediction:
      if (key.prediction_is_nan) sqlite3_result_null(ctx);
      else sqlite3_result_int64(ctx, key.prediction);
      break;
    case kColCount: sqlite3_result_int64(ctx, n); break;
    case kColExampleLabel:
      if (c->example) sqlite3_result_double(ctx, c->example->first);
      else sqlite3_result_null(ctx);
      break;
    case kColExamplePrediction:
      if (c->example && !std::isnan(c->example->second)) sqlite3_result_double(ctx, c->example->second);
      else sqlite3_result_null(ctx);
      break;
    default: sqlite3_result_null(ctx); break;  // the arguments are not kept
  }
  return SQLITE_OK;
}

int pairs_rowid(sqlite3_vtab_cursor* cur, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(reinterpret_cast<PairsCursor*>(cur)->i);
  return SQLITE_OK;
}

struct Pairs {
  static constexpr const char* kDeclaration =
      "CREATE TABLE x(label INTEGER, prediction INTEGER, n INTEGER, example_label REAL, example_prediction REAL, "
      "labels HIDDEN, predictions HIDDEN, argmax HIDDEN)";
  static constexpr int kArgumentColumn = kColLabels;
  static constexpr int kArgumentCount = Argument::kArgumentCount;
  static constexpr int kOrderColumn = kColLabel;
  static constexpr double kCost = 100;
  using Cursor = PairsCursor;
  static constexpr auto filter = pairs_filter;
  static constexpr auto next = pairs_next;
  static constexpr auto eof = pairs_eof;
  static constexpr auto column = pairs_column;
  static constexpr auto rowid = pairs_rowid;
};

const sqlite3_module kPairsModule = table_function_module<Pairs>();

}  // namespace

int register_label_pairs_module(sqlite3* db) { return sqlite3_create_module(db, kName, &kPairsModule, nullptr); }

}  // namespace trialdb::sqlext
