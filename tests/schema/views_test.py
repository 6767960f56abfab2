"""The public views' join columns, on the fixtures (ingested with the built CLI, read with the
stock sqlite3 module, no extension):
- every reductions and tensor_values row carries its step's mode, mode_step and global step, equal
  to the steps view's row of that global step (GLOBAL-mode steps included, which a join of
  reductions.step with steps.step gets wrong: smdebug numbers them by their mode step);
- workers lists each trial's workers; collection_definitions each collection with its include
  regexes and the hook's save and reduction configuration.

usage: views_test.py TRIALDB FIXTURES_DIR
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

trialdb, fixtures = sys.argv[1:3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "t.db")
    for f in ("core_dtypes", "dist2", "pt_bad_init"):
        p = subprocess.run([trialdb, "ingest", os.path.join(fixtures, f), "--db", db, "-q"], capture_output=True, text=True)
        check(p.returncode in (0, 4), "ingest %s: %s" % (f, p.stderr))
    con = sqlite3.connect(db)
    for view in ("reductions", "tensor_values"):
        total, wrong = con.execute(
            "SELECT count(*), sum(s.step IS NULL OR s.mode IS NOT v.mode OR s.mode_step IS NOT v.mode_step) "
            "FROM %s v LEFT JOIN steps s ON s.trial = v.trial AND s.step = v.global_step" % view).fetchone()
        check(total > 0 and wrong == 0, "%s: %d of %d rows disagree with their global step's steps row" % (view, wrong, total))
    # The GLOBAL-mode rows of core_dtypes are the ones a join on `step` misplaces.
    globals_, misjoined = con.execute(
        "SELECT count(*), sum(r.step <> r.global_step) FROM reductions r WHERE r.trial = 'core_dtypes' AND r.mode = 'GLOBAL'"
    ).fetchone()
    check(globals_ > 0 and misjoined == globals_, "core_dtypes: GLOBAL rows %d, numbered apart from their global step %d"
          % (globals_, misjoined or 0))
    got = {tuple(r) for r in con.execute("SELECT trial, worker FROM workers WHERE trial = 'dist2'")}
    check(got == {("dist2", "worker_0"), ("dist2", "worker_1")}, "workers of dist2: %r" % got)
    row = con.execute("SELECT include_regex, save_config, reduction_config, definition FROM collection_definitions "
                      "WHERE trial = 'pt_bad_init' AND collection = 'weights'").fetchone()
    check(row is not None and row[0] == "^(?!gradient).*weight", "weights include_regex: %r" % (row,))
    check(row is not None and json.loads(row[1])["TRAIN"]["save_interval"] == 1, "weights save_config: %r" % (row,))
    check(row is not None and json.loads(row[2])["save_raw_tensor"] is True, "weights reduction_config: %r" % (row,))
    check(row is not None and "Net_fc.weight" in json.loads(row[3])["tensor_names"], "weights definition: %r" % (row,))

print("%d failures" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
