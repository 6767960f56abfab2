"""Concurrent use and crashes never change the rules' answers (issue 17, D10-D12).

  - concurrent_runners: four `trialdb rules` at once on one database record exactly the findings
    and the rule state (every rule_* table) of one runner.
  - late_step: a step whose files arrive after later steps completed is still evaluated.
  - owed_evaluation: an `ingest --rules` killed after its commit (the ingest ran, the rules did
    not): the next `ingest --rules`, with nothing new to ingest, does the evaluation owed.
  - at_least_once: an --on-finding command that fails, or whose trialdb is killed while it runs,
    is run again for every finding it did not confirm by the next run, and never again after.

usage: rules_test.py <trialdb>
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common as C  # noqa: E402

RUNNERS = 4
ROUNDS = 3
STEPS = 400            # several batches of the runner (64 steps per transaction)
LATE_STEP = 40
# Every tensor is a finding at every step: many findings, from a built-in rule.
FIRE_ALWAYS = ["--param", "tensor_variance.tensor_regex=.*", "--param", "tensor_variance.min_threshold=1e9"]
# A custom rule with one finding per evaluated step: which steps were evaluated, exactly.
EVERY_STEP_RULE = """-- @rule every_step batch
DROP VIEW IF EXISTS rule_every_step;
CREATE VIEW rule_every_step AS
SELECT trial, step, 'step' AS tensor, min(worker) AS worker, NULL AS value, 'evaluated' AS message
FROM rule_now GROUP BY trial, step;
"""
# Columns that differ between equal runs (times).
VOLATILE = {"found_at", "progress_at", "now"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def trialdb_ok(argv, ok=(0,)):
    r = C.run(argv)
    check(r.rc in ok, f"{argv[1:3]}: {r}")
    return r


def synth(trialdb, out, steps):
    trialdb_ok([trialdb, "synth", out, "--steps", str(steps), "--tensors", "3", "--elements", "16"])
    return out


def findings(db):
    con = sqlite3.connect(db)
    try:
        return sorted(con.execute("SELECT trial, rule, step, tensor, worker, value, message FROM rule_findings"))
    finally:
        con.close()


def rule_state(db):
    """Every rule_* table's rows, without the columns that hold times."""
    con = sqlite3.connect(db)
    try:
        out = {}
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rule_%'")]
        for t in sorted(tables):
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({t})") if r[1] not in VOLATILE and r[1] != "finding_id"]
            if cols:
                out[t] = sorted(map(repr, con.execute(f"SELECT {', '.join(cols)} FROM {t}")))
        return out
    finally:
        con.close()


