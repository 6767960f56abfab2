#!/usr/bin/python3
"""Runs every query of docs/COOKBOOK.md and checks its output is the one the doc shows; then runs
every recipe of COOKBOOK.md and SCALE.md on a team's jobs and checks it is right on each of them.

The doc is machine-checkable: each ```sql block is followed by a ```text block holding what
`trialdb shell` prints for it in `.mode table`. The database is built the way the doc says, by
ingesting the fixtures pt_bad_init and pt_good_init.

The team (team_recipes.py): jobs as real ones are, one ending with an EVAL step, one with two
workers, one ingested with a selection. Each recipe answers for every job what it answers for
that job alone (a recipe that compares a job with the others' last step, or drops a job, fails);
SCALE.md's "every job" recipes list every job; and SCALE.md's recipes answer the same in DuckDB
over the export as in SQLite.

usage: cookbook_check.py TRIALDB FIXTURES_DIR COOKBOOK.md WORK_DIR [--update] [--scale SCALE.md]
--update rewrites the text blocks with the current output (then review the diff).
"""
import os
import re
import shlex
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import team_recipes  # noqa: E402

BLOCK = re.compile(r"```sql\n(.*?)```\n\n```text\n(.*?)```", re.S)


def run_query(trialdb, db, sql):
    p = subprocess.run([trialdb, "shell", "--db", db], input=".mode table\n" + sql,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or p.stderr.strip():
        return None, "exit %d, stderr: %s" % (p.returncode, p.stderr.strip())
    return p.stdout, None


CHART = re.compile(r"```sh\n(trialdb plot [^\n]*)\n```\n\n!\[[^]]*\]\(([^)]*)\)")


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24]) if head[:8] == b"\x89PNG\r\n\x1a\n" else None


def check_charts(trialdb, db, doc, doc_dir, work):
    """Runs every chart command of the page (after the rules, for the findings) and checks it
    writes an image of the size of the one the page shows."""
    subprocess.run([trialdb, "rules", "--db", db], check=True, capture_output=True)
    failures = 0
    charts = CHART.findall(doc)
    for command, image in charts:
        args = shlex.split(command)[1:]
        args[args.index("--db") + 1] = db
        out = os.path.join(work, os.path.basename(args[args.index("--out") + 1]))
        args[args.index("--out") + 1] = out
        p = subprocess.run([trialdb, *args], capture_output=True, text=True, timeout=120)
        shown = png_size(os.path.join(doc_dir, image))
        if p.returncode != 0 or png_size(out) is None or png_size(out) != shown:
            print("FAIL chart %s: exit %d %s, size %s, the page shows %s" % (image, p.returncode, p.stderr.strip(),
                                                                          png_size(out), shown))
            failures += 1
    if not charts:
        print("FAIL: no charts in the page")
        failures += 1
    print("%d charts checked" % len(charts))
    return failures


def main():
    trialdb, fixtures, doc_path, work = sys.argv[1:5]
    update = "--update" in sys.argv[5:]
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "cookbook.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    for trial in ("pt_bad_init", "pt_good_init"):
        subprocess.run([trialdb, "ingest", os.path.join(fixtures, trial), "--db", db],
                       check=True, capture_output=True)
    doc = open(doc_path).read()
    blocks = list(BLOCK.finditer(doc))
    sql_blocks = doc.count("```sql\n")
    if sql_blocks != len(blocks):
        print("FAIL: %d sql blocks but only %d are followed by a text block" % (sql_blocks, len(blocks)))
        return 1
    if not blocks:
        print("FAIL: no sql blocks in %s" % doc_path)
        return 1
    failures = 0
    out = []
    last = 0
    for i, m in enumerate(blocks):
        sql, expected = m.group(1), m.group(2)
        got, err = run_query(trialdb, db, sql)
        line = doc.count("\n", 0, m.start()) + 1
        if err:
            print("FAIL query %d (line %d): %s\n%s" % (i + 1, line, err, sql))
            failures += 1
            got = expected
        elif got.rstrip() != expected.rstrip():
            if not update:
                print("FAIL query %d (line %d) output differs\n--- doc\n%s--- got\n%s" % (i + 1, line, expected, got))
                failures += 1
        elif not got.strip():
            print("FAIL query %d (line %d) printed nothing" % (i + 1, line))
            failures += 1
        out.append(doc[last:m.start(2)])
        out.append(got.rstrip() + "\n")
        last = m.end(2)
    out.append(doc[last:])
    failures += check_charts(trialdb, db, doc, os.path.dirname(doc_path), work)
    if update:
        open(doc_path, "w").write("".join(out))
        print("updated %s (%d queries)" % (doc_path, len(blocks)))
    print("%d queries, %d failed" % (len(blocks), failures))
    if "--scale" in sys.argv and not update:
        scale_doc = open(sys.argv[sys.argv.index("--scale") + 1]).read()
        failures += team_recipes.check(trialdb, fixtures, os.path.join(work, "team"),
                                       [m.group(1) for m in blocks], scale_doc)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
