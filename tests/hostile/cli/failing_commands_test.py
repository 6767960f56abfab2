"""A failing command changes nothing (issue 31, item 4): every argument is checked before the
database is created or opened for writing; every command that writes refuses a damaged database
(exit 1, the file byte for byte as before); a database cut short is an error, never a wrong
answer; another program's SQLite file is never taken for a trialdb database.

Usage: failing_commands_test.py TRIALDB FIXTURES"""
import hashlib
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


def run(*argv, timeout=60):
    try:
        return subprocess.run([trialdb, *argv], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, None, "", "killed after %d s" % timeout)


def digest(path):
    """The bytes of a database and of its -wal file, if any."""
    h = hashlib.sha256()
    for p in (path, path + "-wal"):
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


FAILED = (1, 2)   # exit codes of a command that failed: 2 for what CLI11 refuses, else 1


def unchanged(db, argv, want_rc, what, message=None):
    """Runs argv on db and checks the exit code (one of want_rc), the message and that db is byte
    for byte as before."""
    before = digest(db)
    r = run(*argv)
    check(r.returncode in want_rc and (message is None or message in r.stderr),
          "%s: exit %s (want %s) %r" % (what, r.returncode, want_rc, r.stderr[-300:]))
    check(digest(db) == before, "%s: the database is unchanged" % what)


def damage_index_page(db, index="value_by_step"):
    """Gives the root page of an index a page type SQLite has none of: quick_check and
    integrity_check fail, while a command that never reads the index would not notice."""
    c = sqlite3.connect(db)
    page_size = c.execute("PRAGMA page_size").fetchone()[0]
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (index,)).fetchone()[0]
    c.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(b"\x07")
    c = sqlite3.connect(db)
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        c.close()


