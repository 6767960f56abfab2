"""A regular expression past PCRE2's match limit (issue 17, F17) is an error naming the pattern,
never "no match": in SQL's regexp(), in a collection's include_regex (an ingest_errors row naming
the collection and the pattern; the rest is ingested) and in the --tensor filters of compare and
plot; and past it only when Python's re could not answer either (a deep search is retried with a
larger JIT stack, then on the interpreter). --tensors past the limit fails the ingest.

Usage: regex_limit_test.py TRIALDB"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

TRIALDB = sys.argv[1]
# Three ways to take each character, then a digit at the end: 3^n ways to fail on a name of n
# characters not ending in a digit. The synth trial's gradients ('gradient/Net_fc0.weight',
# 23 characters, and 'gradient/Net_fc0.bias', 21) are far past the match limit; shorter
# names fail fast enough, and names ending in a digit match at once.
RUNAWAY = r"^(.|.|.)*\d$"
RUNAWAY_NAMES = ["gradient/Net_fc0.bias", "gradient/Net_fc0.weight"]
MATCHING = ["CrossEntropyLoss_output_0", "relu0_output_0"]


def add_collection(trial, name, pattern):
    for path in glob.glob(os.path.join(trial, "collections", "*", "*.json")):
        with open(path) as f:
            doc = json.load(f)
        template = next(iter(doc["collections"].values()))
        c = dict(template, name=name, include_regex=[pattern], tensor_names=[])
        doc["collections"][name] = c
        with open(path, "w") as f:
            json.dump(doc, f)


def test_collection(tmp, trial):
    hostile = common.copy_trial(trial, os.path.join(tmp, "hostile"))
    add_collection(hostile, "runaway", RUNAWAY)
    db, clean = os.path.join(tmp, "h.db"), os.path.join(tmp, "clean.db")
    assert common.ingest(TRIALDB, trial, clean, name="t").rc == 0
    r = common.ingest(TRIALDB, hostile, db, name="t")
    assert r.rc == 4, r
    errs = sorted(common.errors(db), key=lambda e: e[3])
    assert len(errs) == len(RUNAWAY_NAMES), errs
    for (_, file, step, message), name in zip(errs, RUNAWAY_NAMES):
        assert file == "collections/" and step is None, errs
        for part in ("'runaway'", RUNAWAY, name, "limit"):
            assert part in message, (part, message)
    # Everything else is as a clean ingest; the collection holds the names it decided.
    a, b = common.dump(db), common.dump(clean)
    for view in ("trials", "steps", "tensors", "tensor_values", "reductions"):
        assert a[view] == b[view], view
    members = sorted(r[2] for r in a["collections"] if r[1] == "runaway")
    assert members == MATCHING, members
    assert [r for r in a["collections"] if r[1] != "runaway"] == b["collections"]
    return clean


def test_queries(db):
    r = common.run([TRIALDB, "sql", "--db", db, f"SELECT regexp('{RUNAWAY}', '{RUNAWAY_NAMES[1]}')"])
    assert r.rc == 1 and RUNAWAY in r.err and "limit" in r.err, r
    r = common.run([TRIALDB, "sql", "--db", db, f"SELECT count(*) FROM tensors WHERE tensor REGEXP '{RUNAWAY}'"])
    assert r.rc == 1 and RUNAWAY in r.err, r
    r = common.run([TRIALDB, "compare", "--db", db, "t", "t", "--tensor", RUNAWAY])
    assert r.rc == 1 and RUNAWAY in r.err and "limit" in r.err, r
    r = common.run([TRIALDB, "plot", "--db", db, "--out", os.path.join(os.path.dirname(db), "r.png"), "reduction",
                    "--tensor", RUNAWAY])
    assert r.rc == 1 and RUNAWAY in r.err and "limit" in r.err, r
    # Deep but not catastrophic: Python's re matches `(a|a)*$` on 10,001 characters; so does
    # regexp() (a larger JIT stack, then the interpreter), and on a million.
    for n in (10001, 1000000):
        r = common.run([TRIALDB, "sql", "--db", db, "--csv",
                        f"SELECT regexp('(a|a)*$', replace(hex(zeroblob({n})), '00', 'a')) AS deep, "
                        f"regexp('^(a|a)*b$', replace(hex(zeroblob({n})), '00', 'a') || 'b') AS anchored"])
        assert r.rc == 0 and r.out.split() == ["deep,anchored", "1,1"], (n, r)
    # A pattern that finishes still answers both ways.
    r = common.run([TRIALDB, "sql", "--db", db, "--csv",
                    r"SELECT tensor FROM tensors WHERE tensor REGEXP '^(?!gradient).*weight' ORDER BY 1"])
    assert r.rc == 0 and r.out.split() == ["tensor", "Net_fc0.weight"], r


def test_ingest_selection(tmp, trial):
    """--tensors past the limit is an error naming the pattern, never a selection of nothing."""
    db = os.path.join(tmp, "sel.db")
    r = common.ingest(TRIALDB, trial, db, name="t", extra=["--tensors", RUNAWAY])
    assert r.rc == 1 and RUNAWAY in r.err and "limit" in r.err and "--tensors" in r.err, r
    # A pattern that finishes selects as Python's re does.
    r = common.ingest(TRIALDB, trial, db, name="deep", extra=["--tensors", r"^(.)*_output_0$"])
    assert r.rc == 0, r
    r = common.run([TRIALDB, "sql", "--db", db, "--csv", "SELECT tensor FROM tensors WHERE trial = 'deep' ORDER BY 1"])
    assert r.rc == 0 and r.out.split()[1:] == MATCHING, r


def main():
    tmp = tempfile.mkdtemp(prefix="trialdb_hostile_regex_")
    try:
        trial = os.path.join(tmp, "tr")
        subprocess.run([TRIALDB, "synth", trial, "--steps", "4", "--tensors", "4", "--elements", "16"], check=True,
                       stdout=subprocess.DEVNULL)
        clean = test_collection(tmp, trial)
        test_queries(clean)
        test_ingest_selection(tmp, trial)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
