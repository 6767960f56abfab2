"""Sequences of operations: a seeded random walk over a few jobs being written, checking after
every operation that the database, its findings and its export are what a fresh start would give.

The jobs are folders this test writes step by step from a few whole trials (two written by
`trialdb synth`, one of them with two workers; the real fixtures dist2, two workers, and
core_dtypes, GLOBAL/PREDICT modes and gaps between steps): a "landing unit" is one worker's event
file of one step and then its index file; a unit may be held back and land after later steps
(a late file); the end marker lands once every unit is in. Operations: land, land late, end,
ingest (random --steps A:B, --tensors REGEX, --collections, --values none|all, --rules), rm,
rename, ingest of another job under a name used before, `rules` with random parameters,
`export` with random --values, `ingest --follow --rules` on a job being written with kills and
restarts of the follower, and SIGKILL of any of these after a random delay (then the same
command runs again and must succeed: "the next one repairs").

Invariants, checked after every operation (trial by trial, through every public view):
(a) The views of each trial equal those of a shadow database into which the same successful
    ingests (same selections, same value modes, same files on disk: the shadow ingest runs
    right after the real one) were made one after another, alone, never killed, never beside
    other trials, renames or removals. That is sound for any mix of selections: both databases
    saw the same disk at the same moments. It cannot judge what a union of selections means;
    (a') does: after an ingest without a selection and with --values all (or with the default
    --values when no ingest of the trial ever used none) the trial's views equal one fresh
    whole ingest of what is on disk now, whatever selective ingests came before.
    The database holds exactly the trials the walk expects (removed ones are gone, renamed
    ones under their new name) and passes PRAGMA integrity_check after every kill.
(b) After every operation that evaluates rules (rules, ingest --rules, --follow --rules) the
    findings equal those of a copy of the database evaluated again from the first step
    (`rules --rerun` with the same arguments; `--trial NAME` after an ingest, which evaluates
    the trial it ingests).
(c) After every export the dataset equals, table by table and row for row (DuckDB over both,
    EXCEPT ALL both ways), a fresh export of the database into an empty folder.
(d) Every exit code is the one the operation should give (0; 4 or 1 where rules that read values
    fail, as documented, on values ingested with --values none; a refusal, 1 or 2, for an ingest
    under a name another job holds or a rename onto a name in use, and then nothing changed; a
    rerun of a killed rm/rename that had already committed may say the trial is gone).
(e) `info --tensors`, which reads the tensors' summary the writers keep, equals the aggregate over
    the public views it stands for (tests/common/tensor_listing.sql), for every trial.

usage: sequence_test.py TRIALDB FIXTURES [--extension PATH] [--seeds S1,S2,...] [--steps N]
--extension: the trialdb SQL extension the histogram views need (default: lib/trialdb of
TRIALDB's build folder).
Environment (for long runs, e.g. bench/ or by hand): SEQUENCE_SEEDS, SEQUENCE_STEPS, and
SEQUENCE_KEEP=1 to keep the work folder of a failing seed.
Seeds that ever failed stay in REGRESSION_SEEDS with what they found.
"""
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DUCKDB_SCRIPT = os.path.join(HERE, "..", "duckdb", "duckdb_rows.js")

# Seeds that failed, run in CI before the default one: (seed, operations, what it found).
REGRESSION_SEEDS = [
    (1, 40, "(a) op 21: `ingest --follow --rules` missed worker_1's file of step 3, which landed "
            "after steps 4 and 5 completed (the listing started after the last complete step); "
            "(c) op 13 on: `export --values none` after `--values inline` keeps tensor_values "
            "and value_locations; after rename/rm the old partitions stay"),
]
DEFAULT_SEEDS = [2]   # (c) op 155 on: a re-ingested name and late steps leave the export stale
DEFAULT_STEPS = 220

