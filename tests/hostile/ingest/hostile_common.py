"""What the ingest tests of tests/hostile/ingest share: a small synthetic trial and a clean
ingest of it, running trialdb with a time limit (and as an unprivileged user where permissions
must bite), and the three outcomes every case asserts: the exit code, the damaged file reported
with its step, every other step equal to the clean ingest."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common as C  # noqa: E402

TRIAL = "t"             # every database here holds the trial under this name
WALL_SECONDS = 20       # an ingest of these small trials takes well under a second
NOBODY = 65534          # uid/gid a root test drops to, so that file permissions apply
EXIT_OK, EXIT_FAILED, EXIT_PARTIAL = 0, 1, 4


class Run:
    def __init__(self, rc, err, wall):
        self.rc, self.err, self.wall = rc, err, wall

    def __repr__(self):
        return f"rc={self.rc} wall={self.wall:.1f}s stderr={self.err[-1500:]!r}"


def run(argv, unprivileged=False, timeout=WALL_SECONDS):
    """Runs argv within timeout seconds (a hang fails the test, it never blocks it)."""
    def drop():
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout,
                           preexec_fn=drop if unprivileged and os.geteuid() == 0 else None)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{argv[:3]} did not finish within {timeout} s")
    return Run(p.returncode, p.stderr.decode(errors="replace"), time.monotonic() - start)


def ingest(trialdb, trial, db, unprivileged=False, extra=()):
    return run([trialdb, "ingest", trial, "--db", db, "--name", TRIAL, "--quiet", *extra], unprivileged)


class Workspace:
    """A temporary folder (open to the unprivileged user) with a clean synthetic trial and its
    clean ingest; removed on exit."""

    def __init__(self, trialdb, steps=12, tensors=2, elements=16):
        self.trialdb = trialdb
        self.dir = tempfile.mkdtemp(prefix="hostile_ingest_")
        os.chmod(self.dir, 0o777)
        self.clean = os.path.join(self.dir, "clean")
        r = run([trialdb, "synth", self.clean, "--steps", str(steps), "--tensors", str(tensors),
                 "--elements", str(elements)])
        assert r.rc == 0, r
        self.clean_db = os.path.join(self.dir, "clean.db")
        r = ingest(trialdb, self.clean, self.clean_db)
        assert r.rc == EXIT_OK, r
        self.count = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for root, dirs, _ in os.walk(self.dir):   # chmod 000 folders would stop rmtree
            for d in dirs:
                p = os.path.join(root, d)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
        shutil.rmtree(self.dir)

    def copy(self):
        """A fresh copy of the clean trial and a database path for it (writable by anyone)."""
        self.count += 1
        case = os.path.join(self.dir, f"case{self.count}")
        os.makedirs(case)
        os.chmod(case, 0o777)
        trial = C.copy_trial(self.clean, os.path.join(case, "trial"))
        return trial, os.path.join(case, "db.sqlite")


def assert_reported(db, file, step, *words):
    rows = C.errors(db, TRIAL)
    hit = [r for r in rows if r[1] == file and r[2] == step and all(w in r[3] for w in words)]
    assert hit, f"no ingest_errors row for {file} (step {step}) with {words}: {rows}"


def assert_other_steps_equal(db, clean_db, damaged=()):
    """Every step but the damaged ones holds exactly the rows a clean ingest holds."""
    got, want = C.rows_by_step(db, TRIAL), C.rows_by_step(clean_db, TRIAL)
    for step, rows in want.items():
        if step not in damaged:
            assert got.get(step) == rows, f"step {step} differs from the clean ingest"
    assert set(got) <= set(want), f"steps that do not exist: {set(got) - set(want)}"
    assert C.integrity(db) == "ok"


def view(db, query):
    c = C.connect(db)
    try:
        return c.execute(query).fetchall()
    finally:
        c.close()
