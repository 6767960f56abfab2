"""trialdb.Trial against smdebug's own answers: every fixture's <name>.golden.json holds what
smdebug 1.0.34's Trial API returned for it (tests/data/fixtures/README.md); the same calls through
trialdb.Trial must give the same answers, with smdebug's step numbering, modes and exceptions.

usage: smdebug_api_test.py TRIALDB FIXTURES_DIR EXTENSION"""
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import trialdb  # noqa: E402
from trialdb import modes  # noqa: E402

TRIALDB, FIXTURES, EXTENSION = sys.argv[1:4]
os.environ["TRIALDB"] = TRIALDB
FIXTURE_NAMES = ("pt_bad_init", "pt_good_init", "core_dtypes", "dist2", "pt_reductions", "zoo")
REDUCTIONS_COMPARED = ("min", "max", "mean", "sum", "variance", "std")
TOLERANCE = 1e-5
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def raises(exception, call):
    try:
        call()
    except exception:
        return True
    except Exception as e:  # noqa: BLE001 - any other exception is the failure reported
        print("  raised %s: %s" % (type(e).__name__, e))
        return False
    return False


def scale(name, golden):
    """The scale an error is measured against (the fixtures README's rule)."""
    def g(key):
        v = golden.get(key)
        return abs(v) if isinstance(v, (int, float)) else None
    if name == "sum":
        return g("sum_abs")
    if name == "mean":
        return g("mean_abs")
    if name in ("variance", "std") and g("variance_abs") is not None and g("mean_abs") is not None:
        second_moment = g("variance_abs") + g("mean_abs") ** 2
        return second_moment if name == "variance" else math.sqrt(second_moment)
    return g(name)


def compare_tensor(t, name, golden):
    tensor = t.tensor(name)
    check(tensor.steps() == golden["steps"], "%s %s steps: %r" % (t.name, name, tensor.steps()))
    for mode, mode_steps in golden["by_mode"].items():
        check(tensor.steps(mode=modes[mode]) == mode_steps, "%s %s steps of %s" % (t.name, name, mode))
    for key, v in golden["values"].items():
        step, worker = key.split("/", 1)
        step = int(step)
        where = "%s %s step %d %s" % (t.name, name, step, worker)
        error = v.get("value_error")
        if error == "TensorUnavailableForStep":
            check(raises(trialdb.TensorUnavailableForStep, lambda: tensor.value(step, worker=worker)), where + ": raises")
        elif v.get("sha256"):
            got = tensor.value(step, worker=worker)
            check(hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest() == v["sha256"], where + ": bytes")
            check(str(got.dtype) == v["dtype"], where + ": dtype %s" % got.dtype)
        if "shape_api" in v:
            check(tensor.shape(step, worker=worker) == tuple(v["shape_api"]), where + ": shape")
        if v.get("dtype") not in ("float32", "float64") and error != "TensorUnavailableForStep":
            continue
        for red in REDUCTIONS_COMPARED:
            for use_abs in (False, True):
                expected = v["reductions"].get(red + ("_abs" if use_abs else ""))
                if not isinstance(expected, (int, float)):
                    continue
                got = tensor.reduction_value(step, red, worker=worker, abs=use_abs)
                s = scale(red, {k: x for k, x in v["reductions"].items()}) or abs(expected) or 1.0
                check(abs(got - expected) <= TOLERANCE * s, "%s: %s%s %r vs smdebug's %r" % (
                    where, red, " abs" if use_abs else "", got, expected))


