#!/usr/bin/python3
"""The page size of a database (schema/page_size_policy.h), end to end through the CLI.

usage: page_size_check.py TRIALDB WORK_DIR
Checks: a new database takes 2 KiB pages for a trial of small tensors and larger ones for a trial
of 1 MiB tensors; --values none and a selection of tensors keep 2 KiB; an existing database keeps
its own size whatever it receives; the public views hold the same rows whatever the page size
(after a fresh ingest, after --values none then --values all, after a compact); `compact`
rebuilds a 2 KiB file holding large tensors with the size a fresh ingest chooses.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from common import connect, dump, integrity  # noqa: E402

TRIALDB, WORK = sys.argv[1:3]
SMALLEST = 2048
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def trialdb(*args):
    p = subprocess.run([TRIALDB, *args], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"trialdb {' '.join(args)}: exit {p.returncode}: {p.stderr[-2000:]}")
    return p


def page_size(db):
    c = connect(db)
    try:
        return c.execute("PRAGMA page_size").fetchone()[0]
    finally:
        c.close()


def ingest(trial, db, *extra):
    trialdb("ingest", trial, "--db", db, "--quiet", "--name", "t", *extra)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
small, large = os.path.join(WORK, "small"), os.path.join(WORK, "large")
trialdb("synth", small, "--steps", "3", "--tensors", "4", "--elements", "1024", "--seed", "1")
trialdb("synth", large, "--steps", "3", "--tensors", "4", "--elements", "262144", "--seed", "2")
db = lambda name: os.path.join(WORK, name + ".db")  # noqa: E731

ingest(small, db("small"))
check(page_size(db("small")) == SMALLEST, f"small tensors: page size {page_size(db('small'))}, not {SMALLEST}")

ingest(large, db("large"))
chosen = page_size(db("large"))
check(chosen >= 16384, f"1 MiB tensors: page size {chosen}, expected 16 KiB or more")
reference = dump(db("large"))
check(reference["tensor_values"], "the large trial stored no values")

ingest(large, db("selected"), "--tensors", ".*")
check(page_size(db("selected")) == SMALLEST, f"a selection of tensors: page size {page_size(db('selected'))}")
check(dump(db("selected")) == reference, "a 2 KiB file holds other rows than the chosen size's")

ingest(large, db("none"), "--values", "none")
check(page_size(db("none")) == SMALLEST, f"--values none: page size {page_size(db('none'))}")
ingest(large, db("none"), "--values", "all")
check(page_size(db("none")) == SMALLEST, "--values all changed the page size of an existing file")
check(dump(db("none")) == reference, "--values none then all holds other rows than a fresh ingest")

shutil.copy(db("small"), db("existing"))
trialdb("ingest", large, "--db", db("existing"), "--quiet", "--name", "big")
check(page_size(db("existing")) == SMALLEST, "an existing file's page size changed")

trialdb("compact", "--db", db("selected"))
check(page_size(db("selected")) == chosen,
      f"compact of a 2 KiB file of 1 MiB tensors: page size {page_size(db('selected'))}, not {chosen}")
check(dump(db("selected")) == reference, "compact changed the rows")
check(integrity(db("selected")) == "ok", "compact left a damaged file")

trialdb("compact", "--db", db("small"))
check(page_size(db("small")) == SMALLEST, "compact of a file of small tensors changed its page size")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("page size: all checks passed")
