"""the python/trialdb package against the views, on ingested fixtures (the built CLI ingests them).

usage: trialdb_test.py TRIALDB FIXTURES_DIR EXTENSION"""
import math
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import trialdb  # noqa: E402

TRIALDB, FIXTURES, EXTENSION = sys.argv[1:4]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "t.db")
    for f in ("pt_bad_init", "core_dtypes"):
        subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, f), "--db", db, "-q"], check=False)
    t = trialdb.Trial(db, "pt_bad_init", extension=EXTENSION)
    con = sqlite3.connect(db)
    check(t.tensor_names() == [r[0] for r in con.execute("SELECT tensor FROM tensors WHERE trial = 'pt_bad_init' ORDER BY tensor")],
          "tensor_names")
    check(t.tensor_names(collection="gradients") == [n for n in t.tensor_names() if n.startswith("gradient/")],
          "tensor_names of a collection")
    check(len(t.steps()) == 24 and len(t.steps(mode="train")) == 20, "steps: %r" % t.steps())
    check(t.workers() == ["worker_0"], "workers")
    w = t.value("Net_conv0.weight", 3)
    check(w.shape == (4, 1, 3, 3) and w.dtype == np.float32, "value shape and dtype: %r %r" % (w.shape, w.dtype))
    mean_abs = t.reduction_value("Net_conv0.weight", 3, "mean", abs=True)
    check(abs(float(np.abs(w.astype(np.float64)).mean()) - mean_abs) <= 1e-12 * mean_abs, "reduction_value vs the value")
    # The extension is loaded: the SQL functions work on the connection.
    check(t.con.execute("SELECT tensor_numel(value) FROM tensor_values WHERE trial = 'pt_bad_init' "
                        "AND tensor = 'Net_conv0.weight' AND step = 3").fetchone()[0] == 36, "extension loaded")
    # Every value of core_dtypes decodes to the bytes tensor_bytes gives (numpy's tobytes()), its
    # shape, and for strings to tensor_json's elements.
    import json
    c = trialdb.Trial(db, "core_dtypes", extension=EXTENSION)
    n = 0
    for tensor, step, dtype, shape, blob, raw, as_json in c.con.execute(
            "SELECT tensor, step, dtype, shape, value, tensor_bytes(value), tensor_json(value) FROM tensor_values "
            "WHERE trial = 'core_dtypes' AND value IS NOT NULL"):
        got = trialdb.decode(blob)
        if dtype == "string":
            ok = got.ravel().tolist() == json.loads(as_json) if got.ndim else [got.item()] == [json.loads(as_json)]
        else:
            ok = got.tobytes() == raw
        check(ok and (list(got.shape) == json.loads(shape) or (got.ndim == 0 and shape == "[1]")),
              "decode %s step %s (%s %s)" % (tensor, step, dtype, shape))
        n += 1
    check(n > 50, "decoded %d values" % n)
    # bfloat16: the top half of a float32, exactly.
    x = np.array([1.5, -2.25, 3.0e38, 0.0], dtype=np.float32)
    blob = bytes([0xB1, 10, 1, 0]) + struct.pack("<q", 4) + (x.view(np.uint32) >> 16).astype("<u2").tobytes()
    check(np.array_equal(trialdb.decode(blob), (x.view(np.uint32) & 0xFFFF0000).view(np.float32)), "bfloat16 decode")
    # frame(): a view of this trial as a DataFrame, filtered, with the view's columns in order.
    f = t.frame("reductions", tensor="Net_conv0.weight", reduction="mean", abs=1)
    expected = con.execute("SELECT step, value FROM reductions WHERE trial = 'pt_bad_init' AND tensor = 'Net_conv0.weight' "
                           "AND reduction = 'mean' AND abs = 1 ORDER BY step, worker").fetchall()
    check(list(f.columns) == [r[1] for r in con.execute("SELECT * FROM pragma_table_info('reductions')")],
          "frame columns: %r" % list(f.columns))
    check(sorted(zip(f["step"].tolist(), f["value"].tolist())) == sorted(expected) and len(expected) == 24,
          "frame rows equal the view's (%d rows, %d expected)" % (len(f), len(expected)))
    check(set(f["trial"]) == {"pt_bad_init"}, "frame of this trial only")
    d = t.frame("distributions", tensor="Net_conv0.weight")
    check(len(d) == 24 and d["count"].eq(36).all(), "distributions frame")
    try:
        t.frame("reductions", nope=1)
        check(False, "an unknown column is an error")
    except KeyError as e:
        check("reduction" in str(e), "unknown column lists the columns: %s" % e)
    # A value ingested with --values none: its header alone; value() says how to add the bytes.
    subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", db, "--name", "no_bytes",
                    "--values", "none", "-q"], check=False)
    try:
        trialdb.Trial(db, "no_bytes", extension=EXTENSION).value("Net_conv0.weight", 3)
        check(False, "a value without bytes is an error")
    except ValueError as e:
        check("--values none" in str(e) and "--values all" in str(e), "a value without bytes: %s" % e)
    try:
        trialdb.Trial(db, "nope")
        check(False, "an unknown trial is an error")
    except KeyError as e:
        check("pt_bad_init" in str(e), "unknown trial lists the trials: %s" % e)

# A file name with '#', '?' or '%' is that file, not the database its URI-decoded prefix names
# (runs#1.db, runs?x=1.db and run%73 are not runs).
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", os.path.join(tmp, "runs"),
                    "--name", "decoy", "-q"], check=True)
    for name in ("runs#1.db", "runs?x=1.db", "run%73", "runs%20x"):
        path = os.path.join(tmp, name)
        subprocess.run([TRIALDB, "ingest", os.path.join(FIXTURES, "core_dtypes"), "--db", path, "--name", name, "-q"],
                       check=True)
        try:
            trials = [r[0] for r in trialdb.open(path, extension=EXTENSION).execute("SELECT trial FROM trials")]
        except sqlite3.Error as e:
            trials = ["error: %s" % e]
        check(trials == [name], "open(%r) opens that file: trials %r" % (name, trials))

print("%d failures" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
