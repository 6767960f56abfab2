"""Hostile arguments to `trialdb ingest` (issue 17, C9): --follow on a regular file fails at once
instead of waiting for a folder forever; --interval must be a finite number of seconds in range;
--threads is bounded; a thread that cannot be started (RLIMIT_NPROC, a pids limit) is an error
naming the cause, never a crash.

Usage: ingest_args_test.py TRIALDB"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

TRIALDB = sys.argv[1]
QUICK_S = 10          # an argument error must come long before this
NOBODY = 65534        # RLIMIT_NPROC does not bind root: the limited child runs as nobody


def run_quick(argv, preexec_fn=None):
    """common.run waits without a limit (and forks /usr/bin/time, which RLIMIT_NPROC forbids);
    an argument error must not wait at all."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=QUICK_S,
                           preexec_fn=preexec_fn)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {QUICK_S} s: {argv}")
    return common.Run(p.returncode, p.stdout, p.stderr, 0)


def test_follow_on_regular_file(tmp):
    f = os.path.join(tmp, "not_a_folder")
    open(f, "w").close()
    r = run_quick([TRIALDB, "ingest", f, "--db", os.path.join(tmp, "f.db"), "--follow"])
    assert r.rc == 1, r
    assert "not_a_folder" in r.err and "not a directory" in r.err, r


def test_interval_and_threads_bounds(tmp, trial):
    db = os.path.join(tmp, "args.db")
    for bad in ("nan", "inf", "-inf", "-1", "0", "0.001", "1e400", "abc", "1e9"):
        r = run_quick([TRIALDB, "ingest", trial, "--db", db, "--follow", "--interval", bad])
        assert r.rc == 2 and "--interval" in r.err, (bad, r)
    for bad in ("0", "-3", "257", "100000", "abc"):
        r = run_quick([TRIALDB, "ingest", trial, "--db", db, "--threads", bad])
        assert r.rc == 2 and "--threads" in r.err, (bad, r)
    assert not os.path.exists(db), "a refused command line created the database"
    r = common.run([TRIALDB, "ingest", trial, "--db", db, "-q", "--follow", "--interval", "0.01", "--threads", "3"])
    assert r.rc == 0, r


def test_no_thread_to_start(tmp, trial):
    """Every thread the ingest starts fails with EAGAIN: a clear error, exit 1, nothing half-done
    that a rerun without the limit does not finish."""
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            print("skip: running as root without setpriv")
            return
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        os.chmod(tmp, 0o777)
    db = os.path.join(tmp, "nproc.db")
    for threads in ([], ["--threads", "4"]):
        r = run_quick(prefix + [TRIALDB, "ingest", trial, "--db", db, "-q"] + threads,
                      preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NPROC, (1, 1)))
        assert r.rc == 1, r
        assert "cannot start a thread" in r.err and "--threads" in r.err and trial in r.err, r
        assert "terminate" not in r.err and "system_error" not in r.err, r
    clean = os.path.join(tmp, "clean.db")
    assert common.ingest(TRIALDB, trial, clean).rc == 0
    r = common.ingest(TRIALDB, trial, db, extra=["--name", "tr"])
    assert r.rc == 0, r
    assert common.dump(db) == common.dump(clean)
    assert common.integrity(db) == "ok"


def main():
    tmp = tempfile.mkdtemp(prefix="trialdb_hostile_args_")
    try:
        os.chmod(tmp, 0o755)
        trial = os.path.join(tmp, "tr")
        subprocess.run([TRIALDB, "synth", trial, "--steps", "6", "--tensors", "3", "--elements", "64"], check=True,
                       stdout=subprocess.DEVNULL)
        test_follow_on_regular_file(tmp)
        test_interval_and_threads_bounds(tmp, trial)
        test_no_thread_to_start(tmp, trial)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
