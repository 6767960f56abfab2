#!/usr/bin/python3
"""End-to-end checks of trialdb compare, plot and shell on ingested fixtures and synthetic trials.

usage: cli_check.py TRIALDB FIXTURES_DIR WORK_DIR EXTENSION (the trialdb SQL extension)
Checks: images are valid PNG (signature, IHDR size) or SVG (parsed XML, width/height) of the size
asked for; compare lines two trials up by mode step when their global steps differ (different
EVAL placement) and when their save intervals differ (pt_reductions saves every 2nd TRAIN step);
--csv and --json parse; errors go to stderr with the documented exit codes; --help has examples.
"""
import csv
import io
import json
import fcntl
import os
import pty
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import termios
import xml.etree.ElementTree as ET

TRIALDB, FIXTURES, WORK, EXTENSION = sys.argv[1:5]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, stdin=None):
    return subprocess.run([TRIALDB, *args], input=stdin, capture_output=True, text=True, timeout=300)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(33)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def svg_size(path):
    root = ET.parse(path).getroot()
    if not root.tag.endswith("svg"):
        return None
    return tuple(float(root.get(k).replace("px", "").replace("pt", "")) for k in ("width", "height"))


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
db = os.path.join(WORK, "t.db")
for trial in ("pt_bad_init", "pt_good_init", "pt_reductions", "dist2", "core_dtypes"):
    p = run("ingest", os.path.join(FIXTURES, trial), "--db", db)
    check(p.returncode == 0, "ingest %s: %s" % (trial, p.stderr))
# Two synthetic trials whose TRAIN steps sit at different global steps (EVAL every 3rd vs 5th).
for name, every in (("syn_a", "3"), ("syn_b", "5")):
    out = os.path.join(WORK, name)
    p = run("synth", out, "--steps", "20", "--tensors", "5", "--elements", "64", "--eval-every", every)
    check(p.returncode == 0, "synth %s: %s" % (name, p.stderr))
    p = run("ingest", out, "--db", db, "--name", name)
    check(p.returncode == 0, "ingest %s: %s" % (name, p.stderr))
con = sqlite3.connect(db)
mode_of = {(t, s): (m, ms) for t, s, m, ms in con.execute("SELECT trial, step, mode, mode_step FROM steps")}

# --- compare: alignment by mode step -----------------------------------------------------------
p = run("compare", "--db", db, "syn_a", "syn_b", "--json")
check(p.returncode == 0 and p.stderr == "", "compare syn_a syn_b: rc %d %s" % (p.returncode, p.stderr))
rows = json.loads(p.stdout)
check(len(rows) > 0, "compare syn: rows")
moved = 0
for r in rows:
    a = mode_of[("syn_a", r["step_a"])]
    b = mode_of[("syn_b", r["step_b"])]
    check(a == (r["mode"], r["mode_step"]) and b == (r["mode"], r["mode_step"]),
          "compare syn: row %s is not aligned by mode step" % r)
    moved += r["step_a"] != r["step_b"]
    if r["value_a"] and r["value_b"] is not None:
        check(abs(r["ratio_b_a"] - r["value_b"] / r["value_a"]) <= 1e-9 * abs(r["ratio_b_a"]) + 1e-300,
              "compare syn: ratio is B/A in %s" % r)
check(moved > 0, "compare syn: some aligned rows have different global steps (got %d)" % moved)
# Every (tensor, mode, mode_step) present in both trials appears once; none other.
keys = lambda t: {(tn, *mode_of[(t, s)]) for tn, s in con.execute(
    "SELECT DISTINCT tensor, step FROM reductions WHERE trial = ? AND reduction = 'l2' AND abs = 0", (t,))}
both = keys("syn_a") & keys("syn_b")
check(sorted((r["tensor"], r["mode"], r["mode_step"]) for r in rows) == sorted(both),
      "compare syn: rows are exactly the keys in both trials (%d vs %d)" % (len(rows), len(both)))

# Different save intervals: pt_reductions saved every 2nd TRAIN step, pt_good_init every step.
p = run("compare", "--db", db, "pt_good_init", "pt_reductions", "--mode", "train", "--tensor", "^gradient/", "--csv")
check(p.returncode == 0, "compare intervals: rc %d %s" % (p.returncode, p.stderr))
crow = list(csv.DictReader(io.StringIO(p.stdout)))
check(len(crow) == 6 * 10, "compare intervals: 6 gradients x 10 common TRAIN steps, got %d" % len(crow))
check(all(int(r["mode_step"]) % 2 == 0 and r["mode"] == "TRAIN" for r in crow), "compare intervals: even TRAIN steps only")
check(all(abs(float(r["ratio_b_a"]) - 1) < 1e-6 for r in crow), "compare intervals: same run, ratio 1")
p = run("compare", "--db", db, "pt_good_init", "pt_reductions", "--mode", "TRAIN", "--tensor", "^gradient/", "--all", "--json")
allrows = json.loads(p.stdout)
# A: TRAIN steps 0..19; B: 0, 2, .., 22. Union: 0..19, 20, 22.
check(len(allrows) == 6 * 22, "compare --all: every TRAIN step of either trial, got %d" % len(allrows))
check(all((r["value_b"] is None) == (r["mode_step"] % 2 == 1) for r in allrows), "compare --all: odd steps blank on B")
check(all((r["value_a"] is None) == (r["mode_step"] >= 20) for r in allrows), "compare --all: steps 20, 22 blank on A")
p = run("compare", "--db", db, "pt_bad_init", "pt_good_init", "--tensor", "Loss", "--reduction", "mean")
check(p.returncode == 0 and "ratio_b_a" in p.stdout and "CrossEntropyLoss_output_0" in p.stdout, "compare table")
check(all(len(line) <= 120 for line in p.stdout.splitlines()), "compare table fits 120 columns")
# Several workers: dist2's workers stay apart.
p = run("compare", "--db", db, "dist2", "dist2", "--json")
d2 = json.loads(p.stdout)
check({r["worker"] for r in d2} == {"worker_0", "worker_1"}, "compare dist2: one row per worker")

# GLOBAL mode: core_dtypes' one GLOBAL step (global step 16) is filed under its mode step 5.
p = run("compare", "--db", db, "core_dtypes", "core_dtypes", "--mode", "GLOBAL", "--reduction", "max", "--json")
g = json.loads(p.stdout) if p.returncode == 0 else []
check(len(g) > 0 and all(r["mode"] == "GLOBAL" and r["mode_step"] == 5 for r in g), "compare GLOBAL mode steps")

