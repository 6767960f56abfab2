"""Evaluating the rule SQL outside the CLI, as RuleRunner::evaluate_trial does (docs/RULES.md,
"How a rule is evaluated"): the SQL that installs the rules (`trialdb rules --print-sql`), the
parameters stored for a trial, and one rule's evaluation of a batch of steps. Shared by the
rules' Python tests (test_load_rules_shell.py, test_rules_linear.py).
"""
import sqlite3
import subprocess

CLOCK_RULES = {"stalled_training"}   # evaluated against the wall clock, not step by step


def q(s):
    return "'" + str(s).replace("'", "''") + "'"


def install_sql(cli):
    """The rule SQL as the runner installs it (rules_base.sql, then each rule's declaration and
    file); raises when the CLI fails."""
    r = subprocess.run([cli, "rules", "--print-sql"], capture_output=True, text=True, timeout=60, check=True)
    return r.stdout + "\n"


def complete_steps(db, trial):
    """(step, mode, mode_step) of the trial's complete steps, in step order."""
    return sqlite3.connect(db).execute(
        "SELECT step, mode, mode_step FROM steps WHERE trial = ? AND complete ORDER BY step", (trial,)).fetchall()


def params_sql(trial, params):
    """Stores RULE.KEY=VALUE params for trial."""
    out = []
    for p in params:
        rule_key, value = p.split("=", 1)
        rule, key = rule_key.split(".", 1)
        out.append("INSERT INTO rule_param(trial, rule, param, value) VALUES (%s, %s, %s, %s) "
                   "ON CONFLICT (ifnull(trial, ''), rule, param) DO UPDATE SET value = excluded.value;"
                   % (q(trial), q(rule), q(key), q(value)))
    return "\n".join(out) + "\n"


def evaluate_sql(trial, rule, batch):
    """One evaluation of rule on the batch's steps (a list of complete_steps rows): the batch,
    the fold (rule_progress's trigger) and the findings recorded."""
    out = ["DELETE FROM rule_batch;"]
    for step, mode, mode_step in batch:
        out.append("INSERT INTO rule_batch(trial, step, mode, mode_step, tensor_step, now) "
                   "VALUES (%s, %d, %s, %d, %d, 0);" % (q(trial), step, q(mode), mode_step,
                                                        mode_step if mode == "GLOBAL" else step))
    out.append("INSERT OR IGNORE INTO rule_progress(trial, rule, step) VALUES (%s, %s, NULL);" % (q(trial), q(rule)))
    out.append("UPDATE rule_progress SET step = %d WHERE trial = %s AND rule = %s;" % (batch[-1][0], q(trial), q(rule)))
    out.append("INSERT OR IGNORE INTO rule_finding(trial, rule, step, mode, mode_step, tensor, worker, value, "
               "message, found_at) SELECT b.trial, %s, b.step, b.mode, b.mode_step, r.tensor, "
               "ifnull(r.worker, (SELECT worker FROM rule_primary_worker)), r.value, r.message, b.now "
               "FROM rule_%s r JOIN rule_batch b ON b.trial = r.trial AND b.step = r.step;" % (q(rule), rule))
    return "\n".join(out) + "\n"


def evaluate_rule_sql(trial, rule, kind, steps):
    """A rule's evaluation of every step: of kind 'batch' all the steps at once, of kind 'step'
    one step at a time."""
    if kind == "batch":
        return evaluate_sql(trial, rule, steps)
    return "".join(evaluate_sql(trial, rule, [s]) for s in steps)
