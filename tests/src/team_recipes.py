"""The recipes of docs/COOKBOOK.md and docs/SCALE.md on a team's jobs (cookbook_check.py runs it).

Jobs as real ones are: run-41 ends with an EVAL step (zoo), run-42 has two workers (dist2),
run-43 was ingested with a selection (pt_good_init, --steps :12), and pt_bad_init, which the
cookbook's recipes name. Checked:
- every recipe runs, and its rows for each job equal what it gives on a database holding that
  job alone (a recipe that compares a job with the others' last step, or drops a job, fails);
  a recipe without a trial column that names a job is compared with that job alone;
- SCALE.md's "every job" recipe lists every job that saved gradients;
- SCALE.md's recipes answer the same in DuckDB, over `export --values inline` read through the
  views of `export --ddl duckdb`, as in SQLite.
"""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DUCKDB_SCRIPT = os.path.join(HERE, "..", "duckdb", "duckdb_rows.js")

# (name, fixture, ingest options)
JOBS = [("pt_bad_init", "pt_bad_init", []),
        ("run-41", "zoo", []),
        ("run-42", "dist2", []),
        ("run-43", "pt_good_init", ["--steps", ":12"])]

SCALE_QUERY = re.compile(r"```sql\n((?:WITH|SELECT).*?)```", re.S)


def ingest(trialdb, fixtures, db, jobs):
    for name, fixture, options in jobs:
        p = subprocess.run([trialdb, "ingest", os.path.join(fixtures, fixture), "--db", db, "--name", name,
                            "--quiet"] + options, capture_output=True, text=True)
        if p.returncode not in (0, 4):
            raise RuntimeError("ingest %s: exit %d %s" % (name, p.returncode, p.stderr))
    p = subprocess.run([trialdb, "rules", "--db", db], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("rules: exit %d %s" % (p.returncode, p.stderr))


def sql_rows(trialdb, db, sql):
    """(header, rows) of the query in SQLite, with the extension (trialdb sql --csv)."""
    p = subprocess.run([trialdb, "sql", "--db", db, "--csv", sql], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("exit %d: %s" % (p.returncode, p.stderr.strip()))
    rows = list(csv.reader(io.StringIO(p.stdout)))
    return (rows[0], rows[1:]) if rows else ([], [])


def canonical(v):
    """A SQLite value in duckdb_rows.js's canonical form."""
    if isinstance(v, float):
        return struct.pack("<d", v).hex()
    if isinstance(v, int):
        return str(v)
    return v


def duckdb_rows(statements):
    p = subprocess.run(["node", DUCKDB_SCRIPT] + statements, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("DuckDB: " + p.stderr.strip())
    return [json.loads(line) for line in p.stdout.splitlines()]


def check(trialdb, fixtures, work, cookbook_queries, scale_doc):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    team = os.path.join(work, "team.db")
    ingest(trialdb, fixtures, team, JOBS)
    alone = {}
    for job in JOBS:
        alone[job[0]] = os.path.join(work, job[0] + ".db")
        ingest(trialdb, fixtures, alone[job[0]], [job])
    scale_queries = SCALE_QUERY.findall(scale_doc)
    failures = 0
    for source, queries in (("COOKBOOK.md", cookbook_queries), ("SCALE.md", scale_queries)):
        for i, sql in enumerate(queries):
            what = "%s recipe %d" % (source, i + 1)
            try:
                failures += check_per_job(trialdb, team, alone, sql, what)
            except RuntimeError as e:
                print("FAIL %s on the team's jobs: %s\n%s" % (what, e, sql))
                failures += 1
    if not scale_queries:
        print("FAIL: no recipes in SCALE.md")
        failures += 1
    failures += check_every_job(trialdb, team, scale_queries)
    failures += check_duckdb(trialdb, team, work, scale_queries)
    print("team recipes: %d from COOKBOOK.md, %d from SCALE.md on %d jobs, %d failed"
          % (len(cookbook_queries), len(scale_queries), len(JOBS), failures))
    return failures


def check_per_job(trialdb, team, alone, sql, what):
    header, rows = sql_rows(trialdb, team, sql)
    if "trial" in header:
        col = header.index("trial")
        failures = 0
        for name, db in alone.items():
            _, own = sql_rows(trialdb, db, sql)
            got = [r for r in rows if r[col] == name]
            if got != own:
                print("FAIL %s: job %s's rows among the team's differ from the job alone\n--- team\n%s\n--- alone\n%s\n%s"
                      % (what, name, got[:10], own[:10], sql))
                failures += 1
        return failures
    named = [name for name in alone if "'%s'" % name in sql]
    if len(named) == 1:
        _, own = sql_rows(trialdb, alone[named[0]], sql)
        if rows != own:
            print("FAIL %s: differs from job %s alone\n%s" % (what, named[0], sql))
            return 1
        return 0
    if not rows:
        print("FAIL %s: no rows on the team's jobs\n%s" % (what, sql))
        return 1
    return 0


def connect(trialdb, db):
    """SQLite on db with the trialdb extension of trialdb's build (lib/trialdb beside bin/), which
    the histogram views need."""
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(trialdb))), "lib", "trialdb"))
    return c


def check_every_job(trialdb, team, scale_queries):
    """The recipe "in every job" lists every job that saved gradients."""
    c = connect(trialdb, team)
    try:
        with_gradients = {r[0] for r in c.execute(
            "SELECT DISTINCT r.trial FROM reductions r JOIN collections c USING (trial, tensor) "
            "WHERE c.collection = 'gradients' AND r.reduction = 'mean' AND r.abs")}
        failures = 0
        every = [q for q in scale_queries if "'gradients'" in q]
        for sql in every:
            listed = {r[0] for r in c.execute(sql)}
            if listed != with_gradients:
                print("FAIL SCALE.md vanishing gradients in every job: lists %s, the jobs with gradients are %s"
                      % (sorted(listed), sorted(with_gradients)))
                failures += 1
        if not every:
            print("FAIL: SCALE.md has no recipe over the gradients of every job")
            failures += 1
        return failures
    finally:
        c.close()


def check_duckdb(trialdb, team, work, scale_queries):
    out = os.path.join(work, "export")
    p = subprocess.run([trialdb, "export", "--db", team, "--out", out, "--values", "inline"], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL export: exit %d %s" % (p.returncode, p.stderr))
        return 1
    p = subprocess.run([trialdb, "export", "--out", out, "--ddl", "duckdb", "--values", "inline"],
                       capture_output=True, text=True)
    views = [s for s in p.stdout.split(";\n") if s.strip()]
    c = connect(trialdb, team)
    failures = 0
    try:
        for i, sql in enumerate(scale_queries):
            want = [[canonical(v) for v in r] for r in c.execute(sql)]
            try:
                got = duckdb_rows(views + [sql])
            except RuntimeError as e:
                print("FAIL SCALE.md recipe %d in DuckDB: %s" % (i + 1, e))
                failures += 1
                continue
            if got != want:
                print("FAIL SCALE.md recipe %d: DuckDB over the export answers\n%s\nSQLite answers\n%s\n%s"
                      % (i + 1, got[:10], want[:10], sql))
                failures += 1
            elif not want:
                print("FAIL SCALE.md recipe %d: no rows on the team's jobs" % (i + 1))
                failures += 1
    finally:
        c.close()
    return failures