tmp = tempfile.mkdtemp(prefix="hostile_failing_")
try:
    trial = os.path.join(fixtures, "pt_bad_init")
    db = os.path.join(tmp, "t.db")
    r = run("ingest", trial, "--db", db, "-q")
    check(r.returncode == 0, "ingest the fixture: %r" % r.stderr[-300:])

    # Arguments checked before the database is created: no file is left behind.
    for n, (argv, what) in enumerate(((["--steps", "x"], "a malformed --steps"), (["--steps", "5:2"], "an empty --steps range"),
                       (["--tensors", "(["], "an invalid --tensors regex"),
                       (["--collections", "no_such_collection"], "an unknown --collections name"),
                       (["--rules", "--rule-file", "/dev/zero"], "--rule-file /dev/zero"))):
        new = os.path.join(tmp, "new_%d.db" % n)
        r = run("ingest", trial, "--db", new, "-q", *argv)
        check(r.returncode in FAILED and not os.path.exists(new),
              "ingest with %s creates no database (exit %s, %r)" % (what, r.returncode, r.stderr[-200:]))

    # ... and before an existing one is opened for writing: no phantom trial, nothing written.
    unchanged(db, ["ingest", trial, "--db", db, "--name", "phantom", "--tensors", "(["], FAILED,
              "ingest --tensors '(['", "--tensors")
    unchanged(db, ["ingest", trial, "--db", db, "--name", "phantom", "--steps", "1:x"], FAILED, "ingest --steps 1:x")
    unchanged(db, ["ingest", trial, "--db", db, "--name", "phantom", "--collections", "weights,typo"], FAILED,
              "ingest --collections typo", "'typo'")
    r = run("ingest", trial, "--db", os.path.join(tmp, "sel.db"), "--collections", "weights", "-q")
    check(r.returncode == 0, "ingest --collections of a collection the trial defines: %r" % r.stderr[-200:])
    unchanged(db, ["rename", "--db", db, "--trial", "pt_bad_init", "--to", ""], FAILED, "rename --to ''")
    fifo = os.path.join(tmp, "rule.fifo")
    os.mkfifo(fifo)
    for rule_file in ("/dev/zero", fifo):
        start = time.monotonic()
        unchanged(db, ["rules", "--db", db, "--rule-file", rule_file], FAILED, "rules --rule-file " + rule_file,
                  "not a regular file")
        check(time.monotonic() - start < 20, "rules --rule-file %s does not wait" % rule_file)
        r = run("sql", "--db", db, "--file", rule_file, timeout=20)
        check(r.returncode in FAILED and "not a regular file" in r.stderr,
              "sql --file %s is refused (exit %s, %r)" % (rule_file, r.returncode, r.stderr[-200:]))
    big = os.path.join(tmp, "big.sql")
    with open(big, "wb") as f:
        f.truncate(17 << 20)
    r = run("sql", "--db", db, "--file", big)
    check(r.returncode in FAILED and "MiB" in r.stderr, "sql --file of 17 MiB is refused: %r" % r.stderr[-200:])
    r = subprocess.run("head -c %d /dev/zero | %s sql --db %s -" % (17 << 20, trialdb, db), shell=True,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode in FAILED and "MiB" in r.stderr, "sql - reads at most 16 MiB of standard input: %r" % r.stderr[-200:])

    # A damaged database: every command that writes refuses it before writing; `rules`, which
    # writes only the rule tables (rule_*) and the schema, when one of those is damaged.
    damaged = os.path.join(tmp, "damaged.db")
    shutil.copy(db, damaged)
    verdict = damage_index_page(damaged)
    check(verdict != "ok", "the damage fails integrity_check (%s)" % verdict)
    ruled = os.path.join(tmp, "ruled.db")
    shutil.copy(db, ruled)
    r = run("rules", "--db", ruled)
    check(r.returncode == 0, "rules on the fixture: %r" % r.stderr[-300:])
    ruled_damaged = os.path.join(tmp, "ruled_damaged.db")
    shutil.copy(ruled, ruled_damaged)
    verdict = damage_index_page(ruled_damaged, "sqlite_autoindex_rule_finding_1")
    check(verdict != "ok", "the damage of a rule table fails integrity_check (%s)" % verdict)
    for argv, what in ((["rules", "--db", ruled_damaged], "rules"),
                       (["rules", "--db", ruled_damaged, "--rule", "loss_not_decreasing", "--rerun"], "rules --rule"),
                       (["rm", "--db", damaged, "--trial", "pt_bad_init"], "rm"),
                       (["rename", "--db", damaged, "--trial", "pt_bad_init", "--to", "x"], "rename"),
                       (["sql", "--db", damaged, "--write", "CREATE TABLE t(x)"], "sql --write"),
                       (["ingest", os.path.join(fixtures, "pt_good_init"), "--db", damaged, "-q"], "ingest")):
        unchanged(argv[argv.index("--db") + 1], argv, (1,), what + " on a damaged database", "corrupt")
    # ... while damage outside the rule tables costs `rules` no read of every page: with nothing
    # new to evaluate it answers, and writes nothing into the damaged index.
    shutil.copy(ruled, damaged)
    damage_index_page(damaged)
    r = run("rules", "--db", damaged)
    check(r.returncode == 0 and "0 new findings" in r.stderr,
          "rules with nothing new on a database damaged elsewhere: exit %s, %r" % (r.returncode, r.stderr[-300:]))
    c = sqlite3.connect(damaged)
    check(c.execute("PRAGMA quick_check('rule_finding')").fetchone()[0] == "ok", "the rule tables stay whole")
    c.close()

    # A database cut short by 1,000 bytes: an error, never a wrong answer.
    truncated = os.path.join(tmp, "truncated.db")
    shutil.copy(db, truncated)
    os.truncate(truncated, os.path.getsize(truncated) - 1000)
    for argv in (["sql", "--db", truncated, "SELECT sum(length(value)) FROM tensor_values"], ["info", "--db", truncated],
                 ["rules", "--db", truncated]):
        r = run(*argv)
        check(r.returncode == 1 and "corrupt" in r.stderr and "cut short" in r.stderr,
              "%s on a truncated database: exit %s, %r" % (argv[0], r.returncode, r.stderr[-200:]))

    # Another program's database with a table named schema_version is not trialdb's.
    for ddl in ("CREATE TABLE schema_version(version INTEGER); CREATE TABLE accounts(id, balance);"
                "INSERT INTO accounts VALUES (1, 100);",
                "CREATE TABLE schema_version(version INTEGER); INSERT INTO schema_version VALUES (7);"
                "CREATE TABLE trial(x); CREATE TABLE step(x); CREATE TABLE tensor(x); CREATE TABLE value(x);"
                "PRAGMA application_id = 1234;"):
        other = os.path.join(tmp, "other_%d.db" % len(ddl))
        c = sqlite3.connect(other)
        c.executescript(ddl)
        c.close()
        unchanged(other, ["ingest", trial, "--db", other, "-q"], (1,), "ingest into another program's database",
                  "not a trialdb database")
        r = run("info", "--db", other)
        check(r.returncode == 1 and "not a trialdb database" in r.stderr, "info on another program's database")

    # trialdb databases say so (application_id); one written before that is still recognised.
    c = sqlite3.connect(db)
    check(c.execute("PRAGMA application_id").fetchone()[0] == 0x74726462, "a new database has trialdb's application_id")
    c.execute("PRAGMA application_id = 0")
    c.close()
    r = run("info", "--db", db)
    check(r.returncode == 0, "a database without the application_id is read: %r" % r.stderr[-200:])
    r = run("ingest", os.path.join(fixtures, "pt_good_init"), "--db", db, "-q")
    c = sqlite3.connect(db)
    check(r.returncode == 0 and c.execute("PRAGMA application_id").fetchone()[0] == 0x74726462,
          "writing to it sets the application_id (exit %s)" % r.returncode)
    c.close()
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
