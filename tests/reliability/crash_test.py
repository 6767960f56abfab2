"""Crash safety: `trialdb ingest` is killed with SIGKILL at random moments, then run again.

After every kill the database passes PRAGMA integrity_check and shows only whole steps: every
complete step visible in tensor_values / reductions equals the same step of an uninterrupted
ingest. After the final re-run, every public view equals the uninterrupted ingest.

usage: crash_test.py <trialdb> [kills=24] [seed]
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402


def schema_objects(db):
    c = C.connect(db)
    try:
        return c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    finally:
        c.close()


def main():
    trialdb = os.path.abspath(sys.argv[1])
    kills_wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(time.time())
    rng = random.Random(seed)
    print(f"seed {seed}")
    tmp = tempfile.mkdtemp(prefix="trialdb_crash_")
    try:
        trial = os.path.join(tmp, "trial")
        # Two workers, so steps complete only when both files are in: kills can land between them.
        r = C.run([trialdb, "synth", trial, "--steps", "120", "--tensors", "12", "--elements", "6000",
                   "--workers", "2"])
        assert r.rc == 0, r
        ref_db = os.path.join(tmp, "ref.db")
        t0 = time.monotonic()
        r = C.ingest(trialdb, trial, ref_db, name="t")
        full = time.monotonic() - t0
        assert r.rc == 0, r
        ref = C.dump(ref_db)
        ref_steps = C.rows_by_step(ref_db, "t")
        ref_objects = schema_objects(ref_db)
        print(f"uninterrupted ingest: {full:.2f} s, {len(ref['tensor_values'])} values")

        kills = rounds = 0
        db = None
        while kills < kills_wanted:
            if db is None:   # a fresh database every few kills, so early phases get killed too
                rounds += 1
                db = os.path.join(tmp, f"crash{rounds}.db")
                kills_this_db = 0
            p = subprocess.Popen([trialdb, "ingest", trial, "--db", db, "--name", "t", "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(rng.uniform(0, full * 0.8))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
                kills_this_db += 1
            p.communicate()
            if p.returncode not in (0, -signal.SIGKILL):
                raise AssertionError(f"ingest exited {p.returncode}")
            ok = C.integrity(db)
            assert ok == "ok", f"integrity_check after kill {kills}: {ok}"
            # The schema is created atomically: all of it or (killed while creating it) none.
            objects = schema_objects(db)
            assert objects in (0, ref_objects), f"kill {kills}: {objects} of {ref_objects} schema objects"
            if objects == 0:
                continue
            # Only whole steps are visible, each equal to the uninterrupted ingest.
            for step, rows in C.rows_by_step(db, "t").items():
                assert rows == ref_steps[step], f"kill {kills}: step {step} visible but differs (partial?)"
            if p.returncode == 0 or kills_this_db >= 6:
                r = C.ingest(trialdb, trial, db, name="t")
                assert r.rc == 0, r
                assert C.integrity(db) == "ok"
                got = C.dump(db)
                for view in ref:
                    assert got[view] == ref[view], f"round {rounds}: view {view} differs from an uninterrupted ingest"
                db = None
        if db is not None:
            r = C.ingest(trialdb, trial, db, name="t")
            assert r.rc == 0, r
            assert C.integrity(db) == "ok"
            assert C.dump(db) == ref, "final database differs from an uninterrupted ingest"
        print(f"ok: {kills} SIGKILLs over {rounds} databases; integrity ok after each, final views equal")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
