"""The rule views outside the CLI: with only build/lib/trialdb.so loaded and PRAGMA
trusted_schema=OFF (SQLite then refuses, in a view or trigger, every function not registered
SQLITE_INNOCUOUS), the stock sqlite3 shell and /usr/bin/python3's sqlite3 each install the rule
SQL (`trialdb rules --print-sql`: rules_base.sql and rules_sql/*.sql with their declarations), evaluate it as the runner does (docs/RULES.md, "How a rule is
evaluated": a batch of all steps, or one step at a time) and must record exactly the findings `trialdb rules` records, values and
messages included. Cases: zoo (zoo.params: most rules find something), core_dtypes (string,
complex, NaN and Inf values), pt_bad_init against pt_good_init (similar_across_runs).
Also: the pragma is in effect in both hosts (a view calling a non-innocuous function fails), and
without the module the views fail for want of the functions.

  test_load_rules_shell.py --module build/lib/trialdb.so --shell sqlite3 --cli build/bin/trialdb
                           --fixtures tests/data/fixtures --rules-dir rules_sql
"""
import atexit
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sqlext"))
from sqlext_testlib import Checker, args, connect, module_stem, shell  # noqa: E402
from rules_replay import CLOCK_RULES, complete_steps, evaluate_rule_sql, params_sql  # noqa: E402

a = args()
c = Checker()
tmp = tempfile.mkdtemp(prefix="rules_shell_")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)

UNTRUSTED = "PRAGMA trusted_schema = OFF;\n"

# The rule SQL as the runner installs it (rules_base.sql, then each rule's declaration and file),
# as `trialdb rules --print-sql` prints it.
rule_files = sorted(p for p in glob.glob(os.path.join(a.rules_dir, "*.sql")) if not p.endswith("rules_base.sql"))
rules = [os.path.basename(p)[:-4] for p in rule_files]
c.eq(len(rules), 20, "rules_sql holds the 20 built-in rules")
printed = subprocess.run([a.cli, "rules", "--print-sql"], capture_output=True, text=True, timeout=60)
c.eq(printed.returncode, 0, "trialdb rules --print-sql (%s)" % printed.stderr.strip())
install_sql = printed.stdout + "\n"
c.true(all(("CREATE VIEW rule_%s AS" % r) in install_sql for r in rules), "--print-sql holds every rule's view")
step_rules = sorted(r for r in rules if r not in CLOCK_RULES)

# The pragma bites in both hosts: a view calling a function that is not SQLITE_INNOCUOUS fails.
con = sqlite3.connect(":memory:")
con.create_function("py_identity", 1, lambda x: x)   # Python's functions are never innocuous
con.executescript(UNTRUSTED + "CREATE VIEW v AS SELECT py_identity(1) AS x;")
try:
    con.execute("SELECT * FROM v").fetchall()
    c.true(False, "python: trusted_schema=OFF refuses a non-innocuous function in a view")
except sqlite3.OperationalError as e:
    c.true("unsafe use of py_identity" in str(e), "python: trusted_schema=OFF is in effect (%s)" % e)
rc, out, err = shell(a.shell, a.module, UNTRUSTED + "CREATE VIEW v AS SELECT readfile('/nonexistent') AS x; SELECT * FROM v;")
c.true(rc != 0 and "unsafe use of readfile" in err, "shell: trusted_schema=OFF is in effect (%r)" % err.strip())


def cli(*cmd):
    r = subprocess.run([a.cli, *cmd], capture_output=True, text=True, timeout=300)
    c.true(r.returncode in (0, 3), "trialdb %s (exit %d, %s)" % (" ".join(cmd[:2]), r.returncode, r.stderr.strip()[-300:]))


def findings(db):
    """The recorded findings but the clock rules', as a set (rule_finding is a plain table)."""
    rows = sqlite3.connect(db).execute(
        "SELECT rule, trial, step, mode, mode_step, tensor, worker, value, message FROM rule_finding").fetchall()
    return {r for r in rows if r[0] not in CLOCK_RULES}


