"""build/lib/trialdb_rules.so in the stock sqlite3 shell: the module is as self-contained as
trialdb.so (SQLite only through the host's API table, one exported symbol), registers the rule_*
helpers and sqlext's functions, and a rule view evaluated in the shell at a step finds what
`trialdb rules` recorded for that step (core_dtypes: exploding_tensor). Without the module the
same view fails for want of the functions, which is why the module exists.

  test_load_rules_shell.py --module build/lib/trialdb_rules.so --shell sqlite3 --cli build/bin/trialdb
                           --fixtures tests/data/fixtures
"""
import argparse
import os
import subprocess
import sys
import tempfile

p = argparse.ArgumentParser()
p.add_argument("--module", required=True)
p.add_argument("--shell", required=True)
p.add_argument("--cli", required=True)
p.add_argument("--fixtures", required=True)
a = p.parse_args()
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def shell(sql, db, load=True):
    stem = a.module[:-3] if a.module.endswith(".so") else a.module
    script = (".load %s\n" % stem if load else "") + sql + "\n"
    r = subprocess.run([a.shell, "-batch", "-bail", db], input=script, capture_output=True, text=True,
                       errors="replace", timeout=60)   # the shell may echo undecodable bytes in errors
    return r.returncode, r.stdout, r.stderr


needed = subprocess.run(["readelf", "-d", a.module], capture_output=True, text=True).stdout
check("libsqlite3" not in needed, "module does not link libsqlite3")
undef = subprocess.run(["nm", "-D", "--undefined-only", a.module], capture_output=True, text=True).stdout
check(not any(l.split()[-1].startswith("sqlite3_") for l in undef.splitlines() if l.strip()),
      "no undefined sqlite3_ symbols")
defined = subprocess.run(["nm", "-D", "--defined-only", a.module], capture_output=True, text=True).stdout
exported = [l.split()[-1] for l in defined.splitlines() if " T " in l]
check(exported == ["sqlite3_trialdbrules_init"], "only the entry point is exported: %s" % exported)

rc, out, err = shell("SELECT rule_real('-inf'), rule_bool('yes'), rule_list_json('1, 2.5'), "
                     "rule_count(tensor_from_json('[0, 1, 0]'), 'zero'), "
                     "tensor_reduce(tensor_from_json('[1, 2]'), 'sum'), 'ab' REGEXP '^(?!b)a';", ":memory:")
check(rc == 0 and out.strip() == "-Inf|1|[1,2.5]|2|3.0|1", "rule_* and sqlext functions: %r %r" % (out, err))

tmp = tempfile.mkdtemp(prefix="rules_shell_")
db = os.path.join(tmp, "t.db")
for cmd in (["ingest", os.path.join(a.fixtures, "core_dtypes"), "--db", db, "-q"], ["rules", "--db", db]):
    r = subprocess.run([a.cli, *cmd], capture_output=True, text=True, timeout=120)
    check(r.returncode in (0, 3), "trialdb %s (exit %d, %s)" % (cmd[0], r.returncode, r.stderr.strip()[-200:]))

rc, out, err = shell("SELECT DISTINCT step FROM rule_findings WHERE rule = 'exploding_tensor' ORDER BY step;", db)
steps = [int(s) for s in out.split()]
check(rc == 0 and len(steps) > 0, "the CLI recorded exploding_tensor findings (%s)" % steps)

for step in steps:
    # The cursor as the runner sets it (docs/RULES.md, "How a rule is evaluated").
    cursor = ("DELETE FROM rule_cursor; INSERT INTO rule_cursor(trial, step, mode, mode_step, tensor_step, now) "
              "SELECT trial, step, mode, mode_step, CASE mode WHEN 'GLOBAL' THEN mode_step ELSE step END, 0 "
              "FROM steps WHERE trial = 'core_dtypes' AND step = %d;" % step)
    rc, out, err = shell(cursor + "SELECT tensor || '|' || worker FROM rule_exploding_tensor ORDER BY 1;", db)
    rc2, want, err2 = shell("SELECT tensor || '|' || worker FROM rule_findings WHERE rule = 'exploding_tensor' "
                            "AND step = %d ORDER BY 1;" % step, db)
    check(rc == 0 and out == want and out.strip() != "",
          "step %d: the view in the shell finds what the CLI recorded (%r vs %r, %s)" % (step, out, want, err.strip()))

rc, out, err = shell("SELECT count(*) FROM rule_exploding_tensor;", db, load=False)
check(rc != 0 and "no such function" in err, "without the module the view cannot run: %r" % err.strip())

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
