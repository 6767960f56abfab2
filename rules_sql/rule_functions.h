// SQL functions the built-in rules need beyond sqlext's tensor_* functions: element counts,
// percentiles, numpy-style allclose, per-unit activity, label/prediction pairs, per-channel
// sums, and the parsing of SageMaker's string parameters. All are deterministic scalar
// functions; tensor arguments are value blobs (docs/BLOB_FORMAT.md). A tensor argument that
// is NULL, a string or complex tensor yields NULL (rules ignore non-numeric values); a blob
// that does not decode is an error naming the function.
//
//   rule_real(text)                  number; 'inf', '+inf', '-inf' accepted; NULL, '' and
//                                    'none' give NULL; anything else is an error
//   rule_bool(text)                  1 for true/1/yes/on, 0 for false/0/no/off/''/NULL
//   rule_list_json(csv)              "1, 2.5" -> '[1,2.5]' (items parsed by rule_real)
//   rule_list_item(csv, i)           item i (0-based) as a number, NULL past the end
//   rule_in_list(text, csv)          1 when text equals one of the (trimmed) items
//   rule_regexp_any(csv, subject)    1 when any pattern matches (Python re.search); 0 for NULL
//   rule_count(v, what [, x])        elements that are 'nan', 'inf' (+-Inf), 'zero', 'equal' (to
//                                    x), or 'all' of them
//   rule_percentile(v, p)            numpy.percentile(v, p), linear interpolation; NULL with NaN
//   rule_allclose(a, b, rtol, atol, equal_nan)   numpy.allclose; 0 when the shapes differ
//   rule_diff_norm(a, b)             ||a - b||; NULL when the shapes differ
//   rule_inactive_units(v, lo, hi, threshold)
//                                    percent of units whose activity (percent of batch entries
//                                    with lo < x < hi; NULL bound = unbounded) is < threshold.
//                                    >= 2 dims: axis 0 is the batch; else v is one unit.
//   rule_label_pairs(labels, predictions, argmax)
//                                    JSON [[label, prediction, count], ...] sorted; predictions
//                                    argmax'ed over their last axis when argmax; NULL when the
//                                    counts differ
//   rule_channel_sums(v, axis)       JSON array of the sums per position of `axis`
//   rule_div(a, b)                   a / b in IEEE arithmetic (x/0 = +-inf, 0/0 = NULL)
//   rule_log2(x)                     log2(x) (NULL for x <= 0)
//   rule_number_text(x)              3.0 -> '3', 0.5 -> '0.5'
#pragma once
#include <sqlite3.h>

namespace trialdb::rules {

// SQLITE_OK or the first error code of a registration.
int register_rule_functions(sqlite3* db);

}  // namespace trialdb::rules
