"""An index file with many bad entries is reported in time linear in their number (issue 31):
each kind of bad entry, N of them and 8 N of them, costs at most a bounded multiple of 8 times as
much CPU time (a quadratic report costs 64 times as much); every bad entry is reported, the good
ones ingested.

Usage: bad_entries_test.py TRIALDB"""
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

TRIALDB = sys.argv[1]
SMALL, LARGE = 2500, 20000
# Linear is 8; quadratic 64. Fixed costs (start-up, the good entries) only lower the ratio.
MAX_RATIO = 20

KINDS = {
    "invalid length": lambda i: {"tensorname": "bad_%d" % i, "start_idx": 0, "length": 1},
    "no start_idx": lambda i: {"tensorname": "bad_%d" % i, "length": 100},
    "name not a string": lambda i: {"tensorname": i, "start_idx": 0, "length": 100},
    "not an object": lambda i: [i],
}


def child_cpu_seconds(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    tmp = tempfile.mkdtemp(prefix="trialdb_bad_entries_")
    failures = []
    try:
        base = os.path.join(tmp, "base")
        subprocess.run([TRIALDB, "synth", base, "--steps", "2", "--tensors", "2", "--elements", "4"], check=True,
                       stdout=subprocess.DEVNULL)
        for kind, entry in KINDS.items():
            secs = {}
            for n in (SMALL, LARGE):
                trial = common.copy_trial(base, os.path.join(tmp, "t_%d_%d" % (len(failures), n)))
                doc = common.read_index(trial, 0)
                good = len(doc["tensor_payload"])
                doc["tensor_payload"] += [entry(i) for i in range(n)]
                common.write_index(trial, 0, doc)
                db = os.path.join(tmp, "%s_%d.db" % (kind.replace(" ", "_"), n))
                r, secs[n] = child_cpu_seconds([TRIALDB, "ingest", trial, "--db", db, "--name", "t", "-q"])
                errors = sqlite3.connect(db).execute("SELECT count(*) FROM ingest_errors").fetchone()[0]
                values = sqlite3.connect(db).execute("SELECT count(*) FROM tensor_values WHERE step = 0").fetchone()[0]
                if r.returncode != 4 or errors != n or values < good:
                    failures.append("%s x%d: exit %s, %d errors, %d values at step 0 (%r)"
                                    % (kind, n, r.returncode, errors, values, r.stderr[-200:]))
                shutil.rmtree(trial)
            ratio = secs[LARGE] / max(secs[SMALL], 1e-3)
            print("%s: %.2f s for %d, %.2f s for %d (x%.1f)" % (kind, secs[SMALL], SMALL, secs[LARGE], LARGE, ratio))
            if ratio > MAX_RATIO:
                failures.append("%s: x%.1f the time for x%d the entries (quadratic?)" % (kind, ratio, LARGE // SMALL))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
