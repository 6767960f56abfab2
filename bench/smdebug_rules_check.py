#!/usr/bin/python3
"""Checks that bench/smdebug_rules.py finds what `trialdb rules` finds, so that timing one against
the other compares the same work: ingests the trial into a fresh database, runs every rule, and
compares per rule the findings (step, tensor, worker; value within 1e-6 relative) with what
smdebug_rules.py prints for the same trial and parameters.

  bench/smdebug_rules_check.py TRIALDB_BINARY TRIAL_FOLDER [--param RULE.KEY=VALUE ...]
                               [--params-file FILE] [--other-trial FOLDER]
prints per rule "equal (<n> findings)" or its differences; exits 1 when a rule differs, 2 when
smdebug cannot be imported. --params-file holds one RULE.KEY=VALUE a line (the fixtures'
zoo.params). With --other-trial both trials are ingested and similar_across_runs compares them.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def trialdb_findings(binary, trial, params, other):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "check.db")
        name = os.path.basename(os.path.normpath(trial))
        for folder in [trial] + ([other] if other else []):
            subprocess.run([binary, "ingest", folder, "--db", db], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if other:
            params = params + [f"similar_across_runs.other_trial={os.path.basename(os.path.normpath(other))}"]
        args = [binary, "rules", "--db", db, "--trial", name, "--timeout", "0"]
        for p in params:
            args += ["--param", p]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run([binary, "sql", "--db", db, "--json",
                              f"SELECT rule, step, tensor, worker, value FROM rule_findings WHERE trial = '{name}'"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out) if out.strip() else []


def smdebug_findings(trial, params, other):
    args = [sys.executable, os.path.join(HERE, "smdebug_rules.py"), trial]
    for p in params:
        args += ["--param", p]
    if other:
        args += ["--other-trial", other]
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode == 2:
        print(run.stderr.strip(), file=sys.stderr)
        sys.exit(2)
    if run.returncode:
        sys.exit(f"smdebug_rules.py failed: {run.stderr}")
    lines = run.stdout.splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")], lines[-1]


def close(a, b):
    if a is None or b is None:
        return a is None and b is None or (isinstance(a, float) and math.isnan(a)) or \
            (isinstance(b, float) and math.isnan(b))
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-12)


def by_rule(findings):
    rules = {}
    for f in findings:
        value = f["value"]
        value = None if value is None else float(value)
        rules.setdefault(f["rule"], {})[(int(f["step"]), f["tensor"], f["worker"])] = value
    return rules


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trialdb")
    parser.add_argument("trial")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--params-file")
    parser.add_argument("--other-trial")
    args = parser.parse_args()
    params = list(args.param)
    if args.params_file:
        with open(args.params_file) as f:
            params += [line.strip() for line in f if line.strip() and not line.startswith("#")]
    ours, timing = smdebug_findings(args.trial, params, args.other_trial)
    theirs = by_rule(trialdb_findings(args.trialdb, args.trial, params, args.other_trial))
    ours = by_rule(ours)
    differ = False
    print(f"{args.trial}: smdebug {timing}")
    for rule in sorted(set(ours) | set(theirs)):
        a, b = ours.get(rule, {}), theirs.get(rule, {})
        only_smdebug = sorted(set(a) - set(b))
        only_trialdb = sorted(set(b) - set(a))
        values = [(k, a[k], b[k]) for k in sorted(set(a) & set(b)) if not close(a[k], b[k])]
        if not (only_smdebug or only_trialdb or values):
            print(f"  {rule}: equal ({len(a)} findings)")
            continue
        differ = True
        print(f"  {rule}: DIFFERENT: smdebug {len(a)}, trialdb {len(b)} findings")
        for k in only_smdebug[:5]:
            print(f"    only smdebug: step {k[0]} {k[1]} {k[2]} value {a[k]}")
        for k in only_trialdb[:5]:
            print(f"    only trialdb: step {k[0]} {k[1]} {k[2]} value {b[k]}")
        for k, x, y in values[:5]:
            print(f"    value at step {k[0]} {k[1]} {k[2]}: smdebug {x}, trialdb {y}")
    if not ours and not theirs:
        print("  no findings on either side")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
