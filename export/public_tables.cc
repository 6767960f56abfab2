// The exported public views and their column types (public_tables.h).
#include "export/public_tables.h"

namespace trialdb::exporter {

namespace {

using parquet::ColumnType;
constexpr ColumnType kText = ColumnType::kString;
constexpr ColumnType kInt = ColumnType::kInt64;
constexpr ColumnType kReal = ColumnType::kDouble;
constexpr ColumnType kBool = ColumnType::kBoolean;

// The global step of a row of a view that has mode and mode_step but no global_step: its step
// is the global step except in GLOBAL mode, where smdebug numbers values by the mode step.
constexpr const char* kGlobalStepOfModeStep =
    "CASE WHEN v.mode = 'GLOBAL' THEN coalesce((SELECT s.step FROM steps s WHERE s.trial = v.trial "
    "AND s.mode = 'GLOBAL' AND s.mode_step = v.mode_step), v.step) ELSE v.step END";

std::vector<PublicTable> make_tables() {
  const std::vector<parquet::Column> value_key = {
      {"tensor", kText}, {"step", kInt}, {"worker", kText}, {"mode", kText}, {"mode_step", kInt}};
  auto with_value_key = [&](std::vector<parquet::Column> rest) {
    std::vector<parquet::Column> c = value_key;
    c.insert(c.end(), rest.begin(), rest.end());
    return c;
  };
  return {
      {"trials", {{"path", kText}, {"workers", kInt}, {"ended", kBool}}, ""},
      {"steps", {{"step", kInt}, {"mode", kText}, {"mode_step", kInt}, {"complete", kBool}}, ""},
      {"workers", {{"worker", kText}}, ""},
      {"tensors", {{"tensor", kText}}, ""},
      {"collections", {{"collection", kText}, {"tensor", kText}}, ""},
      {"collection_definitions",
       {{"collection", kText},
        {"include_regex", kText},
        {"save_config", kText},
        {"reduction_config", kText},
        {"definition", kText}},
       ""},
      {"reductions",
       {{"tensor", kText},
        {"step", kInt},
        {"worker", kText},
        {"reduction", kText},
        {"abs", kBool},
        {"value", kReal},
        {"mode", kText},
        {"mode_step", kInt},
        {"global_step", kInt},
        {"computed", kBool}},
       "v.global_step",
       ValuesExport::kNone,
       RowSource::kReductionKinds},
      {"distributions",
       with_value_key({{"count", kInt},
                       {"nan", kInt},
                       {"pos_inf", kInt},
                       {"neg_inf", kInt},
                       {"zero", kInt},
                       {"negative", kInt},
                       {"positive", kInt},
                       {"p0", kReal},
                       {"p1", kReal},
                       {"p5", kReal},
                       {"p10", kReal},
                       {"p25", kReal},
                       {"p50", kReal},
                       {"p75", kReal},
                       {"p90", kReal},
                       {"p95", kReal},
                       {"p99", kReal},
                       {"p100", kReal}}),
       kGlobalStepOfModeStep},
      {"histogram_buckets", with_value_key({{"lo", kReal}, {"hi", kReal}, {"count", kInt}}), kGlobalStepOfModeStep,
       ValuesExport::kNone, RowSource::kHistogramRuns},
      {"rule_findings",
       {{"rule", kText},
        {"step", kInt},
        {"mode", kText},
        {"mode_step", kInt},
        {"tensor", kText},
        {"worker", kText},
        {"value", kReal},
        {"message", kText}},
       ""},
      {"ingest_errors", {{"file", kText}, {"step", kInt}, {"message", kText}}, ""},
      {"value_locations",
       {{"tensor", kText},
        {"step", kInt},
        {"worker", kText},
        {"file", kText},
        {"offset", kInt},
        {"length", kInt},
        {"dtype", kText},
        {"shape", kText},
        {"global_step", kInt}},
       "v.global_step",
       ValuesExport::kPointers},
      {"tensor_values",
       with_value_key({{"dtype", kText}, {"shape", kText}, {"value", ColumnType::kBytes}, {"global_step", kInt}}),
       "v.global_step", ValuesExport::kInline},
  };
}

}  // namespace

const std::vector<PublicTable>& public_tables() {
  static const std::vector<PublicTable> tables = make_tables();
  return tables;
}

const PublicTable* find_public_table(const std::string& name) {
  for (const PublicTable& t : public_tables())
    if (t.name == name) return &t;
  return nullptr;
}

bool wanted(const PublicTable& table, ValuesExport values) {
  return static_cast<int>(values) >= static_cast<int>(table.needs);
}

}  // namespace trialdb::exporter