# --- compare: errors ---------------------------------------------------------------------------
p = run("compare", "--db", os.path.join(WORK, "missing.db"), "a", "b")
check(p.returncode == 1 and "no database" in p.stderr and p.stdout == "", "compare missing db: rc 1, stderr")
check(not os.path.exists(os.path.join(WORK, "missing.db")), "compare missing db: not created")
p = run("compare", "--db", db, "pt_bad_init", "nope")
check(p.returncode == 1 and "no trial named 'nope'" in p.stderr, "compare unknown trial")
p = run("compare", "--db", db, "pt_bad_init", "pt_good_init", "--reduction", "median")
check(p.returncode == 2 and p.stdout == "", "compare bad reduction: rc 2")
p = run("compare", "--db", db, "pt_bad_init", "pt_good_init", "--tensor", "(")
check(p.returncode == 2 and "--tensor" in p.stderr, "compare bad regex: rc 2")

# --- synth: every weight and bias has its gradient, whatever --tensors cuts ----------------------------
for k in (6, 7, 8):
    out = os.path.join(WORK, "synth%d" % k)
    p = run("synth", out, "--steps", "2", "--tensors", str(k), "--elements", "4")
    sdb = os.path.join(WORK, "synth%d.db" % k)
    p = run("ingest", out, "--db", sdb, "-q")
    names = {r[0] for r in sqlite3.connect(sdb).execute("SELECT tensor FROM tensors")}
    params = {n for n in names if n.startswith("Net_fc")}
    check(all("gradient/" + n in names for n in params), "synth --tensors %d: gradients of %s: %s" % (k, params, names))

# --- info: every view's counts, collections in every format, tensors ------------------------------------
p = run("info", "--db", db, "--json")
info = json.loads(p.stdout) if p.returncode == 0 else []
bad = [t for t in info if t["trial"] == "pt_bad_init"]
check(len(bad) == 1 and bad[0]["steps_per_mode"] == {"EVAL": 4, "TRAIN": 20}, "info --json steps per mode: %r" % bad)
check(len(bad) == 1 and "Net_fc.weight" in bad[0]["collections"].get("weights", []), "info --json collections: %r" % bad)
p = run("info", "--db", db, "--csv")
check(p.returncode == 0 and "collection,tensors,members" in p.stdout.replace("trial,", ""), "info --csv lists collections: %r" % p.stdout[:300])
p = run("info", "--db", db, "--tensors", "--trial", "pt_bad_init", "--json")
tensors = json.loads(p.stdout) if p.returncode == 0 else []
check(len(tensors) == bad[0]["tensors"] if bad else False, "info --tensors lists as many tensors as info counts")
w = [t for t in tensors if t["tensor"] == "Net_conv0.weight"]
check(w == [{"trial": "pt_bad_init", "tensor": "Net_conv0.weight", "dtype": "float32", "shape": "[4,1,3,3]", "steps": 24, "workers": 1}],
      "info --tensors detail: %r" % w)

# info --tensors reads the tensors' summary, not the values: it must say what an aggregate over the
# public views says (tests/common/tensor_listing.sql), for tensors of one shape and of several
# (core_dtypes), several workers (dist2), GLOBAL-mode steps (core_dtypes), and, in a copy edited by
# hand and then upgraded from the schema version before the summary (which builds it from the
# values), a dtype that changes, values past the complete steps and a tensor with none.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "tensor_listing.sql")) as f:
    VIEW_AGGREGATE = f.read()


def check_info_tensors(path, what):
    p = run("info", "--db", path, "--tensors", "--json")
    got = json.loads(p.stdout) if p.returncode == 0 else p.stderr
    view = sqlite3.connect(path)
    view.row_factory = sqlite3.Row
    want = [dict(r) for r in view.execute(VIEW_AGGREGATE)]
    view.close()
    check(got == want, "info --tensors %s: the view's aggregate says otherwise: %r" %
          (what, [(g, w) for g, w in zip(got, want) if g != w][:3] if isinstance(got, list) else got))
    return want


want = check_info_tensors(db, "on the fixtures")
check(any("," in (t["shape"] or "") for t in want) and any(t["workers"] > 1 for t in want),
      "the fixtures hold tensors of several shapes and of several workers")
edited = os.path.join(WORK, "edited.db")
shutil.copy(db, edited)
edit = sqlite3.connect(edited)
edit.enable_load_extension(True)   # DROP COLUMN checks the views, the histogram views call the extension
edit.load_extension(EXTENSION)
edit.executescript("""
UPDATE value SET dtype = 12 WHERE tensor_id = (SELECT min(tensor_id) FROM tensor WHERE name LIKE 'gradient/%')
  AND tensor_step = (SELECT max(tensor_step) FROM value v WHERE v.tensor_id = value.tensor_id);
UPDATE trial SET complete_through = 9 WHERE name IN ('dist2', 'core_dtypes');
INSERT INTO tensor(trial_id, name) SELECT trial_id, 'never_saved' FROM trial WHERE name = 'pt_bad_init';
-- As the version before the summary left a database.
DROP TABLE tensor_variant;
ALTER TABLE tensor DROP COLUMN visible_steps;
UPDATE schema_version SET version = 11;
""")
edit.commit()
edit.close()
p = run("info", "--db", edited, "--tensors")
check(p.returncode == 1 and "trialdb compact --db" in p.stderr and p.stdout == "",
      "info --tensors on a database without the summary names the command that adds it: %r" % p.stderr)
p = run("info", "--db", edited)
check(p.returncode == 0, "info without --tensors reads a database without the summary: %r" % p.stderr)
p = run("compact", "--db", edited)
check(p.returncode == 0, "compact upgrades the edited copy: %r" % p.stderr)
want = check_info_tensors(edited, "with a dtype that changes, values not visible yet and a tensor without values")
check(any("," in (t["dtype"] or "") for t in want) and any(t["tensor"] == "never_saved" and t["steps"] == 0 for t in want),
      "the edited copy holds a tensor of two dtypes and one without values")
check(any(t["trial"] == "dist2" and 0 < t["steps"] < 10 for t in want), "the edited copy hides dist2's later steps")

# --- sql: input, streaming, JSON columns ---------------------------------------------------------------
p = run("sql", "--db", db, "-", stdin="SELECT 41 + 1 AS x;")
check(p.returncode == 0 and "42" in p.stdout, "sql from standard input: %r %r" % (p.stdout, p.stderr))
qfile = os.path.join(WORK, "q.sql")
with open(qfile, "w") as f:
    f.write("-- a comment\nSELECT 'from a file' AS t;\n")
