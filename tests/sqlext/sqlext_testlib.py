"""Shared helpers of the sqlext end-to-end tests (run with /usr/bin/python3).

Arguments every test receives from CTest: --module build/lib/trialdb.so, --shell sqlite3,
--cli build/bin/trialdb, --fixtures tests/data/fixtures, --doc docs/SQL.md, --sqlext-sources sqlext
(the rules' test also --rules-dir rules_sql).
"""
import argparse
import atexit
import os
import sqlite3
import subprocess
import sys
import shutil
import tempfile


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--module", required=True)
    p.add_argument("--shell", default="sqlite3")
    p.add_argument("--cli", default="")
    p.add_argument("--fixtures", default="")
    p.add_argument("--doc", default="")
    p.add_argument("--sqlext-sources", default="")
    p.add_argument("--rules-dir", default="")
    return p.parse_args()


def module_stem(path):
    """What .load / load_extension take: the path without .so (SQLite adds it)."""
    return path[:-3] if path.endswith(".so") else path


def connect(module, path=":memory:"):
    con = sqlite3.connect(path)
    con.enable_load_extension(True)
    con.load_extension(module_stem(module))
    con.enable_load_extension(False)
    return con


def shell(shell_bin, module, sql, db=":memory:", load=True):
    """Runs sql in the stock sqlite3 shell after .load (unless load is False); returns
    (returncode, stdout, stderr). The shell may echo undecodable bytes in its errors."""
    script = (".load %s\n" % module_stem(module) if load else "") + sql + "\n"
    r = subprocess.run([shell_bin, "-batch", "-bail", db], input=script, capture_output=True, text=True,
                       errors="replace", timeout=30)
    return r.returncode, r.stdout, r.stderr


def check_self_contained_module(c, module, entry):
    """A loadable module must call SQLite only through the host's API table: no libsqlite3
    dependency, no undefined sqlite3_* symbols, and only its entry point exported."""
    needed = subprocess.run(["readelf", "-d", module], capture_output=True, text=True).stdout
    c.true("libsqlite3" not in needed, "module does not link libsqlite3")
    undef = subprocess.run(["nm", "-D", "--undefined-only", module], capture_output=True, text=True).stdout
    c.true(not any(l.split()[-1].startswith("sqlite3_") for l in undef.splitlines() if l.strip()),
           "no undefined sqlite3_ symbols")
    defined = subprocess.run(["nm", "-D", "--defined-only", module], capture_output=True, text=True).stdout
    c.eq([l.split()[-1] for l in defined.splitlines() if " T " in l], [entry], "exported functions")


_fixture_db = None


def fixture_db(a, trial="pt_bad_init"):
    """A database with one fixture trial ingested by `trialdb ingest` (--cli). A missing CLI or a
    failed ingest fails the test (exit 1): the fixture checks must not be skipped silently."""
    global _fixture_db
    if _fixture_db is not None:
        return _fixture_db
    if not a.cli or not os.path.isfile(a.cli) or not os.access(a.cli, os.X_OK):
        print("FAIL: no trialdb CLI to ingest the fixture (--cli %r)" % a.cli)
        sys.exit(1)
    if not a.fixtures or not os.path.isdir(os.path.join(a.fixtures, trial)):
        print("FAIL: no fixture trial %r under --fixtures %r" % (trial, a.fixtures))
        sys.exit(1)
    d = tempfile.mkdtemp(prefix="sqlext_fixture_")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    db = os.path.join(d, "trial.db")
    r = subprocess.run([a.cli, "ingest", os.path.join(a.fixtures, trial), "--db", db, "--name", trial],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print("FAIL: trialdb ingest %s exited %d: %s" % (trial, r.returncode, r.stderr.strip()[:300]))
        sys.exit(1)
    _fixture_db = db
    return db


class Checker:
    def __init__(self):
        self.failures = 0
        self.checks = 0

    def eq(self, got, want, what):
        self.checks += 1
        if got != want:
            self.failures += 1
            print("FAIL %s:\n  got  %r\n  want %r" % (what, got, want))

    def true(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print("FAIL %s" % what)

    def done(self):
        print("%d checks, %d failures" % (self.checks, self.failures))
        sys.exit(1 if self.failures or not self.checks else 0)
