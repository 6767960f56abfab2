#!/usr/bin/python3
"""follow_latency_bench: how long after a step completes on disk its rules are evaluated under
`trialdb ingest --follow --rules` (target: under 0.5 s).

A synthetic trial (`trialdb synth`) is copied into a watched folder step by step, as a training job
writes it: each step's event file, then its index file, one step every BENCH_FOLLOW_STEP_SECONDS.
With one worker, step s is complete once its index file is there (every worker wrote it:
docs/FORMAT.md), so its latency runs from that file's rename into place to the moment a read-only
connection sees every step rule's evaluation of step s recorded (rule_evaluated). The follower polls at its default interval (0.2 s),
as a user runs it. Prints RESULT rows for bench/run (bench/README.md).

usage: follow_latency_bench.py [TRIALDB]   (default: $BENCH_BIN/trialdb; data in $BENCH_DATA)
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

STEPS = int(os.environ.get("BENCH_FOLLOW_STEPS", "40"))
STEP_SECONDS = float(os.environ.get("BENCH_FOLLOW_STEP_SECONDS", "0.5"))
TARGET_SECONDS = 0.5
TRIAL = "follow"


def step_files(trial, step):
    """The event and index files of a step, as synth names them, relative to the trial, in the
    order a job writes them."""
    name = "%012d_worker_0" % step
    return [os.path.join("events", "%012d" % step, name + ".tfevents"),
            os.path.join("index", "000000000", name + ".json")]


def place(src_root, dst_root, rel):
    """Copies a file into the watched trial under a temporary name, then renames it into place, so
    the follower never sees it half-written; returns the time it appeared."""
    dst = os.path.join(dst_root, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(src_root, rel), dst + ".part")
    os.rename(dst + ".part", dst)
    return time.monotonic()


def evaluated_steps(db, rules):
    """The steps every step rule has evaluated (read-only; empty until the runner made its tables)."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
        try:
            rows = con.execute("SELECT step FROM rule_evaluated WHERE trial = ? GROUP BY step HAVING count(*) = ?",
                               (TRIAL, rules)).fetchall()
            return {r[0] for r in rows}
        finally:
            con.close()
    except sqlite3.Error:
        return set()


def step_rule_count(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*) FROM rule_catalog WHERE kind != 'clock'").fetchone()[0]
    finally:
        con.close()


def main():
    trialdb = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("BENCH_BIN", "."), "trialdb")
    work = tempfile.mkdtemp(prefix="follow-", dir=os.environ.get("BENCH_DATA"))
    try:
        src, dst, db = os.path.join(work, "src"), os.path.join(work, TRIAL), os.path.join(work, "follow.db")
        subprocess.run([trialdb, "synth", src, "--steps", str(STEPS), "--tensors", "10", "--elements", "1000"],
                       check=True, capture_output=True)
        os.makedirs(dst)
        for rel in ("collections",):
            shutil.copytree(os.path.join(src, rel), os.path.join(dst, rel))
        follower = subprocess.Popen([trialdb, "ingest", dst, "--db", db, "--name", TRIAL, "--follow", "--rules",
                                     "--quiet", "--idle-timeout", "30"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        completed_at = {}          # step -> when its index file appeared
        seen_at = {}               # step -> when its evaluation was first seen
        give_up_at = [None]        # set once every step is written: how long to wait for the last
        rules = [None]

        def watch():
            while give_up_at[0] is None or (len(seen_at) < len(completed_at) and time.monotonic() < give_up_at[0]):
                if rules[0] is None and os.path.exists(db):
                    try:
                        rules[0] = step_rule_count(db)
                    except sqlite3.Error:
                        pass
                if rules[0]:
                    now = time.monotonic()
                    for s in evaluated_steps(db, rules[0]):
                        seen_at.setdefault(s, now)
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        for step in range(STEPS):
            for rel in step_files(src, step):
                completed_at[step] = place(src, dst, rel)
            time.sleep(STEP_SECONDS)
        give_up_at[0] = time.monotonic() + 10
        watcher.join()
        place(src, dst, "training_job_end.ts")
        follower.wait(timeout=60)
        latencies = sorted(seen_at[s] - completed_at[s] for s in completed_at if s in seen_at)
        missing = len(completed_at) - len(latencies)
        if not latencies or follower.returncode not in (0, 3):
            print("follow_latency_bench: the follower failed (exit %s): %s" % (follower.returncode,
                                                                               follower.stderr.read()[-400:]))
            sys.exit(1)
        median, worst = latencies[len(latencies) // 2], latencies[-1]
        label = "rules under ingest --follow --rules: step complete -> evaluated by all %d step rules" % rules[0]
        print("RESULT %s, median of %d steps|%.0f ms|target %.0f ms|%.2f|< %.1f s|%s" % (
            label, len(latencies), median * 1e3, TARGET_SECONDS * 1e3, median / TARGET_SECONDS, TARGET_SECONDS,
            "yes" if median < TARGET_SECONDS and not missing else "no"))
        print("RESULT %s, worst of %d steps|%.0f ms|target %.0f ms|%.2f|< %.1f s|%s" % (
            label, len(latencies), worst * 1e3, TARGET_SECONDS * 1e3, worst / TARGET_SECONDS, TARGET_SECONDS,
            "yes" if worst < TARGET_SECONDS and not missing else "no"))
        if missing:
            print("follow_latency_bench: %d completed steps were never seen evaluated" % missing)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