def replay_sql(db, trial, params, kinds):
    """SQL that installs the rules, stores params for trial and evaluates every complete step of
    trial as RuleRunner::evaluate_trial does (one transaction): a rule of kind 'batch' over all the
    steps at once, one of kind 'step' one step at a time (kinds: rule -> kind)."""
    steps = complete_steps(db, trial)
    out = [install_sql, "BEGIN;", params_sql(trial, params)]
    out += [evaluate_rule_sql(trial, rule, kinds[rule], steps) for rule in step_rules]
    out.append("DELETE FROM rule_batch; COMMIT;")
    return "\n".join(out) + "\n", len(steps)


cases = [
    ("zoo", ["zoo"], [l.strip() for l in open(os.path.join(a.fixtures, "zoo.params")) if l.strip()]),
    ("core_dtypes", ["core_dtypes"], []),
    ("pt_bad_init", ["pt_bad_init", "pt_good_init"], ["similar_across_runs.other_trial=pt_good_init"]),
]
for trial, ingest, params in cases:
    ingested = os.path.join(tmp, trial + ".db")
    for t in ingest:
        cli("ingest", os.path.join(a.fixtures, t), "--db", ingested, "--name", t, "-q")
    dbs = {host: os.path.join(tmp, "%s.%s.db" % (trial, host)) for host in ("cli", "python", "shell")}
    for db in dbs.values():
        shutil.copy(ingested, db)

    args = ["rules", "--db", dbs["cli"], "--trial", trial]
    for p in params:
        args += ["--param", p]
    cli(*args)
    want = findings(dbs["cli"])
    c.true(len(want) > 0, "%s: the CLI records findings" % trial)
    if trial == "pt_bad_init":
        c.true(any(f[0] == "similar_across_runs" for f in want), "pt_bad_init: similar_across_runs findings")
    kinds = dict(sqlite3.connect(dbs["cli"]).execute("SELECT rule, kind FROM rule_catalog").fetchall())
    c.true(any(k == "batch" for k in kinds.values()), "%s: rules of kind 'batch' are replayed in one batch" % trial)
    sql, n_steps = replay_sql(ingested, trial, params, kinds)

    # Python: /usr/bin/python3's sqlite3 with build/lib/trialdb.so.
    try:
        con = connect(a.module, dbs["python"])
        con.isolation_level = None
        con.executescript(UNTRUSTED + sql)
        con.close()
        got = findings(dbs["python"])
        c.eq(sorted(got - want)[:3] + sorted(want - got)[:3], [],
             "%s: python, trusted_schema=OFF: %d steps, findings equal the CLI's (%d vs %d)" % (trial, n_steps, len(got), len(want)))
    except sqlite3.Error as e:
        c.true(False, "%s: python, trusted_schema=OFF: the rules run (%s)" % (trial, e))

    # The stock sqlite3 shell with .load.
    r = subprocess.run([a.shell, "-batch", "-bail", dbs["shell"]], capture_output=True, text=True, errors="replace",
                       input=".load %s\n" % module_stem(a.module) + UNTRUSTED + sql, timeout=300)
    c.true(r.returncode == 0, "%s: shell, trusted_schema=OFF: the rules run (%s)" % (trial, r.stderr.strip()[-300:]))
    if r.returncode == 0:
        got = findings(dbs["shell"])
        c.eq(sorted(got - want)[:3] + sorted(want - got)[:3], [],
             "%s: shell, trusted_schema=OFF: findings equal the CLI's (%d vs %d)" % (trial, len(got), len(want)))

# Without the module the views cannot run: the rule_* helpers are trialdb.so's.
rc, out, err = shell(a.shell, a.module, "SELECT count(*) FROM rule_exploding_tensor;", os.path.join(tmp, "zoo.cli.db"),
                     load=False)
c.true(rc != 0 and "no such function" in err, "without the module the views cannot run: %r" % err.strip())
c.done()
