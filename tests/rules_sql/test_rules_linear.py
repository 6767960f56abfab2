"""Rules cost what their input costs: each built-in rule's work grows no faster than the values
it reads. Two trials of the same shape (bench/profiles/transformer_profile.py, a transformer
saving every layer), one with twice the layers of the other (twice the tensors and the values,
the same steps); each rule is evaluated on both as the runner does (rules_replay.py) in
/usr/bin/python3's sqlite3 with build/lib/trialdb.so, counting SQLite's virtual machine
instructions (the progress handler), not time. Linear work doubles; work per value that grows
with the number of tensors (a subquery over the trial's tensors run again for every value)
quadruples. A rule must not grow more than LIMIT times.

  test_rules_linear.py --module build/lib/trialdb.so --cli build/bin/trialdb
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sqlext"))
from sqlext_testlib import Checker, args, connect  # noqa: E402
from rules_replay import CLOCK_RULES, complete_steps, evaluate_rule_sql, install_sql  # noqa: E402

PROFILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "profiles",
                       "transformer_profile.py")
LAYERS = 6          # 251 tensors; the larger trial 12 layers, 491 tensors
LIMIT = 2.5         # linear: ~2 (values double, the steps stay); a quadratic term: ~4
OPS_PER_CALL = 100  # progress handler granularity (instructions)

a = args()
c = Checker()
tmp = tempfile.mkdtemp(prefix="rules_linear_")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)


def run(*cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    c.eq(r.returncode, 0, "%s (%s)" % (" ".join(os.path.basename(x) for x in cmd[:3]), r.stderr.strip()[-300:]))
    return r.stdout


def trial_db(layers):
    """A database holding the synthetic trial of a transformer of this many layers."""
    name = "transformer_%d" % layers
    profile = os.path.join(tmp, name + ".json")
    with open(profile, "w") as f:
        f.write(run(sys.executable, PROFILE, "--layers", str(layers)))
    run(a.cli, "synth", "--profile", profile, os.path.join(tmp, name), "--seed", "1")
    db = os.path.join(tmp, name + ".db")
    run(a.cli, "ingest", os.path.join(tmp, name), "--db", db, "--name", name, "-q")
    return db, name


def instructions(db, trial, rules, kinds, sql):
    """Per rule: the SQLite instructions (in units of OPS_PER_CALL) its evaluation of every
    complete step ran, the rules installed beforehand."""
    steps = complete_steps(db, trial)
    con = connect(a.module, db)
    con.isolation_level = None
    con.executescript("PRAGMA synchronous = OFF;\n" + sql)
    counted = {}
    for rule in rules:
        calls = [0]

        def tick():
            calls[0] += 1
            return 0

        con.set_progress_handler(tick, OPS_PER_CALL)
        con.executescript(evaluate_rule_sql(trial, rule, kinds[rule], steps))
        con.set_progress_handler(None, 0)
        counted[rule] = calls[0]
    con.close()
    return counted


sql = install_sql(a.cli)
small, small_trial = trial_db(LAYERS)
large, large_trial = trial_db(2 * LAYERS)
con = connect(a.module, small)
con.executescript(sql)
kinds = dict(con.execute("SELECT rule, kind FROM rule_catalog").fetchall())
values = [connect(a.module, db).execute("SELECT count(*) FROM tensor_values").fetchone()[0] for db in (small, large)]
con.close()
c.eq(len(kinds), 20, "the 20 built-in rules are installed")
c.true(1.9 <= values[1] / values[0] <= 2.1, "the larger trial holds twice the values (%d, %d)" % tuple(values))
rules = sorted(r for r in kinds if r not in CLOCK_RULES)
ops_small = instructions(small, small_trial, rules, kinds, sql)
ops_large = instructions(large, large_trial, rules, kinds, sql)
for rule in rules:
    ratio = ops_large[rule] / max(1, ops_small[rule])
    print("%-30s %8d %8d  %.2fx" % (rule, ops_small[rule], ops_large[rule], ratio))
    c.true(ops_small[rule] > 0 and ratio <= LIMIT,
           "%s: %d x %d instructions on %d values, %d x %d on %d: %.2fx for 2x the values (at most %.1fx)"
           % (rule, ops_small[rule], OPS_PER_CALL, values[0], ops_large[rule], OPS_PER_CALL, values[1], ratio, LIMIT))
c.done()