p = run("sql", "--db", db, "--file", qfile, "--csv")
check(p.returncode == 0 and p.stdout == "t\nfrom a file\n", "sql --file: %r %r" % (p.stdout, p.stderr))
p = run("sql", "--db", db, "--json", "SELECT 1 AS a, 2 AS a, x'0102ff' AS b, 0.1 AS c, 'x' AS a")
rows = json.loads(p.stdout) if p.returncode == 0 else None
check(rows == [{"a": 1, "a_2": 2, "b": "AQL/", "c": 0.1, "a_3": "x"}], "sql --json duplicate names and blobs: %r" % p.stdout)
check(p.returncode == 0 and list(json.loads(p.stdout)[0].keys()) == ["a", "a_2", "b", "c", "a_3"], "sql --json keeps SELECT order")
p = run("sql", "--db", db, "--json", "--csv", "SELECT 1")
check(p.returncode == 2, "sql --json --csv refused: rc %d" % p.returncode)
p = run("sql", "--db", db, "--precision", "3", "--csv", "SELECT 3.14159265 AS pi")
check(p.returncode == 0 and p.stdout == "pi\n3.14\n", "sql --precision: %r" % p.stdout)


# A REAL prints as the "%.<p>g" text of the smallest p >= 6 that reads back as the same double.
def shortest_g(x):
    for p in range(6, 18):
        if float("%.*g" % (p, x)) == x:
            return "%.*g" % (p, x)
    return "%.17g" % x


import random
rng = random.Random(7)
reals = [0.1, 1e-05, 100000.0, 1e6, 123456789.0, 0.30000000000000004, 5e-324, 2.2250738585072014e-308,
         1.7976931348623157e308, 2.0 ** -1022 * 3, 9007199254740993.0]
reals += [2.0 ** e for e in range(-1074, 1024, 7)]  # around a power of two the shortest digits may not do
reals += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
reals += [float(struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]) for _ in range(3000)]
# (-0.0 is left out: a REAL column stores it as the integer 0.)
reals = [x for x in reals if x == x and abs(x) != float("inf")]
reals_db = os.path.join(WORK, "reals.db")
shutil.copy(db, reals_db)
with sqlite3.connect(reals_db) as conn:
    conn.execute("CREATE TABLE reals(i INTEGER PRIMARY KEY, x REAL)")
    conn.executemany("INSERT INTO reals(x) VALUES (?)", [(x,) for x in reals])
