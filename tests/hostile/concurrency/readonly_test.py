"""Databases are only written by commands that write (issue 17, E14-E16).

  - reading_never_writes: info, sql, compare, plot and shell leave the database file byte for byte
    (also one in rollback-journal mode, which opening for writing switches to WAL).
  - unprivileged_reader: a 0444 database in a 0555 folder, read by another user (setpriv): works
    while the database is open elsewhere (its -wal/-shm exist), else a clear error; never a write.
  - foreign_and_other_version: a file without the trialdb schema, and a trialdb database of
    another schema version (in rollback-journal mode), are refused by every command, unchanged.
  - not_a_file: --db "" and --db :memory: are refused.
  - sql_read_only: `trialdb sql` refuses writes, ATTACH, VACUUM INTO and writable_schema unless
    --write.
  - corrupt: a damaged database is reported as corrupt with its name; ingest does not write it.

usage: readonly_test.py <trialdb> <fixtures>
"""
import hashlib
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common as C  # noqa: E402

TRIAL = "pt_bad_init"
OTHER_TRIAL = "pt_good_init"
UNPRIVILEGED = "65534"           # nobody
EXIT_ERROR = 1
# The SQLite header's file format bytes: 1 = rollback journal, 2 = WAL.
HEADER_FORMAT_OFFSET, ROLLBACK = 18, 1
# Where the damage goes: pages in the middle of the file, past the schema.
DAMAGE_FRACTION, DAMAGE_BYTES = 0.5, 64 * 1024


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def reading_commands(trialdb, db, tmp):
    return {
        "info": [trialdb, "info", "--db", db],
        "sql": [trialdb, "sql", "--db", db, "SELECT count(*) FROM tensor_values"],
        "compare": [trialdb, "compare", "--db", db, TRIAL, OTHER_TRIAL, "--reduction", "mean"],
        "plot": [trialdb, "plot", "--db", db, "--out", os.path.join(tmp, "p.svg"), "reduction", "--tensor", "^gradient"],
        "shell": [trialdb, "shell", "--db", db, "--", "SELECT count(*) FROM trials"],
    }


def make_db(trialdb, fixtures, db):
    for name in (TRIAL, OTHER_TRIAL):
        r = C.ingest(trialdb, os.path.join(fixtures, name), db)
        check(r.rc == 0, f"ingest {name}: {r}")
    return db


def reading_never_writes(trialdb, fixtures, tmp):
    db = make_db(trialdb, fixtures, os.path.join(tmp, "t.db"))
    # Left in rollback-journal mode (a bulk load killed midway does that): a reader that switched
    # it to WAL would rewrite the header.
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    before = digest(db)
    for name, argv in reading_commands(trialdb, db, tmp).items():
        r = C.run(argv)
        check(r.rc == 0, f"{name}: {r}")
        check(digest(db) == before, f"{name} changed the database file")


def as_nobody(argv):
    return C.run(["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups"] + argv)


def unprivileged_reader(trialdb, fixtures, tmp):
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        print("skip: unprivileged_reader needs root and setpriv")
        return
    os.chmod(tmp, 0o755)
    folder = os.path.join(tmp, "ro")
    os.makedirs(folder)
    db = make_db(trialdb, fixtures, os.path.join(folder, "t.db"))
    os.chmod(db, 0o444)
    os.chmod(folder, 0o555)
    try:
        before = digest(db)
        # Nobody has it open: no -shm, and nobody may create one there.
        r = as_nobody([trialdb, "info", "--db", db])
        check(r.rc == EXIT_ERROR and "-shm" in r.err and db in r.err, f"info without -shm: {r}")
        check(sorted(os.listdir(folder)) == ["t.db"], f"files appeared: {os.listdir(folder)}")
        # Open elsewhere (its owner holds a connection): -wal and -shm exist, readers read.
        owner = sqlite3.connect(db)
        try:
            owner.execute("SELECT count(*) FROM trials").fetchall()
            charts = os.path.join(tmp, "charts")   # where the unprivileged user may write its chart
            os.makedirs(charts)
            os.chmod(charts, 0o777)
            for name, argv in reading_commands(trialdb, db, charts).items():
                r = as_nobody(argv)
                check(r.rc == 0, f"{name} as an unprivileged user: {r}")
        finally:
            owner.close()
        check(digest(db) == before, "an unprivileged reader changed the database")
    finally:
        os.chmod(folder, 0o755)


