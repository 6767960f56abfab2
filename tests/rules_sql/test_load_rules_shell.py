"""build/lib/trialdb_rules.so in the stock sqlite3 shell: the module is as self-contained as
trialdb.so (SQLite only through the host's API table, one exported symbol), registers the rule_*
helpers and sqlext's functions, and a rule view evaluated in the shell at a step finds what
`trialdb rules` recorded for that step (core_dtypes: exploding_tensor). Without the module the
same view fails for want of the functions, which is why the module exists.

  test_load_rules_shell.py --module build/lib/trialdb_rules.so --shell sqlite3 --cli build/bin/trialdb
                           --fixtures tests/data/fixtures
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sqlext"))
from sqlext_testlib import Checker, args, check_self_contained_module, shell  # noqa: E402

a = args()
c = Checker()
check_self_contained_module(c, a.module, "sqlite3_trialdbrules_init")

rc, out, err = shell(a.shell, a.module,
                     "SELECT rule_real('-inf'), rule_bool('yes'), rule_list_json('1, 2.5'), "
                     "rule_count(tensor_from_json('[0, 1, 0]'), 'zero'), "
                     "tensor_reduce(tensor_from_json('[1, 2]'), 'sum'), 'ab' REGEXP '^(?!b)a';")
c.eq((rc, out.strip()), (0, "-Inf|1|[1,2.5]|2|3.0|1"), "rule_* and sqlext functions (stderr: %s)" % err.strip())

# The rest needs the database the CLI writes: without it (no CLI, a failed ingest or rules run)
# the test stops here as a failure, rather than checking an empty list of steps.
if not a.cli or not os.access(a.cli, os.X_OK):
    print("FAIL: no trialdb CLI (--cli %r)" % a.cli)
    sys.exit(1)
tmp = tempfile.mkdtemp(prefix="rules_shell_")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
db = os.path.join(tmp, "t.db")
for cmd in (["ingest", os.path.join(a.fixtures, "core_dtypes"), "--db", db, "-q"], ["rules", "--db", db]):
    r = subprocess.run([a.cli, *cmd], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print("FAIL: trialdb %s exited %d: %s" % (cmd[0], r.returncode, r.stderr.strip()[-300:]))
        sys.exit(1)

rc, out, err = shell(a.shell, a.module,
                     "SELECT DISTINCT step FROM rule_findings WHERE rule = 'exploding_tensor' ORDER BY step;", db)
steps = [int(s) for s in out.split()]
c.true(rc == 0 and len(steps) > 0, "the CLI recorded exploding_tensor findings (%s)" % steps)

for step in steps:
    # The cursor as the runner sets it (docs/RULES.md, "How a rule is evaluated").
    cursor = ("DELETE FROM rule_cursor; INSERT INTO rule_cursor(trial, step, mode, mode_step, tensor_step, now) "
              "SELECT trial, step, mode, mode_step, CASE mode WHEN 'GLOBAL' THEN mode_step ELSE step END, 0 "
              "FROM steps WHERE trial = 'core_dtypes' AND step = %d;" % step)
    rc, out, err = shell(a.shell, a.module, cursor + "SELECT tensor || '|' || worker FROM rule_exploding_tensor ORDER BY 1;", db)
    rc2, want, err2 = shell(a.shell, a.module, "SELECT tensor || '|' || worker FROM rule_findings "
                            "WHERE rule = 'exploding_tensor' AND step = %d ORDER BY 1;" % step, db)
    c.true(rc == 0 and out == want and out.strip() != "",
           "step %d: the view in the shell finds what the CLI recorded (%r vs %r, %s)" % (step, out, want, err.strip()))

rc, out, err = shell(a.shell, a.module, "SELECT count(*) FROM rule_exploding_tensor;", db, load=False)
c.true(rc != 0 and "no such function" in err, "without the module the view cannot run: %r" % err.strip())
c.done()