conn.close()
p = run("sql", "--db", reals_db, "--csv", "SELECT x FROM reals ORDER BY i")
printed = p.stdout.splitlines()[1:] if p.returncode == 0 else []
wrong = [(x, s) for x, s in zip(reals, printed) if s != shortest_g(x)]
check(len(printed) == len(reals) and not wrong, "sql prints each REAL in its shortest %%g text: %r %r" % (wrong[:5], p.stderr))
# Rows stream: 3 million rows of CSV in far less memory than the rows take.
import resource
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
big = subprocess.run([TRIALDB, "sql", "--db", db, "--csv",
                      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) "
                      "SELECT i, printf('row %d of many', i) FROM n"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
lines = big.stdout.count(b"\n")
check(big.returncode == 0 and lines == 3000001, "sql --csv of 3M rows: rc %d, %d lines" % (big.returncode, lines))
check(peak_kb < 150 * 1024, "sql --csv streams: peak RSS %d KiB for %d bytes of output" % (peak_kb, len(big.stdout)))

# --- rm and rename: one trial out, the others untouched; canonical paths --------------------------------
two = os.path.join(WORK, "two.db")
one = os.path.join(WORK, "one.db")
for d, trials in ((two, ("pt_bad_init", "pt_good_init")), (one, ("pt_good_init",))):
    for trial in trials:
        run("ingest", os.path.join(FIXTURES, trial), "--db", d, "-q")
    run("rules", "--db", d)
p = run("rm", "--db", two, "--trial", "pt_bad_init")
check(p.returncode == 0, "rm: rc %d %r" % (p.returncode, p.stderr))
c2, c1 = sqlite3.connect(two), sqlite3.connect(one)
for c in (c1, c2):   # histogram_buckets reads the stored histograms through the extension
    c.enable_load_extension(True)
    c.load_extension(EXTENSION)
for q in ("SELECT trial, count(*) FROM reductions GROUP BY trial", "SELECT trial, count(*), sum(p50) FROM distributions GROUP BY trial",
          "SELECT trial, count(*) FROM histogram_buckets GROUP BY trial", "SELECT trial, rule, count(*) FROM rule_findings GROUP BY 1, 2",
          "SELECT trial, count(*) FROM tensor_values GROUP BY trial"):
    check(c2.execute(q).fetchall() == c1.execute(q).fetchall(), "rm leaves the other trial as it was: %s" % q)
for q in ("SELECT count(*) FROM value_blob WHERE value_id NOT IN (SELECT value_id FROM value WHERE value_id IS NOT NULL)",
          "SELECT count(*) FROM value_histogram WHERE distribution_id NOT IN (SELECT distribution_id FROM "
          "value_distribution)",
          "SELECT count(*) FROM value_distribution WHERE distribution_id NOT IN (SELECT distribution_id FROM value "
          "WHERE distribution_id IS NOT NULL)",
          "SELECT count(*) FROM rule_evaluated WHERE trial = 'pt_bad_init'"):
    check(c2.execute(q).fetchone()[0] == 0, "rm leaves nothing of the trial: %s" % q)
p = run("rename", "--db", two, "--trial", "pt_good_init", "--to", "good")
check(p.returncode == 0 and [r[0] for r in sqlite3.connect(two).execute("SELECT DISTINCT trial FROM rule_findings")] == ["good"],
      "rename: the findings follow: %r" % p.stderr)
p = run("rm", "--db", two, "--trial", "nope")
check(p.returncode == 1 and "no trial named 'nope'" in p.stderr, "rm of an unknown trial: %r" % p.stderr)
# ./t and its absolute path are one trial: the second ingest finds nothing new.
here = os.getcwd()
os.chdir(FIXTURES)
p1 = run("ingest", "./dist2", "--db", os.path.join(WORK, "canon.db"))
p2 = run("ingest", os.path.join(FIXTURES, "dist2"), "--db", os.path.join(WORK, "canon.db"))
os.chdir(here)
check(p1.returncode == 0 and p2.returncode == 0 and "0 files" in p2.stderr, "canonical trial paths: %r %r" % (p1.stderr, p2.stderr))

# --- command-line mistakes ----------------------------------------------------------------------------
p = run("ingset", "x")
check(p.returncode == 2 and "unknown subcommand 'ingset'; did you mean 'ingest'?" in p.stderr, "typo'd subcommand: %r" % p.stderr)
p = run("info", "--dbb", db)
check(p.returncode == 2 and "trialdb info: unknown option '--dbb'; did you mean '--db'?" in p.stderr, "typo'd option: %r" % p.stderr)
p = run("plot", "--db", db, "--out", "x.png", "distribution", "--tensr", "a")
check(p.returncode == 2 and "did you mean '--tensor'?" in p.stderr, "typo'd option of a chart kind: %r" % p.stderr)
p = run("info", "--db", db, "--trial", "nope")
check(p.returncode == 1 and "trialdb info: no trial named 'nope'" in p.stderr and "pt_bad_init" in p.stderr,
      "info --trial unknown: rc %d %r" % (p.returncode, p.stderr))
p = run("sql", "--db", os.path.join(WORK, "missing.db"), "SELECT 1")
check(p.returncode == 1 and p.stderr.startswith("trialdb sql: "), "errors name their command: %r" % p.stderr)

# --- ingest of something that is not a trial --------------------------------------------------------
# Nothing is created or changed: no database file, no trial row in an existing database.
nodb = os.path.join(WORK, "not_a_trial.db")
p = run("ingest", FIXTURES, "--db", nodb)
check(p.returncode == 1 and "not a trial" in p.stderr and "trials below it: core_dtypes, dist2" in p.stderr,
      "ingest of a folder of trials: rc %d %r" % (p.returncode, p.stderr))
check(not os.path.exists(nodb), "ingest of a folder of trials left a database file")
empty = os.path.join(WORK, "empty_folder")
os.makedirs(empty)
trials_before = sqlite3.connect(db).execute("SELECT count(*) FROM trials").fetchone()[0]
p = run("ingest", empty, "--db", db)
check(p.returncode == 1 and "not a trial" in p.stderr, "ingest of an empty folder: rc %d %r" % (p.returncode, p.stderr))
check(sqlite3.connect(db).execute("SELECT count(*) FROM trials").fetchone()[0] == trials_before,
      "ingest of an empty folder added a trial row")
half = os.path.join(WORK, "index_only")
shutil.copytree(os.path.join(FIXTURES, "pt_bad_init", "index"), os.path.join(half, "index"))
p = run("ingest", half, "--db", nodb)
# (no end marker: its files wait for their events, as a live job's would)
check(p.returncode == 0 and "warning" in p.stderr and "no events/" in p.stderr and "waiting" in p.stderr,
      "ingest of index/ without events/ is said: rc %d %r" % (p.returncode, p.stderr))

# --- ingest --follow --rules: stopping a job ------------------------------------------------------
# --exit-code: exit 3 after the pass that recorded a finding (pt_bad_init has an overfit finding).
follow_db = os.path.join(WORK, "follow.db")
p = run("ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", follow_db, "--follow", "--rules", "--exit-code",
        "--rule", "overfit", "-q")
check(p.returncode == 3 and "overfit" in p.stdout, "ingest --follow --rules --exit-code: rc %d %r" % (p.returncode, p.stderr))
con_f = sqlite3.connect(follow_db)
check(con_f.execute("SELECT count(DISTINCT rule) FROM rule_findings").fetchone()[0] == 1, "ingest --rule: only that rule")
con_f.close()
# --idle-timeout: a trial with no end marker and no new file ends the follow.
noend = os.path.join(WORK, "noend")
shutil.copytree(os.path.join(FIXTURES, "pt_good_init"), noend)
os.remove(os.path.join(noend, "training_job_end.ts"))
p = run("ingest", noend, "--db", os.path.join(WORK, "noend.db"), "--follow", "--idle-timeout", "0.5")
check(p.returncode == 0 and "--idle-timeout" in p.stderr, "ingest --follow --idle-timeout: rc %d %r" % (p.returncode, p.stderr))
p = run("ingest", noend, "--db", os.path.join(WORK, "noend.db"), "--idle-timeout", "0.5")
check(p.returncode == 2, "--idle-timeout without --follow is a usage error (rc %d)" % p.returncode)

# --- ingest: progress and summaries (issue 20 item 8) --------------------------------------------
def run_on_terminal(args, columns, env_columns=None, stream="stderr"):
    """Runs trialdb with stderr (or stdout) on a pseudo-terminal `columns` wide; returns (rc, what it wrote)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if env_columns:
        env["COLUMNS"] = str(env_columns)
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: slave}
    p = subprocess.Popen([TRIALDB, *args], stdin=subprocess.DEVNULL, env=env, **streams)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    os.close(master)
    return p.wait(timeout=300), out.decode()


# A table on a terminal: columns cut to their share of its width with "~", control characters
# escaped, a column of NULLs and numbers right-aligned, every cell padded to its column.
rc, written = run_on_terminal(["sql", "--db", db, "SELECT '%s' AS a, 'b' || char(1) AS b, NULL AS n, 7 AS i "
                               "UNION ALL SELECT 'x', 'y', NULL, 1234" % ("a" * 30)], 40, stream="stdout")
check(rc == 0 and written.replace("\r\n", "\n") == "a           b      n     i   \n"
      "----------  -----  ----  ----\n"
      "aaaaaaaaa~  b\\x01  NULL     7\n"
      "x           y      NULL  1234\n", "sql's table on a 40-column terminal: %r" % written)


def progress_lines(written):
    """The progress bar's states: what is drawn between carriage returns, without the erase code."""
    parts = [part.replace("\x1b[K", "") for part in written.split("\r")]
    return [part for part in parts if part.strip() and not part.startswith("trialdb ingest:") and not part.startswith("\n")]


for columns, env_columns in ((40, None), (200, 40), (100, None)):
    rc, written = run_on_terminal(["ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db",
                                   os.path.join(WORK, "progress%d.db" % columns)], columns, env_columns)
    width = env_columns or columns
    lines = progress_lines(written)
    check(rc == 0 and lines, "ingest on a terminal draws progress (rc %d %r)" % (rc, written))
    for line in lines:
        check(len(line) < width, "progress line fits %d columns: %r" % (width, line))
        check(re.search(r"\d+ files|\d+/\d+", line) and re.search(r"\d(\.\d+)? [kMG]?B ", line) and "B/s" in line and "ETA" in line,
              "progress line shows files, bytes, rate and ETA: %r" % line)
    check(width < 60 or all(line.startswith("[") for line in lines), "progress bar drawn when there is room: %r" % lines)
    check(re.search(r"pt_bad_init: 24 files \(\d[\d.]* [kM]B in [\d.]+ s\), \d+ values, 24 steps completed; training has ended",
                    written), "ingest summary: files, bytes, time, values, steps (%r)" % written)

# --- export: progress bar and --quiet (issue 32 item 5) ------------------------------------------
# On a terminal a bar of the values exported, bytes written, rate and time left, erased at the end;
# --quiet draws nothing and reports nothing; off a terminal only the report is written.
exported = os.path.join(WORK, "progress100.db")
for columns in (40, 100):
    rc, written = run_on_terminal(["export", "--db", exported, "--out", os.path.join(WORK, "export_bar%d" % columns)], columns)
    lines = progress_lines(written)
    check(rc == 0 and lines, "export on a terminal draws progress (rc %d %r)" % (rc, written))
    for line in lines:
        check(len(line) < columns, "export progress line fits %d columns: %r" % (columns, line))
        check(re.search(r"\d+/\d+|\d+%", line) and re.search(r"\d(\.\d+)? [kMG]?B ", line) and "ETA" in line,
              "export progress line shows values, bytes and ETA: %r" % line)
    # Frames come at most every 100 ms, so a fast export may draw only its first: the bar's shape
    # is checked, and that the values counted never go back nor past the total.
    check(columns < 60 or all(re.search(r"^\[[# ]+\] \d+/\d+ values", line) for line in lines),
          "export progress bar drawn with its values when there is room: %r" % lines)
    counts = [tuple(map(int, m.groups())) for m in (re.search(r"(\d+)/(\d+)", line) for line in lines) if m]
    check(all(done <= total for done, total in counts) and counts == sorted(counts),
          "export progress counts values up to their total: %r" % lines)
    check(written.endswith("\r\x1b[K"), "export's progress line erased at the end: %r" % written[-40:])
rc, written = run_on_terminal(["export", "--db", exported, "--out", os.path.join(WORK, "export_quiet"), "--quiet"], 100)
check(rc == 0 and written == "", "export --quiet on a terminal writes nothing: %r" % written)
check(os.path.exists(os.path.join(WORK, "export_quiet", "reductions")), "export --quiet still exports")
p = run("export", "--db", exported, "--out", os.path.join(WORK, "export_piped"))
check(p.returncode == 0 and p.stderr == "" and "histogram_buckets" in p.stdout,
      "export off a terminal: no progress, the report on stdout (%r, %r)" % (p.stderr, p.stdout[:200]))
p = run("export", "--db", exported, "--out", os.path.join(WORK, "export_piped"), "-q")
check(p.returncode == 0 and p.stderr == "" and p.stdout == "", "export -q: nothing printed (%r, %r)" % (p.stderr, p.stdout))

# Plurals: a trial of one step says "1 file" and "1 step".
one = os.path.join(WORK, "one_step")
for sub in ("index/000000000", "events/000000000000"):
    os.makedirs(os.path.join(one, sub))
shutil.copy(os.path.join(FIXTURES, "pt_bad_init", "index", "000000000", "000000000000_worker_0.json"),
            os.path.join(one, "index", "000000000"))
shutil.copy(os.path.join(FIXTURES, "pt_bad_init", "events", "000000000000", "000000000000_worker_0.tfevents"),
            os.path.join(one, "events", "000000000000"))
shutil.copy(os.path.join(FIXTURES, "pt_bad_init", "training_job_end.ts"), one)
p = run("ingest", one, "--db", os.path.join(WORK, "one.db"))
check(p.returncode == 0 and ": 1 file (" in p.stderr and ", 1 step completed" in p.stderr and "values" in p.stderr,
      "ingest summary in the singular: %r" % p.stderr)
check(not re.search(r"\b1 (files|steps|values|errors)\b", p.stderr), "no '1 files': %r" % p.stderr)
p = run("rules", "--db", os.path.join(WORK, "progress40.db"), "--rule", "overfit")
check(p.returncode == 0 and p.stderr.strip().endswith("1 new finding"), "rules: '1 new finding' (%r)" % p.stderr[-200:])

# --follow: what each pass added with the running totals, then the end of training summarised.
grow = os.path.join(WORK, "grow")
source = os.path.join(FIXTURES, "pt_bad_init")
shutil.copytree(source, grow, ignore=lambda d, names: [n for n in names if n == "training_job_end.ts" or
                                                        re.match(r"0000000000(1\d|2\d)", n)])
follow = subprocess.Popen([TRIALDB, "ingest", grow, "--db", os.path.join(WORK, "grow.db"), "--follow", "--interval", "0.05",
                           "--idle-timeout", "60"], stderr=subprocess.PIPE, text=True)
first = follow.stderr.readline()
# The rest as a job writes it: step by step, each event file before its index file, the end
# marker last (the ingest lists index files after the last one it has read).
for step in range(10, 24):
    for kind, folder, suffix in (("events", "%012d" % step, ".tfevents"), ("index", "000000000", ".json")):
        os.makedirs(os.path.join(grow, kind, folder), exist_ok=True)
        shutil.copy(os.path.join(source, kind, folder, "%012d_worker_0%s" % (step, suffix)), os.path.join(grow, kind, folder))
shutil.copy(os.path.join(source, "training_job_end.ts"), grow)
rest = follow.stderr.read()
rc = follow.wait(timeout=120)
check(rc == 0 and re.match(r"trialdb ingest: grow: \+10 files, \+\d+ values, \+10 steps completed; so far 10 files \([\d.]+ [kM]?B\), "
                           r"\d+ values, 10 steps completed", first), "--follow: first pass and totals: %r" % first)
check(re.search(r"grow: \+\d+ files, .*; so far 24 files \([\d.]+ [kM]?B\), \d+ values, 24 steps completed", rest),
      "--follow: the second pass adds to the totals: %r" % rest)
check(re.search(r"grow: training has ended: 24 steps \(TRAIN 20, EVAL 4\); this run ingested 24 files \([\d.]+ [kM]?B\), "
                r"\d+ values in [\d.]+ s\n$", rest), "--follow: the end of training is summarised: %r" % rest)

# --- plot ----------------------------------------------------------------------------------------
def plot(out, *args, size=("900", "540")):
    path = os.path.join(WORK, out)
    p = run("plot", "--db", db, "--out", path, "--width", size[0], "--height", size[1], *args)
    check(p.returncode == 0 and os.path.exists(path), "plot %s: rc %d %s" % (out, p.returncode, p.stderr))
    if p.returncode != 0:
        return
    want = (int(size[0]), int(size[1]))
    got = png_size(path) if out.endswith(".png") else svg_size(path)
    check(got is not None and tuple(int(x) for x in got) == want, "plot %s: size %s, want %s" % (out, got, want))


plot("dist.png", "distribution", "--trial", "pt_bad_init", "--trial", "pt_good_init",
     "--tensor", "relu1_input_0", "--mode", "TRAIN", size=("800", "700"))
plot("dist.svg", "distribution", "--trial", "pt_bad_init", "--tensor", "gradient/Net_conv1.weight")
plot("pct.png", "percentiles", "--trial", "pt_bad_init", "--tensor", "Net_conv1.weight")
plot("pct_workers.svg", "percentiles", "--trial", "dist2", "--tensor", "Sequential_0.weight", "--mode", "TRAIN",
     size=("640", "400"))
p = run("plot", "--db", db, "--out", os.path.join(WORK, "x.png"), "percentiles", "--trial", "pt_bad_init",
        "--tensor", "no_such_tensor")
check(p.returncode == 1 and "no tensor named" in p.stderr, "plot percentiles: unknown tensor is an error")
plot("red.png", "reduction", "--trial", "pt_bad_init", "--trial", "pt_good_init",
     "--tensor", "^gradient/.*weight", "--mode", "TRAIN", "--log", size=("1000", "600"))
plot("red.svg", "reduction", "--tensor", "Loss", "--reduction", "mean", size=("640", "400"))
plot("red_workers.png", "reduction", "--trial", "dist2", "--tensor", "weight")
# Options after the chart kind work too.
p = run("plot", "distribution", "--db", db, "--out", os.path.join(WORK, "after.png"), "--trial", "dist2",
        "--tensor", "Sequential_0.weight")
check(p.returncode == 0 and png_size(os.path.join(WORK, "after.png")) is not None,
      "plot: parent options after the kind parse (rc %d %s)" % (p.returncode, p.stderr))

has_view = con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'rule_findings'").fetchone()[0]
if not has_view:
    p = run("plot", "--db", db, "--out", os.path.join(WORK, "f.png"), "findings")
    check(p.returncode == 1 and "rule_findings" in p.stderr, "plot findings without the view: clear error")
    # A stand-in with the view's columns, so the chart itself is tested without the rules engine.
    con.execute("CREATE TABLE rule_findings(trial, rule, step, mode, mode_step, tensor, worker, value, message)")
    con.executemany("INSERT INTO rule_findings VALUES (?, ?, ?, 'TRAIN', ?, ?, 'worker_0', 1.0, 'm')",
                    [("pt_bad_init", "vanishing_gradient", s, s, "gradient/Net_fc.weight") for s in (3, 4, 5)] +
                    [("pt_bad_init", "poor_weight_initialization", 6, 6, "loss"),
                     ("pt_bad_init", "poor_weight_initialization", 7, 7, "loss"),
                     ("pt_good_init", "overfit", 18, 18, "CrossEntropyLoss_output_0")])
    con.commit()
plot("findings.png", "findings", size=("900", "400"))
plot("findings.svg", "findings", "--trial", "pt_bad_init", "--by-tensor", size=("700", "300"))

p = run("plot", "--db", db, "--out", os.path.join(WORK, "x.jpg"), "reduction", "--tensor", "Loss")
check(p.returncode == 1 and ".png or .svg" in p.stderr, "plot: unknown image extension is an error")
p = run("plot", "--db", db, "--out", os.path.join(WORK, "x.png"), "distribution", "--trial", "pt_bad_init",
        "--tensor", "no_such_tensor")
check(p.returncode == 1 and "no tensor named" in p.stderr, "plot: unknown tensor is an error")
p = run("plot", "--db", db, "--out", os.path.join(WORK, "nodir", "x.png"), "reduction", "--tensor", "Loss")
check(p.returncode == 1 and "cannot write" in p.stderr, "plot: unwritable output is an error")
p = run("plot", "--db", db, "--out", os.path.join(WORK, "x.png"), "--width", "5", "reduction", "--tensor", "Loss")
check(p.returncode == 2, "plot: tiny width is a usage error")

# --- plot: charts people read (issue 20 item 7) --------------------------------------------------
def series_paths(svg_path):
    """The chart's lines in an SVG: cairo strokes the series with round joins, frames and legend
    swatches with mitred ones. Returns (stroke colour, dash array) per series line."""
    text = open(svg_path).read()
    out = []
    for style in re.findall(r'<path style="([^"]*stroke-linejoin:round[^"]*)"', text):
        colour = re.search(r"stroke:(rgb\([^)]*\))", style).group(1)
        dash = re.search(r"stroke-dasharray:([^;]*)", style)
        out.append((colour, dash.group(1) if dash else ""))
    return out


def svg_texts(svg_path):
    return [t.text or "" for t in ET.parse(svg_path).getroot().iter("{http://www.w3.org/2000/svg}text")]


loss = os.path.join(WORK, "loss.svg")
for modes in (["--by-mode"], ["--mode", "TRAIN", "--mode", "EVAL"]):
    p = run("plot", "--db", db, "--out", loss, "reduction", "--trial", "pt_bad_init", "--tensor",
            "CrossEntropyLoss_output_0", "--reduction", "mean", *modes)
    check(p.returncode == 0, "plot reduction %s: rc %d %s" % (modes, p.returncode, p.stderr))
    lines = series_paths(loss)
    texts = svg_texts(loss)
    check(len(lines) == 2 and len(set(lines)) == 2, "plot reduction %s: TRAIN and EVAL are two lines: %s" % (modes, lines))
    check("TRAIN" in texts and "EVAL" in texts and "global step" in texts,
          "plot reduction %s: legend names the modes, x is the global step: %s" % (modes, texts))
    check(any("(TRAIN and EVAL)" in t for t in texts), "plot reduction %s: the title says the modes: %s" % (modes, texts))
p = run("plot", "--db", db, "--out", loss, "reduction", "--trial", "pt_bad_init", "--tensor", "CrossEntropyLoss_output_0",
        "--reduction", "mean", "--mode", "TRAIN")
check(p.returncode == 0 and len(series_paths(loss)) == 1 and "TRAIN step" in svg_texts(loss),
      "plot reduction --mode TRAIN: one line over TRAIN steps (%s)" % p.stderr)
# SVG text stays text: the title is a <text> element, and no glyph outlines are drawn.
check(any(t.startswith("mean of CrossEntropyLoss_output_0") for t in svg_texts(loss)) and "glyph" not in open(loss).read(),
      "plot: SVG keeps its text as <text> elements")

# 40 tensors: 40 lines, each with its own colour and dash (and marker).
many = os.path.join(WORK, "many")
p = run("synth", many, "--steps", "6", "--tensors", "100", "--elements", "8")
check(p.returncode == 0, "synth many: %s" % p.stderr)
p = run("ingest", many, "--db", db, "--name", "many")
check(p.returncode == 0, "ingest many: %s" % p.stderr)
many_svg = os.path.join(WORK, "many.svg")
p = run("plot", "--db", db, "--out", many_svg, "--width", "500", "reduction", "--trial", "many", "--tensor", "^gradient/",
        "--mode", "TRAIN")
lines = series_paths(many_svg) if p.returncode == 0 else []
check(len(lines) == 40 and len(set(lines)) == 40, "plot 40 series: %d lines, %d styles (%s)" % (len(lines), len(set(lines)), p.stderr))
texts = svg_texts(many_svg) if p.returncode == 0 else []
check(all(("gradient/Net_fc%d.%s" % (i, kind)) in texts for i in range(20) for kind in ("weight", "bias")),
      "plot 40 series at 500 px: every legend label shown whole")
check(not any(t.startswith("+ ") for t in texts), "plot 40 series: no legend entry left out")

# EVAL steps are marked in a heat map over all modes; one mode marks none.
heat = os.path.join(WORK, "heat.svg")
p = run("plot", "--db", db, "--out", heat, "distribution", "--trial", "pt_bad_init", "--trial", "pt_good_init",
        "--tensor", "relu0_output_0", "--shared-scale")
check(p.returncode == 0 and svg_texts(heat).count("EVAL step") == 2, "plot distribution: EVAL steps marked (%s)" % p.stderr)
check(svg_texts(heat).count("elements per bin") == 1, "plot distribution --shared-scale: one colour scale")
for mode in ("TRAIN", "EVAL"):
    p = run("plot", "--db", db, "--out", heat, "distribution", "--trial", "pt_bad_init", "--tensor", "relu0_output_0",
            "--mode", mode)
    # "EVAL step" is then only the x axis title of --mode EVAL, never a key of marks.
    check(p.returncode == 0 and svg_texts(heat).count("EVAL step") == (mode == "EVAL"),
          "plot distribution --mode %s: nothing marked" % mode)
# A trial without the values gets a panel saying why; the chart is drawn for the other.
p = run("plot", "--db", db, "--out", heat, "distribution", "--trial", "pt_bad_init", "--trial", "pt_reductions",
        "--tensor", "Net_fc.weight")
check(p.returncode == 0 and any("no numeric raw values" in t for t in svg_texts(heat)),
      "plot distribution: a panel without values says why (%s)" % p.stderr)

# An empty chart is an error, with a hint that fits the case.
def empty_chart(args, hint, what):
    out = os.path.join(WORK, "empty.png")
    if os.path.exists(out):
        os.remove(out)
    p = run("plot", "--db", db, "--out", out, *args)
    check(p.returncode == 1 and "nothing to draw" in p.stderr and hint in p.stderr and not os.path.exists(out),
          "plot %s: exit 1 with the hint %r (rc %d %r)" % (what, hint, p.returncode, p.stderr))


empty_chart(["reduction", "--trial", "pt_bad_init", "--tensor", "no_such"], "info --db", "no tensor matches")
empty_chart(["reduction", "--trial", "pt_bad_init", "--tensor", "Loss", "--mode", "PREDICT"], "it has some in TRAIN, EVAL",
            "reduction in a mode without values")
empty_chart(["reduction", "--trial", "pt_reductions", "--tensor", "^gradient/Net_fc.weight$", "--reduction", "prod", "--abs"],
            "it has l1, l2, l2 --abs, max, max --abs, mean, mean --abs",
            "a reduction that was not saved")
empty_chart(["distribution", "--trial", "pt_bad_init", "--tensor", "relu0_output_0", "--mode", "PREDICT"],
            "it has values in EVAL, TRAIN", "distribution in a mode without values")
empty_chart(["percentiles", "--trial", "pt_bad_init", "--tensor", "relu0_output_0", "--mode", "PREDICT"],
            "it has values in EVAL, TRAIN", "percentiles in a mode without values")
empty_chart(["findings", "--trial", "pt_bad_init", "--rule", "no_such_rule"], "trialdb rules --db", "findings of no rule")

# --- plot: long runs (smoothing, step ranges, log axes, downsampling, histograms) -----------------
def path_points(svg_path):
    """The number of points of each series line in an SVG (its move and line commands)."""
    text = open(svg_path).read()
    return [len(re.findall(r"[ML] ", d)) for d in
            re.findall(r'<path style="[^"]*stroke-linejoin:round[^"]*" d="([^"]*)"', text)]


red_svg = os.path.join(WORK, "long.svg")
train_loss = ["reduction", "--trial", "pt_bad_init", "--tensor", "CrossEntropyLoss_output_0", "--reduction", "mean",
              "--mode", "TRAIN"]
p = run("plot", "--db", db, "--out", red_svg, *train_loss)
full = path_points(red_svg)
p = run("plot", "--db", db, "--out", red_svg, *train_loss, "--steps", "2:6")
check(p.returncode == 0 and path_points(red_svg) == [4] and full == [20],
      "plot --steps 2:6: 4 of the 20 TRAIN points (%s, %s %s)" % (full, path_points(red_svg), p.stderr))
p = run("plot", "--db", db, "--out", red_svg, *train_loss, "--smooth", "0.8")
text = open(red_svg).read() if p.returncode == 0 else ""
check(p.returncode == 0 and path_points(red_svg) == [20, 20] and "stroke-opacity:0.25" in text,
      "plot --smooth: the raw line faint beneath the smoothed one (%s %s)" % (path_points(red_svg), p.stderr))
check(any("smoothed 0.8" in t for t in svg_texts(red_svg)), "plot --smooth: the axis says so")
for bad, why in ((["--smooth", "1"], "--smooth"), (["--log", "--symlog"], "choose one"), (["--steps", "5:2"], "--steps"),
                 (["--max-points", "3"], "--max-points")):
    p = run("plot", "--db", db, "--out", red_svg, *train_loss, *bad)
    check(p.returncode == 2 and why in p.stderr, "plot %s: a usage error naming it (%d %s)" % (bad, p.returncode, p.stderr))
# --max-points keeps every stretch's extremes: a spike in 400 steps survives 16 points.
spiky = os.path.join(WORK, "spiky")
p = run("synth", spiky, "--steps", "400", "--tensors", "1", "--elements", "4")
run("ingest", spiky, "--db", db, "--name", "spiky", "-q")
p = run("plot", "--db", db, "--out", red_svg, "reduction", "--trial", "spiky", "--tensor", "weight", "--reduction", "max",
        "--mode", "TRAIN", "--max-points", "16")
points = path_points(red_svg) if p.returncode == 0 else []
check(points and all(0 < n <= 16 for n in points), "plot --max-points 16: at most 16 points a line (%s %s)" % (points, p.stderr))
# --symlog: ticks through zero and on both sides.
pct_svg = os.path.join(WORK, "pct_symlog.svg")
p = run("plot", "--db", db, "--out", pct_svg, "percentiles", "--trial", "pt_bad_init", "--tensor", "gradient/Net_conv0.weight",
        "--symlog")
ticks = svg_texts(pct_svg) if p.returncode == 0 else []
check("0" in ticks and any(t.startswith("-") for t in ticks) and "value (symmetric log scale)" in ticks,
      "plot percentiles --symlog: ticks on both sides of zero (%s %s)" % (ticks, p.stderr))
# histogram: one line per step; a step without a histogram is named with those there are.
hist_svg = os.path.join(WORK, "hist.svg")
p = run("plot", "--db", db, "--out", hist_svg, "histogram", "--trial", "pt_bad_init", "--tensor", "relu0_output_0",
        "--step", "0", "--step", "11", "--offset")
check(p.returncode == 0 and len(path_points(hist_svg)) == 2 and "global step 11" in svg_texts(hist_svg),
      "plot histogram: a line per step (%s %s)" % (path_points(hist_svg) if p.returncode == 0 else None, p.stderr))
p = run("plot", "--db", db, "--out", hist_svg, "histogram", "--trial", "pt_bad_init", "--tensor", "relu0_output_0",
        "--step", "999")
check(p.returncode == 1 and "no histogram at global step 999" in p.stderr and "23" in p.stderr,
      "plot histogram: a missing step is named (%s)" % p.stderr)
# A missing or unknown chart kind names the kinds.
for args in ([], ["hist"]):
    p = run("plot", "--db", db, "--out", hist_svg, *args)
    check(p.returncode == 2 and "distribution, percentiles, histogram, reduction or findings" in p.stderr,
          "plot %s: names the chart kinds (%d %s)" % (args, p.returncode, p.stderr))

# --- shell ---------------------------------------------------------------------------------------
p = run("shell", "--db", db, "--", "-csv", "SELECT tensor_numel(value) FROM tensor_values WHERE trial = 'pt_bad_init' "
        "AND tensor = 'Net_fc.weight' AND step = 0")
check(p.returncode == 0 and p.stdout.strip() == "6000", "shell: extension loaded (%r %r)" % (p.stdout, p.stderr))
p = run("shell", "--db", db, stdin="SELECT 'Net_conv0.weight' REGEXP '^(?!gradient).*weight';\n")
check(p.returncode == 0 and p.stdout.strip() == "1", "shell: regexp via stdin (%r %r)" % (p.stdout, p.stderr))
p = run("shell", "--db", db, "--extension", os.path.join(WORK, "none.so"))
check(p.returncode == 1 and "extension is missing" in p.stderr, "shell: missing extension")
p = run("shell", "--db", db, "--sqlite3", "no-such-sqlite3")
check(p.returncode == 1 and "cannot find the sqlite3 shell" in p.stderr, "shell: missing sqlite3")
p = run("shell", "--db", os.path.join(WORK, "missing.db"))
check(p.returncode == 1 and "no database" in p.stderr, "shell: missing database")

# --- ingest --values none | all, --steps, --tensors, --collections --------------------------------
# A value stored without its bytes: every function that needs them says so and how to add them;
# the statistics computed at ingest still answer; --values all adds the bytes.
ndb = os.path.join(WORK, "none.db")
bad_init = os.path.join(FIXTURES, "pt_bad_init")
p = run("ingest", bad_init, "--db", ndb, "--values", "none", "-q")
check(p.returncode == 0, "ingest --values none: %s" % p.stderr)
for fn in ("tensor_reduce(value, 'mean')", "tensor_percentile(value, 50)", "tensor_fraction(value, 'zero')"):
    p = run("sql", "--db", ndb, "SELECT %s FROM tensor_values WHERE tensor = 'Net_fc.weight' AND step = 0" % fn)
    check(p.returncode == 1 and "ingested with --values none" in p.stderr and
          "trialdb ingest PATH --db FILE --values all" in p.stderr, "%s on a value without bytes: %r" % (fn, p.stderr))
p = run("sql", "--db", ndb, "--csv", "SELECT count(*) FROM reductions WHERE tensor = 'Net_fc.weight' AND step = 0")
check(p.stdout.strip().splitlines()[-1] == "18", "--values none keeps the reductions: %r" % p.stdout)
p = run("ingest", bad_init, "--db", ndb, "--values", "all")
check(p.returncode == 0 and "480 values' bytes added" in p.stderr, "ingest --values all: %r" % p.stderr)
p = run("sql", "--db", ndb, "--csv", "SELECT tensor_numel(value) FROM tensor_values WHERE tensor = 'Net_fc.weight' AND step = 0")
check(p.returncode == 0 and p.stdout.strip().splitlines()[-1] == "6000", "bytes added by --values all: %r" % p.stdout)
for args, what in ((["--steps", "5"], "--steps must be A:B"), (["--steps", "9:3"], "--steps must be A:B"),
                   (["--values", "some"], "--values"), (["--tensors", "("], "--tensors"),
                   (["--collections", "nope"], "no collection 'nope'")):
    p = run("ingest", bad_init, "--db", os.path.join(WORK, "sel.db"), *args)
    check(p.returncode in (1, 2) and what in p.stderr, "ingest %s: %r" % (" ".join(args), p.stderr))
sdb = os.path.join(WORK, "loss.db")
p = run("ingest", bad_init, "--db", sdb, "--steps", "2:5", "--collections", "losses,weights", "-q")
p = run("sql", "--db", sdb, "--csv", "SELECT count(*), min(step), max(step) FROM tensor_values")
check(p.stdout.strip().splitlines()[-1] == "%d,2,4" % (3 * 4), "--steps 2:5 --collections losses,weights: %r" % p.stdout)

for cmd in (["compare"], ["plot"], ["shell"]):
    p = run(*cmd, "--help")
    check(p.returncode == 0 and "Example" in p.stdout, "%s --help shows an example" % cmd[0])

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