def compare_trial(db, fixture):
    with open(os.path.join(FIXTURES, fixture + ".golden.json")) as f:
        golden = json.load(f)
    t = trialdb.Trial(db, fixture, extension=EXTENSION)
    check(t.tensor_names() == golden["tensor_names"], fixture + ": tensor_names")
    check(t.steps() == golden["steps"], fixture + ": steps")
    check(t.workers() == golden["workers"], fixture + ": workers")
    check([m.name for m in t.modes()] == sorted(golden["modes"], key=lambda m: modes[m].value), fixture + ": modes")
    for mode, mode_steps in golden["mode_steps"].items():
        check(t.steps(mode=modes[mode]) == mode_steps, "%s: steps of %s" % (fixture, mode))
        check(t.steps(mode=mode.lower()) == mode_steps, "%s: steps of %s by name" % (fixture, mode))
    for global_step, (mode, mode_step) in golden["global_to_mode"].items():
        global_step = int(global_step)
        check(t.mode(global_step) == modes[mode] and t.mode_step(global_step) == mode_step,
              "%s: mode of step %d" % (fixture, global_step))
        if mode != "GLOBAL":   # smdebug's global_step(GLOBAL, s) is s
            check(t.global_step(modes[mode], mode_step) == global_step, "%s: global_step(%s, %d)" % (fixture, mode, mode_step))
    for collection, names in golden["collections"].items():
        check(t.tensor_names(collection=collection) == sorted(names), "%s: collection %s" % (fixture, collection))
    for name, tensor in golden["tensors"].items():
        compare_tensor(t, name, tensor)
    return t


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "t.db")
    for f in FIXTURE_NAMES:
        subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, f), "--db", db, "-q"], check=True)
    trials = {f: compare_trial(db, f) for f in FIXTURE_NAMES}

    # Mode steps, as smdebug numbers them: the EVAL loss by its EVAL step is the value at its
    # global step, and values(mode=) is keyed by mode step.
    t = trials["pt_bad_init"]
    loss = t.tensor("CrossEntropyLoss_output_0")
    evals = loss.values(mode=modes.EVAL)
    check(sorted(evals) == loss.steps(mode=modes.EVAL) == [0, 1, 2, 3], "values(mode=EVAL) keys: %r" % sorted(evals))
    for mode_step, value in evals.items():
        check(np.array_equal(value, loss.value(t.global_step(modes.EVAL, mode_step))), "EVAL step %d" % mode_step)
    check(t.tensor_names(mode=modes.EVAL, step=0) == t.tensor_names(step=t.global_step(modes.EVAL, 0)),
          "tensor_names at an EVAL step")
    check(t.tensor_names(regex=["^Net_conv0", "^Net_fc"]) == [n for n in t.tensor_names() if re.search("^Net_(conv0|fc)", n)],
          "tensor_names with a list of regexes")
    check(loss.prev_steps(10, 3) == [8, 9, 10], "prev_steps: %r" % loss.prev_steps(10, 3))
    check(loss.workers(3) == ["worker_0"], "workers at a step")

    # smdebug's exceptions, with their meanings.
    check(raises(trialdb.TensorUnavailable, lambda: t.tensor("no such tensor")), "TensorUnavailable")
    check(raises(trialdb.NoMoreData, lambda: loss.value(10_000)), "NoMoreData past the end of an ended trial")
    check(raises(trialdb.InvalidWorker, lambda: loss.value(3, worker="worker_9")), "InvalidWorker")
    c = trials["core_dtypes"]   # global steps 1, 4, 7, ...: step 2 was passed without being saved
    check(raises(trialdb.StepUnavailable, lambda: c.tensor("scalar/loss").value(2)), "StepUnavailable")
    only_reduced = c.tensor("grad/only_reduced")
    step = only_reduced.steps()[0]
    try:
        only_reduced.value(step)
        check(False, "a reductions-only value raises")
    except trialdb.TensorUnavailableForStep as e:
        check(e.has_reductions and "reductions saved" in str(e), "TensorUnavailableForStep says reductions exist: %s" % e)
    saved = only_reduced.reduction_values(step)
    with open(os.path.join(FIXTURES, "core_dtypes.golden.json")) as f:
        hook_saved = json.load(f)["tensors"]["grad/only_reduced"]["values"]["%d/worker_0" % step]["reductions"]
    check(set(saved) == {(k.replace("_abs", ""), k.endswith("_abs")) for k, v in hook_saved.items()
                         if isinstance(v, (int, float))},
          "reduction_values: the reductions the hook saved, as smdebug lists them: %r" % sorted(saved))
    check(saved[("max", False)] == only_reduced.reduction_value(step, "max"), "reduction_values agree with reduction_value")
    check(c.tensor("layer/weight").reduction_values(1) == {}, "a raw value has no saved reductions (smdebug's answer)")
    d = trials["dist2"]
    name = d.tensor_names(collection="losses")[0]
    s = d.tensor(name).steps()[0]
    check(d.tensor(name).workers(s) == ["worker_0", "worker_1"], "two workers at a step")
    blob = sqlite3.connect(db).execute(
        "SELECT value FROM tensor_values WHERE trial = 'dist2' AND tensor = ? AND step = ? AND worker = 'worker_1'",
        (name, s)).fetchone()[0]
    check(np.array_equal(d.tensor(name).value(s, worker="worker_1"), trialdb.decode(blob)), "worker_1's own value")

    # frame(): filters by value, list, range, slice and regex are the SQL's answers.
    con = sqlite3.connect(db)
    f = t.frame("reductions", tensor=re.compile(r"^gradient/Net_conv"), reduction=["l2", "mean"], abs=0, step=range(2, 6))
    expected = con.execute("SELECT count(*) FROM reductions WHERE trial = 'pt_bad_init' AND tensor LIKE 'gradient/Net_conv%' "
                           "AND reduction IN ('l2', 'mean') AND abs = 0 AND step >= 2 AND step < 6").fetchone()[0]
    check(len(f) == expected and expected > 0, "frame with regex, IN and range: %d rows, %d expected" % (len(f), expected))
    check(len(t.frame("steps", step=slice(20, None))) == 4, "frame with an open slice")
    check(t.sql("SELECT count(*) AS n FROM tensors WHERE trial = ?", (t.name,))["n"][0] == len(t.tensor_names()), "sql()")

    # A notebook shows a trial as a table, its name as text; plot() gives a PNG.
    subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, "pt_good_init"), "--db", db, "--name",
                    "<img src=x onerror=alert(1)>", "-q"], check=True)
    hostile = trialdb.Trial(db, "<img src=x onerror=alert(1)>", extension=EXTENSION)
    page = hostile._repr_html_()
    check("<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page and "TRAIN 20" in page,
          "_repr_html_ escapes names: %s" % page[:200])
    png = t.plot("reduction", tensor="CrossEntropyLoss", reduction="mean", width=400)
    check(png._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n", "plot() returns a PNG")
    check(raises(RuntimeError, lambda: t.plot("reduction", tensor="no tensor matches this")), "plot() reports failure")

    # The file named is the file opened: '#', '?' and '%' in a path are not URI syntax.
    for odd in ("runs#1.db", "runs?x=1.db", "run%73"):
        decoy = os.path.join(tmp, odd.split("#")[0].split("?")[0].replace("%73", "s"))
        shutil.copy(db, os.path.join(tmp, odd))
        con2 = sqlite3.connect(decoy)
        con2.execute("CREATE TABLE decoy(x)")
        con2.close()
        check(trialdb.Trial(os.path.join(tmp, odd), "pt_bad_init", extension=EXTENSION).steps() == t.steps(),
              "opens %s, not %s" % (odd, os.path.basename(decoy)))
        os.remove(decoy)

print("%d failures" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
