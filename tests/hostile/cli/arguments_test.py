"""Arguments that could make an ingest hang or crash are refused at once, and an ingest under a
pids limit (no thread can be created) still ingests everything.

Usage: arguments_test.py TRIALDB FIXTURES"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

trialdb, fixtures = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(argv, timeout=60):
    """The finished process (returncode None if it had to be killed at the timeout) and its time."""
    start = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(argv, None, e.stdout or "", "killed after %d s" % timeout)
    return r, time.monotonic() - start


tmp = tempfile.mkdtemp(prefix="hostile_cli_")
try:
    trial = os.path.join(tmp, "trial")
    shutil.copytree(os.path.join(fixtures, "pt_bad_init"), trial)

    # --follow on a regular file: it will never become a trial folder, so no waiting for it.
    afile = os.path.join(tmp, "afile")
    open(afile, "w").close()
    db = os.path.join(tmp, "follow.db")
    r, secs = run([trialdb, "ingest", afile, "--db", db, "--follow", "-q"], timeout=20)
    check(r.returncode == 1 and secs < 10 and "not a directory" in r.stderr and afile in r.stderr,
          "--follow on a regular file fails at once (rc %s, %.1f s, %r)" % (r.returncode, secs, r.stderr[-200:]))
    check(not os.path.exists(db), "no database is left behind by a refused --follow")

    # Intervals that would spin or never poll, thread counts out of bounds: usage errors (exit 2).
    for bad in ("nan", "inf", "-inf", "-1", "0", "0.001", "abc", "1e400"):
        r, _ = run([trialdb, "ingest", trial, "--db", os.path.join(tmp, "i.db"), "--follow", "--interval", bad, "-q"],
                   timeout=20)
        check(r.returncode == 2 and "--interval" in r.stderr, "--interval %s is refused (rc %s)" % (bad, r.returncode))
    for bad in ("0", "-1", "100000", "x"):
        r, _ = run([trialdb, "ingest", trial, "--db", os.path.join(tmp, "t.db"), "--threads", bad, "-q"])
        check(r.returncode == 2 and "--threads" in r.stderr, "--threads %s is refused (rc %s)" % (bad, r.returncode))

    # A pids limit: the kernel lets an unprivileged user have 2 processes (threads count), so
    # almost no thread can be created. The ingest must still store every step.
    if os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("prlimit"):
        check(False, "the pids-limit case needs root, setpriv and prlimit (util-linux)")
    else:
        os.chmod(tmp, 0o777)
        for root, dirs, files in os.walk(tmp):
            for n in dirs + files:
                os.chmod(os.path.join(root, n), 0o777)
        db = os.path.join(tmp, "pids.db")
        r, _ = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "prlimit", "--nproc=2",
                    trialdb, "ingest", trial, "--db", db, "-q"])
        steps = 0
        if os.path.exists(db):
            with sqlite3.connect(db) as c:
                steps = c.execute("SELECT count(*) FROM steps WHERE complete").fetchone()[0]
        check(r.returncode == 0 and steps == 24,
              "under a pids limit every step is ingested (rc %s, %d of 24 steps, %r)" % (r.returncode, steps,
                                                                                        r.stderr[-200:]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