def foreign_and_other_version(trialdb, fixtures, tmp):
    foreign = os.path.join(tmp, "foreign.db")
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    other = make_db(trialdb, fixtures, os.path.join(tmp, "v4.db"))
    con = sqlite3.connect(other)
    con.execute("UPDATE schema_version SET version = 4")
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    for db, says in ((foreign, "not a trialdb database"), (other, "schema version 4")):
        before = digest(db)
        argvs = dict(reading_commands(trialdb, db, tmp))
        argvs["rules"] = [trialdb, "rules", "--db", db]
        argvs["ingest"] = [trialdb, "ingest", os.path.join(fixtures, TRIAL), "--db", db, "--quiet"]
        argvs["sql --write"] = [trialdb, "sql", "--write", "--db", db, "SELECT 1"]
        for name, argv in argvs.items():
            r = C.run(argv)
            check(r.rc == EXIT_ERROR and says in r.err and db in r.err, f"{name} on {os.path.basename(db)}: {r}")
            check(digest(db) == before, f"{name} changed {os.path.basename(db)}")
        with open(db, "rb") as f:
            check(f.read(HEADER_FORMAT_OFFSET + 1)[HEADER_FORMAT_OFFSET] == ROLLBACK, "the journal mode was switched")


def not_a_file(trialdb, fixtures, tmp):
    for db in ("", ":memory:"):
        for name, argv in reading_commands(trialdb, db, tmp).items():
            r = C.run(argv)
            check(r.rc != 0 and "--db" in r.err, f"{name} --db {db!r}: {r}")
        r = C.run([trialdb, "ingest", os.path.join(fixtures, TRIAL), "--db", db, "--quiet"])
        check(r.rc != 0 and "--db" in r.err, f"ingest --db {db!r}: {r}")
        r = C.run([trialdb, "rules", "--db", db])
        check(r.rc != 0, f"rules --db {db!r}: {r}")


def sql_read_only(trialdb, fixtures, tmp):
    db = make_db(trialdb, fixtures, os.path.join(tmp, "t.db"))
    before = digest(db)
    attached, vacuumed = os.path.join(tmp, "attached.db"), os.path.join(tmp, "vacuumed.db")
    for query in ("DELETE FROM ingest_error", "CREATE TABLE t(x)", f"ATTACH '{attached}' AS a",
                  f"VACUUM INTO '{vacuumed}'", "PRAGMA writable_schema=1"):
        r = C.run([trialdb, "sql", "--db", db, query])
        check(r.rc == EXIT_ERROR, f"sql {query!r} without --write: {r}")
    check(digest(db) == before, "sql without --write changed the database")
    check(not os.path.exists(attached) and not os.path.exists(vacuumed), "sql without --write created a file")
    r = C.run([trialdb, "sql", "--write", "--db", db, "CREATE TABLE notes(x); SELECT count(*) FROM notes"])
    check(r.rc == 0, f"sql --write: {r}")
    r = C.run([trialdb, "sql", "--write", "--db", db, f"VACUUM INTO '{vacuumed}'"])
    check(r.rc == 0 and os.path.exists(vacuumed), f"sql --write VACUUM INTO: {r}")


def corrupt(trialdb, fixtures, tmp):
    db = make_db(trialdb, fixtures, os.path.join(tmp, "t.db"))
    size = os.path.getsize(db)
    offset = int(size * DAMAGE_FRACTION)
    with open(db, "r+b") as f:
        f.seek(offset)
        f.write(b"\xa5" * DAMAGE_BYTES)
    before = digest(db)
    r = C.run([trialdb, "sql", "--db", db, "SELECT count(*), sum(length(value)) FROM tensor_values"])
    check(r.rc == EXIT_ERROR and f"{db}: the database is corrupt" in r.err, f"sql on a corrupt database: {r}")
    r = C.run([trialdb, "ingest", os.path.join(fixtures, TRIAL), "--db", db, "--quiet", "--name", "again"])
    check(r.rc == EXIT_ERROR and f"{db}: the database is corrupt" in r.err, f"ingest into a corrupt database: {r}")
    check(digest(db) == before, "ingest wrote into a corrupt database")


def main():
    trialdb, fixtures = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for test in (reading_never_writes, unprivileged_reader, foreign_and_other_version, not_a_file, sql_read_only,
                 corrupt):
        tmp = tempfile.mkdtemp(prefix="trialdb-hostile-readonly-")
        try:
            test(trialdb, fixtures, tmp)
            print(f"ok: {test.__name__}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