def concurrent_runners(trialdb, tmp):
    trial = synth(trialdb, os.path.join(tmp, "trial"), STEPS)
    single = os.path.join(tmp, "single.db")
    trialdb_ok([trialdb, "ingest", trial, "--db", single, "--quiet"])
    trialdb_ok([trialdb, "rules", "--db", single] + FIRE_ALWAYS)
    check(len(findings(single)) > STEPS, "the rules found too little to compare")
    # Several rounds: how the runners interleave is up to the scheduler.
    for round in range(ROUNDS):
        shared = os.path.join(tmp, f"shared{round}.db")
        trialdb_ok([trialdb, "ingest", trial, "--db", shared, "--quiet"])
        procs = [subprocess.Popen([trialdb, "rules", "--db", shared] + FIRE_ALWAYS, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for _ in range(RUNNERS)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            check(p.returncode == 0, f"concurrent rules exited {p.returncode}: {err.decode()}")
        check(findings(shared) == findings(single), "concurrent runners recorded other findings than one runner")
        a, b = rule_state(single), rule_state(shared)
        for t in a:
            check(a[t] == b.get(t), f"concurrent runners left other state in {t} than one runner")


def late_step(trialdb, tmp):
    trial = synth(trialdb, os.path.join(tmp, "late"), LATE_STEP * 2)
    rule_file = os.path.join(tmp, "every_step.sql")
    with open(rule_file, "w") as f:
        f.write(EVERY_STEP_RULE)
    # The step's event file half written (a live job): the ingest waits for it while the later
    # steps complete, and reads it once whole.
    event = C.event_path(trial, LATE_STEP)
    with open(event, "rb") as f:
        whole = f.read()
    with open(event, "wb") as f:
        f.write(whole[:len(whole) // 2])
    end_marker = os.path.join(trial, "training_job_end.ts")
    os.rename(end_marker, end_marker + ".later")
    db = os.path.join(tmp, "late.db")
    rules = [trialdb, "rules", "--db", db, "--rule-file", rule_file, "--rule", "every_step"]
    trialdb_ok([trialdb, "ingest", trial, "--db", db, "--quiet"])
    trialdb_ok(rules)
    with open(event, "wb") as f:
        f.write(whole)
    os.rename(end_marker + ".later", end_marker)
    trialdb_ok([trialdb, "ingest", trial, "--db", db, "--quiet"])
    trialdb_ok(rules)
    con = sqlite3.connect(db)
    complete = [r[0] for r in con.execute("SELECT step FROM steps WHERE complete ORDER BY step")]
    con.close()
    check(LATE_STEP in complete, f"step {LATE_STEP} did not become complete: the test's premise broke")
    evaluated = sorted(r[2] for r in findings(db))
    check(evaluated == complete, f"steps evaluated {evaluated} are not the complete steps {complete}")


def owed_evaluation(trialdb, tmp):
    trial = synth(trialdb, os.path.join(tmp, "owed"), LATE_STEP)
    clean, owed = os.path.join(tmp, "clean.db"), os.path.join(tmp, "owed.db")
    trialdb_ok([trialdb, "ingest", trial, "--db", clean, "--quiet", "--rules"] + FIRE_ALWAYS)
    # Killed after its last commit: the steps are in, no rule ran.
    trialdb_ok([trialdb, "ingest", trial, "--db", owed, "--quiet"])
    trialdb_ok([trialdb, "ingest", trial, "--db", owed, "--quiet", "--rules"] + FIRE_ALWAYS)
    check(findings(clean), "the clean ingest found nothing to compare")
    check(findings(owed) == findings(clean), "the evaluation owed by a killed ingest --rules was not done")


def delivered(log):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return sorted(f.read().splitlines())


def at_least_once(trialdb, tmp):
    trial = synth(trialdb, os.path.join(tmp, "deliver"), LATE_STEP)
    log = os.path.join(tmp, "delivered.log")
    record = f'echo "$TRIALDB_TRIAL $TRIALDB_RULE $TRIALDB_STEP $TRIALDB_TENSOR" >> {log}'
    # The command of the third finding kills its trialdb (the parent of sh) after two confirmed.
    counter = os.path.join(tmp, "count")
    kill_third = f'n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; ' \
                 f'if [ $n -ge 3 ]; then kill -9 $PPID; sleep 1; exit 1; fi; {record}'
    for cmd in ("rules", "ingest"):
        db = os.path.join(tmp, f"deliver_{cmd}.db")
        for p in (log, counter):
            if os.path.exists(p):
                os.remove(p)
        base = [trialdb, "ingest", trial, "--db", db, "--quiet", "--rules"] if cmd == "ingest" else [trialdb, "rules", "--db", db]
        if cmd == "rules":
            trialdb_ok([trialdb, "ingest", trial, "--db", db, "--quiet"])
            # A failing command: nothing confirmed, exit 4, everything retried later.
            trialdb_ok(base + FIRE_ALWAYS + ["--on-finding", "exit 1"], ok=(4,))
        r = C.run(base + FIRE_ALWAYS + ["--on-finding", kill_third])
        check(r.rc in (-9, 128 + 9), f"{cmd}: the command did not kill trialdb: {r}")
        check(len(delivered(log)) == 2, f"{cmd}: expected 2 deliveries before the kill, got {delivered(log)}")
        trialdb_ok(base + FIRE_ALWAYS + ["--on-finding", record])
        want = sorted(f"{t} {rule} {step} {tensor}" for t, rule, step, tensor, *_ in findings(db))
        check(len(want) > 3, f"{cmd}: too few findings to test delivery")
        check(set(delivered(log)) == set(want), f"{cmd}: not every finding was delivered after the kill")
        before = delivered(log)
        trialdb_ok(base + FIRE_ALWAYS + ["--on-finding", record])
        check(delivered(log) == before, f"{cmd}: confirmed findings were delivered again")


def main():
    trialdb = os.path.abspath(sys.argv[1])
    for test in (concurrent_runners, late_step, owed_evaluation, at_least_once):
        tmp = tempfile.mkdtemp(prefix="trialdb-hostile-rules-")
        try:
            test(trialdb, tmp)
            print(f"ok: {test.__name__}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
