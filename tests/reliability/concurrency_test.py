"""Concurrency: several `trialdb ingest` processes on one database and trial at once, and readers
querying the public views while an ingest runs.

  - Two (and three) concurrent ingests of the same trial both succeed (one waits for the other's
    write transaction); the result equals a single ingest: nothing duplicated, nothing lost.
  - Two concurrent ingests of different trials into one database both land completely.
  - A reader polling every public view during an ingest never gets an error and never sees part
    of a step: every visible step has exactly the rows it has in the finished database.

usage: concurrency_test.py <trialdb>
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def start(trialdb, trial, db, name):
    return subprocess.Popen([trialdb, "ingest", trial, "--db", db, "--name", name, "--quiet", "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(p):
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}: {err.decode()}"


def private_count(db, table, trial=None):
    con = sqlite3.connect(db)
    try:
        cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        where = ""
        if trial is not None:
            tid = con.execute("SELECT trial_id FROM trial WHERE name = ?", (trial,)).fetchone()[0]
            if "trial_id" in cols:
                where = f" WHERE trial_id = {tid}"
            elif table == "value_blob":
                where = f" WHERE value_id IN (SELECT value_id FROM value WHERE trial_id = {tid})"
            elif table == "collection_member":
                where = f" WHERE collection_id IN (SELECT collection_id FROM collection WHERE trial_id = {tid})"
        return con.execute(f"SELECT count(*) FROM {table}{where}").fetchone()[0]
    finally:
        con.close()


def step_summary(con):
    """{step: (values per worker with their total bytes, reduction rows)}: enough to see a
    partially written step (a worker's rows or a tensor missing)."""
    by = {}
    for step, worker, n, size in con.execute(
            "SELECT step, worker, count(*), sum(length(value)) FROM tensor_values GROUP BY step, worker"):
        by.setdefault(step, [[], 0])[0].append((worker, n, size))
    for step, n in con.execute("SELECT step, count(*) FROM reductions GROUP BY step"):
        by.setdefault(step, [[], 0])[1] = n
    return {s: (sorted(v[0]), v[1]) for s, v in by.items()}


def main():
    trialdb = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="trialdb_concurrency_")
    try:
        trial = os.path.join(tmp, "trial")
        r = C.run([trialdb, "synth", trial, "--steps", "80", "--tensors", "12", "--elements", "5000", "--workers", "2"])
        assert r.rc == 0, r
        other = os.path.join(tmp, "other")
        r = C.run([trialdb, "synth", other, "--steps", "40", "--tensors", "6", "--elements", "3000", "--seed", "7"])
        assert r.rc == 0, r
        ref_db = os.path.join(tmp, "ref.db")
        assert C.ingest(trialdb, trial, ref_db, name="t").rc == 0
        assert C.ingest(trialdb, other, ref_db, name="o").rc == 0
        ref = C.dump(ref_db)
        n_index = sum(len(f) for _, _, f in os.walk(os.path.join(trial, "index")))

        # 1. The same trial from two and three processes at once (staggered a little each time).
        for n, delay in ((2, 0.0), (2, 0.05), (3, 0.02)):
            db = os.path.join(tmp, f"same{n}_{delay}.db")
            procs = []
            for _ in range(n):
                procs.append(start(trialdb, trial, db, "t"))
                time.sleep(delay)
            for p in procs:
                finish(p)
            assert C.integrity(db) == "ok"
            got = C.dump(db)
            for view in ("trials", "steps", "tensors", "collections", "tensor_values", "reductions", "ingest_errors"):
                assert got[view] == [r for r in ref[view] if r[0] == "t"], f"{n} concurrent ingests: view {view} differs"
            # The private tables too: no duplicated rows behind the views.
            for table in ("value", "value_blob", "ingested_file", "step_worker", "step", "tensor", "worker",
                          "collection", "collection_member", "trial"):
                assert private_count(db, table) == private_count(ref_db, table, "t"), f"{table} rows differ"
            assert private_count(db, "ingested_file") == n_index
            print(f"ok: {n} concurrent ingests of one trial (stagger {delay}s) equal a single ingest")

        # 2. Two trials into one database at once.
        db = os.path.join(tmp, "two_trials.db")
        a, b = start(trialdb, trial, db, "t"), start(trialdb, other, db, "o")
        finish(a)
        finish(b)
        assert C.integrity(db) == "ok"
        assert C.dump(db) == ref, "two trials ingested at once differ from ingesting them one after the other"
        print("ok: two trials ingested into one database at once")

        # 3. Readers during an ingest of a trial with many small steps, so that the ingester
        #    commits several times (every 256 files), sometimes between the workers of one step.
        many = os.path.join(tmp, "many")
        r = C.run([trialdb, "synth", many, "--steps", "500", "--tensors", "3", "--elements", "400", "--workers", "3"])
        assert r.rc == 0, r
        many_db = os.path.join(tmp, "many_ref.db")
        assert C.ingest(trialdb, many, many_db, name="t").rc == 0
        con = sqlite3.connect(many_db)
        ref_steps = step_summary(con)
        con.close()
        db = os.path.join(tmp, "read.db")
        p = start(trialdb, many, db, "t")
        while not os.path.exists(db):
            time.sleep(0.005)
        stop = threading.Event()
        problems, polls, seen = [], [0], set()

        def reader():
            con = None
            while not stop.is_set():
                try:
                    if con is None:
                        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
                        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'ingest_errors'").fetchone():
                            con.close()
                            con = None
                            continue
                    # One read transaction: the views are read from one snapshot.
                    con.execute("BEGIN")
                    by = step_summary(con)
                    steps = con.execute("SELECT step FROM steps WHERE complete").fetchall()
                    con.execute("SELECT * FROM tensors").fetchall()
                    con.execute("SELECT * FROM collections").fetchall()
                    con.execute("SELECT * FROM trials").fetchall()
                    con.execute("COMMIT")
                    for s, rows in by.items():
                        if rows != ref_steps[s]:
                            problems.append(f"step {s} visible as {rows}, finished: {ref_steps[s]}")
                    if len(steps) < len(by):
                        problems.append("values visible for a step that is not complete")
                    seen.add(len(by))
                    polls[0] += 1
                except sqlite3.Error as e:
                    problems.append(f"reader error: {e}")
                    time.sleep(0.01)

        threads = [threading.Thread(target=reader) for _ in range(2)]
        for t in threads:
            t.start()
        finish(p)
        time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join()
        assert not problems, problems[:5]
        assert C.dump(db) == C.dump(many_db), "the database read during ingest differs from a quiet one"
        assert polls[0] >= 5, f"readers polled only {polls[0]} times"
        assert len(seen) >= 2, f"readers saw only {sorted(seen)} visible steps: no intermediate state was observed"
        print(f"ok: readers polled {polls[0]} times during an ingest, saw {len(seen)} distinct states "
              f"({min(seen)}..{max(seen)} steps), never an error or a partial step")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
