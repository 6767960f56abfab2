"""docs/SQL.md examples: each ```sql block followed by a ```text block is run in the stock
sqlite3 shell with the extension loaded, and its output must be exactly the text block. Also
checks that every function has a section and at least one example.

The examples at the top of each sqlext/*.cc (as SQLite's ext/misc/series.c opens with its own):
every file has at least two, each run in the shell on the fixture database, and its output must
be the lines below it. In the file's opening comment an example reads
    //   sqlite> SELECT ...          (the statement's first line)
    //      ...> ...                 (its further lines, if any)
    //   1|2                         (its output, one comment line per line)
and ends at the next "sqlite>" line or at a comment line that is not indented that way."""
import glob
import os
import re

from sqlext_testlib import Checker, args, fixture_db, shell

FUNCTIONS = ["tensor_dtype", "tensor_shape", "tensor_ndim", "tensor_numel", "tensor_bytes", "tensor_reduce",
             "tensor_reduce_axis", "tensor_argmax", "tensor_json", "tensor_at", "tensor_each", "tensor_count",
             "tensor_fraction", "tensor_percentile", "tensor_percentiles", "tensor_histogram", "tensor_bincount", "tensor_allclose",
             "tensor_diff_norm", "tensor_map", "tensor_binop", "tensor_from_json", "tensor_sum", "tensor_concat",
             "distribution_quantile",
             "regexp", "rule_real", "rule_bool", "rule_list_json", "rule_list_item", "rule_in_list", "rule_regexp_any",
             "rule_inactive_units", "rule_label_pairs", "rule_channel_sums", "rule_div", "rule_log2", "rule_number_text"]

a = args()
c = Checker()
doc = open(a.doc).read()
examples = re.findall(r"```sql\n(.*?)```\n\s*```text\n(.*?)```", doc, re.S)
c.true(len(examples) >= 20, "doc has examples (%d)" % len(examples))
c.eq(len(examples), doc.count("```sql\n"), "every example is followed by its output")
for sql, want in examples:
    rc, out, err = shell(a.shell, a.module, sql)
    c.eq((rc, out), (0, want), "example:\n%s" % sql.strip())

# Examples on the fixture trial pt_bad_init, ingested with the trialdb CLI of this build.
fixture_examples = re.findall(r"```sql fixture\n(.*?)```\n\s*```text\n(.*?)```", doc, re.S)
c.eq(len(fixture_examples), doc.count("```sql fixture\n"), "every fixture example is followed by its output")
c.true(len(fixture_examples) > 0, "doc has fixture examples")
db = fixture_db(a)   # a missing CLI or a failed ingest fails the test
for sql, want in fixture_examples:
    rc, out, err = shell(a.shell, a.module, sql, db=db)
    c.eq((rc, out), (0, want), "fixture example:\n%s\n%s" % (sql.strip(), err))


SQL_PROMPT, SQL_MORE, OUTPUT = "//   sqlite> ", "//      ...> ", "//   "


def header_examples(path):
    """[(sql, expected output)] from the opening comment of a source file."""
    examples, current = [], None
    for line in open(path).read().split("\n"):
        if not line.startswith("//"):
            break   # the opening comment ends at the first line of code
        if line.startswith(SQL_PROMPT):
            current = [line[len(SQL_PROMPT):], ""]
            examples.append(current)
        elif current and line.startswith(SQL_MORE) and not current[1]:
            current[0] += "\n" + line[len(SQL_MORE):]
        elif current and line.startswith(OUTPUT):
            current[1] += line[len(OUTPUT):] + "\n"
        else:
            current = None   # a comment line not indented as an example's ends it
    return examples


sources = sorted(glob.glob(os.path.join(a.sqlext_sources, "*.cc")))
c.true(len(sources) >= 15, "sqlext sources found under --sqlext-sources %r (%d)" % (a.sqlext_sources, len(sources)))
for path in sources:
    name = os.path.relpath(path, os.path.dirname(a.sqlext_sources))
    in_header = header_examples(path)
    c.true(len(in_header) >= 2, "%s opens with at least two SQL examples (%d)" % (name, len(in_header)))
    for header_sql, header_want in in_header:
        c.true(header_want != "", "%s: the example has its output:\n%s" % (name, header_sql))
        rc, out, err = shell(a.shell, a.module, header_sql, db=db)
        c.eq((rc, out), (0, header_want), "%s example:\n%s\n%s" % (name, header_sql, err))

headings = "\n".join(l for l in doc.splitlines() if l.startswith("## "))
example_sql = "\n".join(sql for sql, _ in examples)
for f in FUNCTIONS:
    c.true(re.search(r"\b%s\b" % f, headings), "%s has a section" % f)
    c.true(re.search(r"\b%s\s*\(" % f, example_sql) or (f == "regexp" and "REGEXP" in example_sql),
           "%s has an example" % f)
c.done()