VIEWS = ["trials", "steps", "tensors", "collections", "tensor_values", "reductions", "distributions",
         "histograms", "histogram_buckets", "value_locations", "workers", "collection_definitions"]
NAMES = ["a", "b", "c", "debug-output"]
EXPORT_VALUES = ["none", "pointers", "inline"]
REFUSED = (1, 2)   # exit codes of a refusal: failed, or a command line naming what cannot be
# Rule parameters with values that make findings come and go on small trials.
RULE_PARAMS = {
    "loss_not_decreasing": [("num_steps", ["1", "2", "3"]), ("diff_percent", ["0", "5", "50"])],
    "weight_update_ratio": [("large_threshold", ["1", "10"]), ("small_threshold", ["1e-8", "0.001"])],
    "exploding_tensor": [("only_nan", ["true", "false"])],
    "vanishing_gradient": [("threshold", ["1e-7", "0.01"])],
    "all_zero": [("threshold", ["10", "50", "100"])],
}


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


# ---------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------

class Cli:
    def __init__(self, trialdb, log):
        self.trialdb, self.log = trialdb, log
        self.durations = {}

    def start(self, args):
        return subprocess.Popen([self.trialdb] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def run(self, args, kill_rng=None):
        """Runs trialdb args; with kill_rng, SIGKILLs it after a random part of the time this
        command usually takes. Returns (exit code, stderr); -9 when killed."""
        kind = args[0]
        t0 = time.monotonic()
        p = self.start(args)
        if kill_rng is not None:
            usual = self.durations.get(kind, 0.05)
            try:
                p.wait(timeout=kill_rng.uniform(0, usual * 1.2))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Failure(f"{' '.join(args)} did not finish in 120 s")
        if p.returncode != -signal.SIGKILL:
            self.durations[kind] = 0.7 * self.durations.get(kind, time.monotonic() - t0) + 0.3 * (time.monotonic() - t0)
        err = err.decode(errors="replace").strip()
        self.log(f"  $ trialdb {' '.join(args)} -> {p.returncode}" + (f" [{err[-300:]}]" if err else ""))
        return p.returncode, err

    def ok(self, args, codes=(0,)):
        rc, err = self.run(args)
        check(rc in codes or needs_bytes(rc, err), f"`trialdb {' '.join(args)}` exited {rc} (expected {codes}): {err}")
        return err


def needs_bytes(rc, err):
    """Rules that read values fail, as documented, on values ingested with --values none: exit 4
    from ingest --rules (finished with errors), 1 from rules, every error saying so."""
    lines = [line for line in err.splitlines() if "rule " in line and " on trial " in line
             and not line.endswith("its findings from before are kept")]   # what a failed rerun adds
    return rc in (1, 4) and bool(lines) and all("bytes were not stored" in line for line in lines)


def integrity(db):
    c = sqlite3.connect(db, timeout=30)
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        c.close()


def copy_db(db, to):
    src = sqlite3.connect(db, timeout=30)
    dst = sqlite3.connect(to)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def remove_db(db):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


# ---------------------------------------------------------------------------------------------
# Reading databases and exports
# ---------------------------------------------------------------------------------------------

def rows_key(row):
    return [(x is None, type(x).__name__, x if x is not None else 0) for x in row]


EXTENSION = None   # main() sets it: the trialdb SQL extension, for the histogram views


def trial_views(db, trial):
    """{view: sorted rows of the trial, the trial column dropped}."""
    if not os.path.exists(db):
        return {}
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    c.enable_load_extension(True)
    c.load_extension(EXTENSION)
    try:
        out = {}
        for v in VIEWS:
            rows = [r[1:] for r in c.execute(f"SELECT * FROM {v} WHERE trial = ?", (trial,))]
            out[v] = sorted(rows, key=rows_key)
        return out
    finally:
        c.close()


def trial_names(db):
    if not os.path.exists(db):
        return set()
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {r[0] for r in c.execute("SELECT trial FROM trials")}
    except sqlite3.OperationalError:   # a database killed before its schema was created
        return set()
    finally:
        c.close()


def findings(db):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return sorted(c.execute("SELECT * FROM rule_findings"), key=rows_key)
    finally:
        c.close()


with open(os.path.join(HERE, "..", "common", "tensor_listing.sql")) as f:
    TENSOR_LISTING = f.read()


def tensor_listing_difference(trialdb, db):
    """None when `info --tensors` equals the aggregate over the views it stands for, else what differs."""
    if not trial_names(db):
        return None
    p = subprocess.run([trialdb, "info", "--db", db, "--tensors", "--json"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return f"info --tensors exited {p.returncode}: {p.stderr.strip()}"
    got = json.loads(p.stdout)
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    c.row_factory = sqlite3.Row
    try:
        want = [dict(r) for r in c.execute(TENSOR_LISTING)]
    finally:
        c.close()
    if got == want:
        return None
    return f"{len(got)} tensors, the views {len(want)}; first differences {[(g, w) for g, w in zip(got, want) if g != w][:3]!r:.600}"


def first_difference(got, want):
    for v in want:
        g, w = got.get(v, []), want[v]
        if g != w:
            extra = [r for r in g if r not in w][:3]
            missing = [r for r in w if r not in g][:3]
            return f"{v}: {len(g)} rows, expected {len(w)}; extra {extra!r:.600} missing {missing!r:.600}"
    return None


def parquet_files(out):
    """{table: number of Parquet files} of an export folder."""
    tables = {}
    if os.path.isdir(out):
        for table in sorted(os.listdir(out)):
            path = os.path.join(out, table)
            if os.path.isdir(path):
                n = sum(f.endswith(".parquet") for _, _, fs in os.walk(path) for f in fs)
                if n:
                    tables[table] = n
    return tables


def duckdb(statements):
    p = subprocess.run(["node", DUCKDB_SCRIPT] + statements, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise Failure(f"DuckDB: {p.stderr.strip()}")
    return [json.loads(line) for line in p.stdout.splitlines()]


def dataset(out, table):
    return (f"read_parquet('{out}/{table}/*/*.parquet', hive_partitioning = true, "
            "hive_types = {'trial': VARCHAR}, union_by_name = true)")


def export_difference(got, want):
    """None when the two export folders hold the same rows in every table, else what differs."""
    got_tables, want_tables = parquet_files(got), parquet_files(want)
    parts, tables = [], sorted(set(got_tables) | set(want_tables))
    for t in tables:
        if t in got_tables and t in want_tables:
            g, w = dataset(got, t), dataset(want, t)
            parts.append(f"SELECT '{t}', (SELECT count(*) FROM {g}), (SELECT count(*) FROM {w}), "
                         f"(SELECT count(*) FROM (SELECT * FROM {g} EXCEPT ALL SELECT * FROM {w})), "
                         f"(SELECT count(*) FROM (SELECT * FROM {w} EXCEPT ALL SELECT * FROM {g}))")
        else:
            d = dataset(got, t) if t in got_tables else dataset(want, t)
            n = f"(SELECT count(*) FROM {d})"
            parts.append(f"SELECT '{t}', {n if t in got_tables else 0}, {0 if t in got_tables else n}, "
                         f"{n if t in got_tables else 0}, {0 if t in got_tables else n}")
    if not parts:
        return None
    problems = []
    for table, n_got, n_want, extra, missing in duckdb([" UNION ALL ".join(parts)]):
        if extra != "0" or missing != "0":
            problems.append(f"{table}: {n_got} rows exported, a fresh export has {n_want} "
                            f"({extra} not in the fresh one, {missing} missing)")
    return "; ".join(problems) or None


# ---------------------------------------------------------------------------------------------
# Jobs being written
# ---------------------------------------------------------------------------------------------

def step_of(name):
    m = re.match(r"(\d{12})_(.*)\.(json|tfevents)$", name)
    return (int(m.group(1)), m.group(2)) if m else None


class Master:
    """A whole trial the jobs are written from: its landing units in step order."""

    def __init__(self, path, cli, work):
        self.path = path
        self.units = {}            # (step, worker) -> [event file, index file] (relative)
        self.static = []           # collections files: land first
        for root, _, files in os.walk(path):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), path)
                if f == "training_job_end.ts":
                    continue
                key = step_of(f)
                if key is None:
                    self.static.append(rel)
                else:
                    self.units.setdefault(key, []).append(rel)
        for files in self.units.values():
            files.sort(key=lambda rel: rel.endswith(".json"))   # the event file, then its index
        self.order = sorted(self.units)
        db = os.path.join(work, "master.db")
        remove_db(db)
        cli.ok(["ingest", path, "--db", db, "--name", "m", "--quiet"])
        c = sqlite3.connect(db)
        self.tensors = [r[0] for r in c.execute("SELECT tensor FROM tensors WHERE trial = 'm' ORDER BY 1")]
        self.collections = [r[0] for r in c.execute(
            "SELECT DISTINCT collection FROM collections WHERE trial = 'm' ORDER BY 1")]
        self.steps = [r[0] for r in c.execute("SELECT step FROM steps WHERE trial = 'm' ORDER BY 1")]
        c.close()
        remove_db(db)


class Job:
    """A job folder being written from a master."""

    def __init__(self, master, path):
        self.master, self.path = master, path
        self.next = 0              # index into master.order of the next unit to land
        self.late = []             # units held back
        self.ended = False
        for rel in master.static:
            self._copy(rel)

    def _copy(self, rel):
        src, dst = os.path.join(self.master.path, rel), os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst + ".tmp")
        os.rename(dst + ".tmp", dst)

    def land(self, unit):
        for rel in self.master.units[unit]:
            self._copy(rel)

    def land_next(self, rng, hold_back=True):
        """Lands the next unit, or holds it back for later; False when none is left."""
        if self.next >= len(self.master.order):
            return False
        unit = self.master.order[self.next]
        self.next += 1
        if hold_back and rng.random() < 0.2:
            self.late.append(unit)
        else:
            self.land(unit)
        return True

    def land_late(self, rng):
        if not self.late:
            return False
        self.land(self.late.pop(rng.randrange(len(self.late))))
        return True

    def all_landed(self):
        return self.next >= len(self.master.order) and not self.late

    def end(self):
        with open(os.path.join(self.path, "training_job_end.ts"), "w") as f:
            f.write("0\n")
        self.ended = True


# ---------------------------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------------------------

class Trial:
    """What the walk knows of a trial in the database."""

    def __init__(self, job, shadow):
        self.job, self.shadow = job, shadow
        self.values_none_ever = False   # some ingest of it used --values none (even a killed one)


class Walk:
    def __init__(self, seed, steps, cli, masters, work, log):
        self.rng = random.Random(seed)
        self.seed, self.steps, self.cli, self.masters, self.work, self.log = seed, steps, cli, masters, work, log
        self.db = os.path.join(work, "trials.db")
        self.export_dir = os.path.join(work, "export")
        self.jobs = []
        self.trials = {}                # name -> Trial
        self.rules_args = []            # the last `rules` parameters (they are stored)
        self.counter = 0
        self.export_failures = []       # (op number, what differed): invariant (c)
        self.seconds = {}               # operation kind -> seconds spent in it and its checks

    def fresh_path(self, kind):
        self.counter += 1
        return os.path.join(self.work, f"{kind}{self.counter}")

    # --- operations ---------------------------------------------------------------------------

    def op_new_job(self):
        if len(self.jobs) >= 6:
            return self.op_land()
        job = Job(self.rng.choice(self.masters), self.fresh_path("job"))
        job.land_next(self.rng, hold_back=False)
        self.jobs.append(job)
        return f"new job {job.path} from {os.path.basename(job.master.path)}"

    def open_jobs(self):
        return [j for j in self.jobs if not j.ended]

    def op_land(self):
        jobs = [j for j in self.open_jobs() if j.next < len(j.master.order)]
        if not jobs:
            return self.op_land_late()
        job = self.rng.choice(jobs)
        for _ in range(self.rng.randint(1, 3)):
            job.land_next(self.rng)
        return f"land {job.path} up to unit {job.next} (late: {job.late})"

    def op_land_late(self):
        jobs = [j for j in self.jobs if j.late]
        if not jobs:
            return self.op_end()
        job = self.rng.choice(jobs)
        job.land_late(self.rng)
        return f"land late in {job.path} (still late: {job.late})"

    def op_end(self):
        jobs = [j for j in self.open_jobs() if j.all_landed()]
        if not jobs:
            return None
        job = self.rng.choice(jobs)
        job.end()
        return f"end {job.path}"

    def name_of(self, job):
        for name, t in self.trials.items():
            if t.job is job:
                return name
        return None

    def random_selection(self, master):
        args = []
        if self.rng.random() < 0.5:
            steps = master.steps or [0]
            a = self.rng.choice(steps + [None])
            b = self.rng.choice([s + 1 for s in steps if a is None or s + 1 > a] + [None])
            if a is not None or b is not None:
                args += ["--steps", f"{'' if a is None else a}:{'' if b is None else b}"]
        if self.rng.random() < 0.35:
            tensor = self.rng.choice(master.tensors)
            part = re.escape(tensor[self.rng.randrange(len(tensor)):][:6]) or "."
            args += ["--tensors", part]
        if self.rng.random() < 0.25 and master.collections:
            args += ["--collections", ",".join(self.rng.sample(master.collections,
                                                                self.rng.randint(1, min(2, len(master.collections)))))]
        return args

    def op_ingest(self):
        jobs = [j for j in self.jobs if j.next > 0]
        job = self.rng.choice(jobs)
        name = self.name_of(job)
        if name is None or self.rng.random() < 0.15:
            name = self.rng.choice(NAMES)
        selection = self.random_selection(job.master) if self.rng.random() < 0.6 else []
        values = self.rng.choice([[], [], ["--values", "none"], ["--values", "all"]])
        rules = ["--rules"] if self.rng.random() < 0.2 else []
        args = [job.path, "--name", name, "--quiet"] + selection + values + rules
        holder = self.trials.get(name)
        other_name = self.name_of(job)
        if holder is not None and holder.job is not job:
            rc, err = self.cli.run(["ingest", "--db", self.db] + args)
            check(rc in REFUSED, f"ingest of {job.path} as {name}, held by {holder.job.path}: exit {rc} {err}")
            return f"ingest {job.path} as {name}: refused, the name is {holder.job.path}'s"
        if other_name is not None and other_name != name:
            # The same folder under a second name: whatever trialdb answers, the walk keeps one
            # name per job, so it is not tried.
            args[args.index("--name") + 1] = name = other_name
        if "--values" in args and args[args.index("--values") + 1] == "none":
            self.trial_for(name, job).values_none_ever = True
        killed = self.ok_maybe_killed(["ingest", "--db", self.db] + args)
        trial = self.trial_for(name, job)
        self.shadow_ingest(trial, args)
        whole = not selection and (values == ["--values", "all"] or not trial.values_none_ever)
        if values == ["--values", "all"] and not selection:
            trial.values_none_ever = False
        if whole:
            self.check_whole(name, job)
        if rules:
            self.check_rules(["--trial", name])
        return f"ingest {' '.join(args)}" + (" (killed first)" if killed else "")

    def trial_for(self, name, job):
        if name not in self.trials:
            self.trials[name] = Trial(job, self.fresh_path("shadow") + ".db")
        return self.trials[name]

    def shadow_ingest(self, trial, args):
        shadow_args = list(args)
        shadow_args[shadow_args.index("--name") + 1] = "shadow"
        if "--rules" in shadow_args:
            shadow_args.remove("--rules")
        self.cli.ok(["ingest", "--db", trial.shadow] + shadow_args)

    def run_maybe_killed(self, argv):
        """Runs argv, one time in five SIGKILLed at a random moment and then run again (after an
        integrity check): "the next one repairs". Returns (killed, exit code, stderr) of the run
        that finished."""
        if self.rng.random() < 0.2:
            rc, err = self.cli.run(argv, kill_rng=self.rng)
            if rc != -signal.SIGKILL:
                return False, rc, err
            if os.path.exists(self.db):
                ok = integrity(self.db)
                check(ok == "ok", f"integrity_check after killing `{' '.join(argv)}`: {ok}")
            rc, err = self.cli.run(argv)
            return True, rc, err
        rc, err = self.cli.run(argv)
        return False, rc, err

    def ok_maybe_killed(self, argv):
        killed, rc, err = self.run_maybe_killed(argv)
        check(rc == 0 or needs_bytes(rc, err), f"`trialdb {' '.join(argv)}` exited {rc}: {err}")
        return killed

    def op_rm(self):
        if not self.trials:
            return None
        name = self.rng.choice(sorted(self.trials))
        argv = ["rm", "--db", self.db, "--trial", name]
        killed, rc, err = self.run_maybe_killed(argv)
        check(rc == 0 or (killed and rc in REFUSED and name not in trial_names(self.db)),
              f"rm {name}: exit {rc} {err}")
        remove_db(self.trials.pop(name).shadow)
        return f"rm {name}" + (" (killed first)" if killed else "")

    def op_rename(self):
        if not self.trials:
            return None
        name = self.rng.choice(sorted(self.trials))
        to = self.rng.choice([n for n in NAMES if n != name])
        argv = ["rename", "--db", self.db, "--trial", name, "--to", to]
        if to in self.trials:
            rc, err = self.cli.run(argv)
            check(rc in REFUSED, f"rename {name} to {to}, which exists: exit {rc} {err}")
            return f"rename {name} to {to}: refused"
        killed, rc, err = self.run_maybe_killed(argv)
        check(rc == 0 or (killed and rc in REFUSED and to in trial_names(self.db)), f"rename {name} to {to}: exit {rc} {err}")
        self.trials[to] = self.trials.pop(name)
        return f"rename {name} to {to}" + (" (killed first)" if killed else "")

    def random_rule_args(self):
        args = []
        for rule in self.rng.sample(sorted(RULE_PARAMS), self.rng.randint(0, 2)):
            key, values = self.rng.choice(RULE_PARAMS[rule])
            args += ["--param", f"{rule}.{key}={self.rng.choice(values)}"]
        if self.rng.random() < 0.3:
            args += ["--rule", self.rng.choice(sorted(RULE_PARAMS))]
        return args

    def op_rules(self):
        if not self.trials:
            return None
        args = self.random_rule_args() if self.rng.random() < 0.6 else []
        argv = ["rules", "--db", self.db] + args
        killed = self.ok_maybe_killed(argv)
        self.check_rules(args)
        return f"rules {' '.join(args)}" + (" (killed first)" if killed else "")

    def op_export(self):
        if not self.trials:
            return None
        values = self.rng.choice(EXPORT_VALUES)
        argv = ["export", "--db", self.db, "--out", self.export_dir, "--values", values]
        killed = self.ok_maybe_killed(argv)
        fresh = self.fresh_path("fresh_export")
        self.cli.ok(["export", "--db", self.db, "--out", fresh, "--values", values])
        diff = export_difference(self.export_dir, fresh)
        shutil.rmtree(fresh, ignore_errors=True)
        if diff:
            self.export_failures.append((self.op_number, diff))
            self.log(f"  (c) EXPORT DIFFERS: {diff}")
        return f"export --values {values}" + (" (killed first)" if killed else "")

    def op_follow(self):
        """`ingest --follow --rules` on a job being written, killed and restarted a few times,
        until its end marker."""
        jobs = [j for j in self.open_jobs() if j.next > 0 and self.name_of(j) is not None]
        if not jobs:
            return None
        job = self.rng.choice(jobs)
        name = self.name_of(job)
        argv = ["ingest", job.path, "--db", self.db, "--name", name, "--follow", "--rules", "--interval", "0.05",
                "--quiet"]
        kills = self.rng.randint(0, 8)
        p = self.cli.start(argv)
        killed = 0
        while not job.all_landed() or killed < kills:
            time.sleep(self.rng.uniform(0, 0.1))
            if not job.land_next(self.rng):
                job.land_late(self.rng)
            if killed < kills and self.rng.random() < 0.5:
                p.send_signal(signal.SIGKILL)
                p.communicate()
                killed += 1
                ok = integrity(self.db)
                check(ok == "ok", f"integrity_check after killing the follower: {ok}")
                p = self.cli.start(argv)
        job.end()
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Failure(f"the follower of {job.path} did not stop after the end marker")
        err = err.decode(errors="replace")
        check(p.returncode == 0 or needs_bytes(p.returncode, err), f"follow exit {p.returncode}: {err}")
        trial = self.trials[name]
        self.shadow_ingest(trial, [job.path, "--name", name, "--quiet"])
        if not trial.values_none_ever:
            self.check_whole(name, job)
        self.check_rules(["--trial", name])
        return f"follow {job.path} as {name} with {killed} kills"

    # --- invariants ---------------------------------------------------------------------------

    def check_views(self):
        names = trial_names(self.db)
        check(names == set(self.trials), f"(a) the database holds trials {sorted(names)}, expected {sorted(self.trials)}")
        for name, t in self.trials.items():
            diff = first_difference(trial_views(self.db, name), trial_views(t.shadow, "shadow"))
            check(diff is None, f"(a) trial {name} differs from its shadow (the same ingests alone): {diff}")
        diff = tensor_listing_difference(self.cli.trialdb, self.db)
        check(diff is None, f"(e) info --tensors differs from the views' aggregate: {diff}")

    def check_whole(self, name, job):
        fresh = self.fresh_path("fresh") + ".db"
        self.cli.ok(["ingest", job.path, "--db", fresh, "--name", name, "--quiet"])
        diff = first_difference(trial_views(self.db, name), trial_views(fresh, name))
        remove_db(fresh)
        check(diff is None, f"(a') trial {name} after a whole ingest differs from one fresh whole ingest: {diff}")

    def check_rules(self, args):
        copy = self.fresh_path("rerun") + ".db"
        copy_db(self.db, copy)
        self.cli.ok(["rules", "--db", copy, "--rerun"] + args)
        got, want = findings(self.db), findings(copy)
        remove_db(copy)
        if got != want:
            extra = [r for r in got if r not in want][:3]
            missing = [r for r in want if r not in got][:3]
            raise Failure(f"(b) findings differ from a fresh evaluation: {len(got)} vs {len(want)}; "
                          f"extra {extra!r:.600} missing {missing!r:.600}")

    # --- driver -------------------------------------------------------------------------------

    OPS = [("new_job", 3), ("land", 20), ("land_late", 5), ("end", 4), ("ingest", 30), ("rm", 3),
           ("rename", 4), ("rules", 9), ("export", 8), ("follow", 3)]

    def run(self):
        self.op_number = 0
        self.log(f"seed {self.seed}: {self.op_new_job()}")
        while self.op_number < self.steps:
            self.op_number += 1
            kind = self.rng.choices([k for k, _ in self.OPS], [w for _, w in self.OPS])[0]
            if kind == "ingest" and not self.jobs:
                kind = "new_job"
            t0 = time.monotonic()
            what = getattr(self, "op_" + kind)()
            if what is None:
                continue
            self.log(f"{self.op_number}: {what}")
            self.check_views()
            self.seconds[kind] = self.seconds.get(kind, 0) + time.monotonic() - t0


def main():
    global EXTENSION
    args = sys.argv[1:]
    trialdb, fixtures = os.path.abspath(args[0]), os.path.abspath(args[1])
    EXTENSION = os.path.join(os.path.dirname(os.path.dirname(trialdb)), "lib", "trialdb")
    if "--extension" in args:
        EXTENSION = os.path.abspath(args[args.index("--extension") + 1])
    seeds = [s for s, _, _ in REGRESSION_SEEDS] + DEFAULT_SEEDS
    steps = {s: n for s, n, _ in REGRESSION_SEEDS}
    default_steps = DEFAULT_STEPS
    if "--seeds" in args:
        seeds = [int(s) for s in args[args.index("--seeds") + 1].split(",")]
    if os.environ.get("SEQUENCE_SEEDS"):
        seeds = [int(s) for s in os.environ["SEQUENCE_SEEDS"].split(",")]
    if "--steps" in args:
        default_steps, steps = int(args[args.index("--steps") + 1]), {}
    if os.environ.get("SEQUENCE_STEPS"):
        default_steps, steps = int(os.environ["SEQUENCE_STEPS"]), {}
    failed = []
    export_failed = []
    for seed in seeds:
        work = tempfile.mkdtemp(prefix=f"trialdb_sequence_{seed}_")
        lines = []

        def log(line):
            lines.append(line)
        cli = Cli(trialdb, log)
        t0 = time.monotonic()
        try:
            masters_dir = os.path.join(work, "masters")
            os.makedirs(masters_dir)
            synth = [("synth1", ["--steps", "8", "--tensors", "3", "--elements", "16"]),
                     ("synth2", ["--steps", "6", "--tensors", "2", "--elements", "8", "--workers", "2"])]
            for name, opts in synth:
                cli.ok(["synth", os.path.join(masters_dir, name)] + opts)
            for name in ("dist2", "core_dtypes"):
                shutil.copytree(os.path.join(fixtures, name), os.path.join(masters_dir, name))
            masters = [Master(os.path.join(masters_dir, n), cli, work) for n in ("synth1", "synth2", "dist2", "core_dtypes")]
            walk = Walk(seed, steps.get(seed, default_steps), cli, masters, work, log)
            walk.run()
            for op, diff in walk.export_failures:
                export_failed.append((seed, op, diff))
            print(f"seed {seed}: {walk.op_number} operations in {time.monotonic() - t0:.0f} s, "
                  f"{len(walk.export_failures)} exports differing from a fresh export; seconds by operation: "
                  + ", ".join(f"{k} {v:.0f}" for k, v in sorted(walk.seconds.items(), key=lambda kv: -kv[1])))
        except Failure as e:
            failed.append(seed)
            print("\n".join(lines[-60:]))
            print(f"FAIL seed {seed}: {e}")
            if os.environ.get("SEQUENCE_KEEP"):
                print(f"work folder kept: {work}")
                work = None
        finally:
            if work:
                shutil.rmtree(work, ignore_errors=True)
    for seed in sorted({s for s, _, _ in export_failed}):
        ops = [(op, diff) for s, op, diff in export_failed if s == seed]
        print(f"(c) seed {seed}: {len(ops)} exports differ from a fresh export, at operations "
              f"{[op for op, _ in ops]}; the first: {ops[0][1]}")
    if failed or export_failed:
        print(f"failed seeds: {sorted(set(failed + [s for s, _, _ in export_failed]))}")
        return 1
    print(f"ok: seeds {seeds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
