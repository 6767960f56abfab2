"""Rules cost what their input costs: each built-in rule's work grows no faster than the values
it reads. Trials of one shape (bench/profiles/transformer_profile.py, a transformer saving every
layer): a small one, one with twice the layers (twice the tensors and the values, the same
steps) and one with four times the steps (each tensor saved four times as often: four times the
values, the same tensors). Each rule is evaluated on each as the runner does (rules_replay.py) in
/usr/bin/python3's sqlite3 with build/lib/trialdb.so, counting SQLite's virtual machine
instructions (the progress handler), not time. Linear work grows as the values do (2x, 4x); work
per value that grows with the number of tensors (a subquery over the trial's tensors run again for
every value) or with the steps before (a tensor's whole history looked at for each of its values)
grows with their square (4x, 16x). A rule must not grow more than SLACK times the values.

  test_rules_linear.py --module build/lib/trialdb.so --cli build/bin/trialdb
"""
import atexit
import json
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
SLACK = 1.25        # the rules grow at most 1.04x as fast as the values here; a quadratic term 2x, 4x
OPS_PER_CALL = 100  # progress handler granularity (instructions)

a = args()
c = Checker()
tmp = tempfile.mkdtemp(prefix="rules_linear_")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)


def run(*cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    c.eq(r.returncode, 0, "%s (%s)" % (" ".join(os.path.basename(x) for x in cmd[:3]), r.stderr.strip()[-300:]))
    return r.stdout


def trial_db(layers, times=1):
    """A database holding the synthetic trial of a transformer of this many layers, over `times`
    times the profile's steps, each tensor saved `times` times as often."""
    name = "transformer_%d_x%d" % (layers, times)
    shape = json.loads(run(sys.executable, PROFILE, "--layers", str(layers)))
    shape["steps_per_mode"] = {m: n * times for m, n in shape["steps_per_mode"].items()}
    for t in shape["tensors"]:
        t["values_saved"] *= times
    profile = os.path.join(tmp, name + ".json")
    with open(profile, "w") as f:
        json.dump(shape, f)
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
con = connect(a.module, small)
con.executescript(sql)
kinds = dict(con.execute("SELECT rule, kind FROM rule_catalog").fetchall())
con.close()
c.eq(len(kinds), 20, "the 20 built-in rules are installed")
rules = sorted(r for r in kinds if r not in CLOCK_RULES)


def count_values(db):
    return connect(a.module, db).execute("SELECT count(*) FROM tensor_values").fetchone()[0]


n_small = count_values(small)
ops_small = instructions(small, small_trial, rules, kinds, sql)
print("%-30s %8s %8s" % ("rule", "small", "larger"))
for what, times, (db, trial) in (("twice the layers", 2, trial_db(2 * LAYERS)),
                                 ("four times the steps", 4, trial_db(LAYERS, 4))):
    n = count_values(db)
    c.true(0.95 * times <= n / n_small <= 1.05 * times, "%s: %dx the values (%d, %d)" % (what, times, n_small, n))
    limit = SLACK * times
    ops = instructions(db, trial, rules, kinds, sql)
    print("-- %s" % what)
    for rule in rules:
        ratio = ops[rule] / max(1, ops_small[rule])
        print("%-30s %8d %8d  %.2fx" % (rule, ops_small[rule], ops[rule], ratio))
        c.true(ops_small[rule] > 0 and ratio <= limit,
               "%s, %s: %d x %d instructions on %d values, %d x %d on %d: %.2fx for %dx the values (at most %.1fx)"
               % (rule, what, ops_small[rule], OPS_PER_CALL, n_small, ops[rule], OPS_PER_CALL, n, ratio, times, limit))


def ops_of(con, query, params=()):
    calls = [0]

    def tick():
        calls[0] += 1
        return 0

    con.set_progress_handler(tick, OPS_PER_CALL)
    con.execute(query, params).fetchall()
    con.set_progress_handler(None, 0)
    return calls[0]


# A rule's selection by tensor_regex alone (collection_names empty, the default) costs what the
# pattern match over the trial's tensors costs: the collections are not searched for each tensor
# (that search costs several times the match).
con = connect(a.module, small)
con.execute("DELETE FROM rule_batch")
con.execute("INSERT INTO rule_batch(trial, step, mode, mode_step, tensor_step, now) "
            "SELECT trial, step, mode, mode_step, step, 0 FROM steps WHERE trial = ? LIMIT 1", (small_trial,))
match = ops_of(con, "SELECT count(*) FROM tensors WHERE trial = ? AND rule_regexp_any('.*trees/Node', tensor)",
               (small_trial,))
selection = ops_of(con, "SELECT count(*) FROM rule_selected_tensors WHERE rule = 'tree_depth'")
c.true(selection <= 1.5 * match + 10,
       "tree_depth's selection: %d x %d instructions, the pattern match alone %d x %d" %
       (selection, OPS_PER_CALL, match, OPS_PER_CALL))
con.close()
c.done()
