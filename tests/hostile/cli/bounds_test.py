"""Bounded everything (issue 31, item 8): SQL and custom rules stop at their time limit and say
so, naming the rule; an --on-finding command is killed at its time limit while the command (and
--follow) goes on; SQL and rule files that are special files are refused; output that cannot be
written (a full disk) is exit 1 with a message; plot refuses to open a FIFO.

Usage: bounds_test.py TRIALDB FIXTURES"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

trialdb, fixtures = sys.argv[1], sys.argv[2]
failures = []

FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*argv, timeout=120, stdout=subprocess.PIPE):
    """The finished process (returncode None if it had to be killed) and how long it took."""
    start = time.monotonic()
    try:
        r = subprocess.run([trialdb, *argv], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        r = subprocess.CompletedProcess(argv, None, "", "killed after %d s" % timeout)
    return r, time.monotonic() - start


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


tmp = tempfile.mkdtemp(prefix="hostile_bounds_")
try:
    trial = os.path.join(fixtures, "pt_bad_init")
    db = os.path.join(tmp, "t.db")
    r, _ = run("ingest", trial, "--db", db, "-q")
    check(r.returncode == 0, "ingest the fixture: %r" % r.stderr[-300:])

    # sql --timeout: a query that never ends stops at the limit, exit 1, saying so.
    r, secs = run("sql", "--db", db, "--timeout", "1", FOREVER, timeout=60)
    check(r.returncode == 1 and "--timeout" in r.stderr and secs < 20,
          "sql --timeout 1 stops a query that never ends (exit %s, %.1f s, %r)" % (r.returncode, secs, r.stderr[-200:]))
    r, _ = run("sql", "--db", db, "--timeout", "30", "SELECT count(*) FROM steps")
    check(r.returncode == 0, "sql --timeout lets a query that ends finish: %r" % r.stderr[-200:])
    for bad in ("nan", "-1", "x", "1e30"):
        r, _ = run("sql", "--db", db, "--timeout", bad, "SELECT 1")
        check(r.returncode == 2 and "--timeout" in r.stderr, "sql --timeout %s is refused (exit %s)" % (bad, r.returncode))

    # A custom rule that never ends is stopped at rules --timeout and reported by name; the
    # other rules are evaluated.
    forever = write(os.path.join(tmp, "forever.sql"),
                    "-- @rule forever batch\n"
                    "CREATE VIEW rule_forever AS\n"
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)\n"
                    "SELECT b.trial, b.step, 'x' AS tensor, 'worker_0' AS worker, (SELECT count(*) FROM c) AS value,\n"
                    "       'never' AS message\n"
                    "FROM rule_batch b;\n")
    r, secs = run("rules", "--db", db, "--rule-file", forever, "--timeout", "1", timeout=120)
    check(r.returncode == 1 and "rule forever" in r.stderr and "time limit" in r.stderr and secs < 60,
          "rules --timeout stops the rule that never ends, naming it (exit %s, %.1f s, %r)"
          % (r.returncode, secs, r.stderr[-300:]))
    r, _ = run("sql", "--db", db, "--csv", "SELECT count(*) FROM rule_findings WHERE rule = 'forever'")
    check(r.stdout.split()[-1:] == ["0"], "the stopped rule recorded nothing: %r" % r.stdout)
    r, _ = run("sql", "--db", db, "--csv", "SELECT count(DISTINCT rule) FROM rule_findings")
    check(int(r.stdout.split()[-1]) > 0, "the other rules were evaluated: %r" % r.stdout)

    # An --on-finding command that never returns is killed at --on-finding-timeout, reported,
    # and the command goes on (exit 4: a delivery failed).
    once = write(os.path.join(tmp, "once.sql"),
                 "-- @rule once batch\n"
                 "CREATE VIEW rule_once AS\n"
                 "SELECT trial, step, 'x' AS tensor, 'worker_0' AS worker, 1.0 AS value, 'once' AS message\n"
                 "FROM rule_batch WHERE step = 0;\n")
    hang = "sleep 300 & sleep 300"   # a child of its own too: the whole group is killed
    r, secs = run("rules", "--db", db, "--rule-file", once, "--rule", "once", "--on-finding", hang,
                  "--on-finding-timeout", "1", timeout=120)
    check(r.returncode == 4 and "--on-finding-timeout" in r.stderr and "killed" in r.stderr and secs < 30,
          "rules --on-finding-timeout kills a command that never returns (exit %s, %.1f s, %r)"
          % (r.returncode, secs, r.stderr[-300:]))
    follow_db = os.path.join(tmp, "follow.db")
    r, secs = run("ingest", trial, "--db", follow_db, "--follow", "--interval", "0.1", "--rules", "--rule-file", once,
                  "--rule", "once", "--on-finding", hang, "--on-finding-timeout", "1", "-q", timeout=120)
    check(r.returncode == 4 and "killed" in r.stderr and secs < 40,
          "ingest --follow --on-finding-timeout goes on past a command that never returns (exit %s, %.1f s, %r)"
          % (r.returncode, secs, r.stderr[-300:]))
    r, _ = run("sql", "--db", follow_db, "--csv", "SELECT count(*) FROM steps WHERE trial = 'pt_bad_init'")
    check(r.stdout.split()[-1:] == ["24"], "... and ingested every step: %r" % r.stdout)

    # Output that cannot be written: exit 1 with a message, for every command that prints.
    with open("/dev/full", "w") as full:
        for argv in (["sql", "--db", db, "SELECT * FROM steps"], ["sql", "--db", db, "--json", "SELECT * FROM steps"],
                     ["sql", "--db", db, "--csv", "SELECT * FROM reductions"], ["info", "--db", db],
                     ["rules", "--db", db, "--all"], ["compare", "--db", db, "pt_bad_init", "pt_bad_init"],
                     ["export", "--db", db, "--out", os.path.join(tmp, "export")]):
            r, _ = run(*argv, stdout=full)
            check(r.returncode == 1 and "cannot write" in r.stderr,
                  "%s > /dev/full: exit %s, %r" % (" ".join(argv[:1] + argv[3:4]), r.returncode, r.stderr[-200:]))

    # plot --out a FIFO: refused, never opened (which would wait for a reader for ever).
    fifo = os.path.join(tmp, "chart.svg")
    os.mkfifo(fifo)
    r, secs = run("plot", "--db", db, "--out", fifo, "reduction", "--tensor", "Loss", timeout=30)
    check(r.returncode == 1 and "not a regular file" in r.stderr and secs < 20,
          "plot --out a FIFO is refused (exit %s, %.1f s, %r)" % (r.returncode, secs, r.stderr[-200:]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
