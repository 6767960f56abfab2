#!/usr/bin/python3
"""Parity with smdebug: ingests every fixture under tests/data/fixtures with the built CLI and
compares the public views with <fixture>.golden.json, which holds what smdebug's own Trial API
answered (tensor names, steps, modes and mode steps, workers, collections, every value's dtype,
shape and sha256, every reduction). Tolerances and smdebug quirks follow tests/data/fixtures/README.md.

Blobs are decoded here from docs/BLOB_FORMAT.md, without the extension, so this test also checks
that the format is self-describing.

usage: parity_test.py TRIALDB_BINARY FIXTURES_DIR [FIXTURE ...]
"""
import hashlib, json, math, os, sqlite3, struct, subprocess, sys, tempfile, zlib

BIN, FX = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or sorted(d for d in os.listdir(FX) if os.path.isdir(os.path.join(FX, d)))
tmp = tempfile.mkdtemp()
db = os.path.join(tmp, "parity.db")
ok = bad = 0
if not names:
    sys.exit(f"no fixtures under {FX}: nothing to compare")


def check(cond, what):
    global ok, bad
    if cond:
        ok += 1
    else:
        bad += 1
        if bad <= 40:
            print("MISMATCH", what)


def blob_bytes(b):
    """The data section of a value blob (docs/BLOB_FORMAT.md)."""
    assert b[0] == 0xB1, "bad magic"
    ndim, flags = b[2], b[3]
    data = b[4 + 8 * ndim:]
    if flags & 1:
        raw = struct.unpack_from("<Q", data)[0]
        data = zlib.decompress(data[8:])
        assert len(data) == raw
    return bytes(data)


def scale_of(rn, reds, gv):
    def num(k):
        x = reds.get(k)
        return x if isinstance(x, (int, float)) else None
    ma, sa, va = num("mean_abs"), num("sum_abs"), num("variance_abs")
    s = abs(gv) if isinstance(gv, (int, float)) else 0.0
    if rn == "sum" and sa is not None:
        s = max(s, sa)
    if rn == "mean" and ma is not None:
        s = max(s, ma)
    if rn in ("variance", "std") and ma is not None and va is not None:
        s = max(s, va + ma * ma if rn == "variance" else (va + ma * ma) ** 0.5)
    return s


def close(a, g, tol, scale):
    if g is None:
        return a is None
    if isinstance(g, str):
        return a is not None and math.isinf(a) and (a > 0) == (g == "inf")
    return a is not None and abs(a - g) <= tol * scale + 1e-12


for t in names:
    r = subprocess.run([BIN, "ingest", os.path.join(FX, t), "--db", db, "--name", t], capture_output=True, text=True)
    check(r.returncode == 0, f"{t}: ingest exit code {r.returncode}: {r.stderr[-300:]}")
c = sqlite3.connect(db)
for t in names:
    G = json.load(open(os.path.join(FX, t + ".golden.json")))
    q = lambda sql, *p: c.execute(sql, (t, *p)).fetchall()
    check(sorted(r[0] for r in q("SELECT tensor FROM tensors WHERE trial=?")) == G["tensor_names"], f"{t}: tensor names")
    check(sorted(r[0] for r in q("SELECT step FROM steps WHERE trial=? AND complete")) == G["steps"], f"{t}: steps")
    check(sorted({r[0] for r in q("SELECT DISTINCT worker FROM tensor_values WHERE trial=?")}) == G["workers"], f"{t}: workers")
    check(q("SELECT workers FROM trials WHERE trial=?") == [(len(G["workers"]),)], f"{t}: trials.workers")
    check(q("SELECT ended FROM trials WHERE trial=?") == [(1,)], f"{t}: trials.ended")
    for m, ms in G["mode_steps"].items():
        check(sorted(r[0] for r in q("SELECT mode_step FROM steps WHERE trial=? AND mode=? AND complete", m)) == ms, f"{t}: {m} mode steps")
    for g, (m, ms) in G["global_to_mode"].items():
        check(q("SELECT mode, mode_step FROM steps WHERE trial=? AND step=?", int(g)) == [(m, ms)], f"{t}: step {g} mode")
    for cn, members in G["collections"].items():
        check(sorted(r[0] for r in q("SELECT tensor FROM collections WHERE trial=? AND collection=?", cn)) == members, f"{t}: collection {cn}")
    for name, rec in G["tensors"].items():
        got_steps = sorted({r[0] for r in q("SELECT step FROM tensor_values WHERE trial=? AND tensor=?", name)})
        check(got_steps == rec["steps"], f"{t}: steps of {name}: {got_steps} != {rec['steps']}")
        for mode, ms in rec["by_mode"].items():
            got = sorted({r[0] for r in q("SELECT mode_step FROM tensor_values WHERE trial=? AND tensor=? AND mode=?", name, mode)})
            check(got == ms, f"{t}: {mode} mode steps of {name}")
        for key, v in rec["values"].items():
            step, worker = key.split("/", 1)
            step = int(step)
            rows = q("SELECT dtype, shape, value FROM tensor_values WHERE trial=? AND tensor=? AND step=? AND worker=?", name, step, worker)
            check(len(rows) == 1, f"{t}: one tensor_values row for {name}@{key}, got {len(rows)}")
            if len(rows) != 1:
                continue
            dtype, shape, blob = rows[0]
            if "dtype" in v:
                gd = "string" if v["dtype"].startswith("<U") else v["dtype"]
                check(dtype == gd, f"{t}: dtype {name}@{key}: {dtype} != {gd}")
                check(shape is not None and json.loads(shape) == v["shape"], f"{t}: shape {name}@{key}: {shape}")
                if v.get("sha256"):
                    check(blob is not None and hashlib.sha256(blob_bytes(blob)).hexdigest() == v["sha256"], f"{t}: bytes {name}@{key}")
            elif "shape_api" in v:
                check(shape is not None and json.loads(shape) == v["shape_api"], f"{t}: saved shape {name}@{key}")
            reds = {(rn, a): x for rn, a, x in q("SELECT reduction, abs, value FROM reductions WHERE trial=? AND tensor=? AND step=? AND worker=?", name, step, worker)}
            raw_saved = "dtype" in v
            ndim = len(v.get("shape", v.get("shape_api", [])))
            tol = 2e-2 if v.get("dtype") == "float16" else 1e-5
            for k, gv in v["reductions"].items():
                rn, ab = (k[:-4], 1) if k.endswith("_abs") else (k, 0)
                if isinstance(gv, str) and gv.startswith("unavailable"):
                    if not raw_saved:
                        check((rn, ab) not in reds, f"{t}: {k} of {name}@{key} cannot be known without the raw value")
                    continue
                # smdebug quirks not reproduced (fixtures README): matrix norms, overflowed or
                # underflowed products, integer wrap-around.
                if raw_saved and rn in ("l1", "l2") and ndim >= 2:
                    continue
                if raw_saved and rn in ("prod", "sum", "variance", "std") and (gv in ("inf", "-inf") or (isinstance(gv, float) and (abs(gv) > 1e30 or (rn == "prod" and 0 < abs(gv) < 1e-30)))):
                    continue
                if raw_saved and rn == "prod" and gv == 0.0:
                    continue
                if raw_saved and rn == "prod" and v.get("dtype", "").startswith(("int", "uint")) and isinstance(gv, float) and abs(gv) >= 2 ** 53:
                    continue
                check((rn, ab) in reds and close(reds[(rn, ab)], gv, tol, scale_of(rn, v["reductions"], gv)),
                      f"{t}: {k} of {name}@{key}: {reds.get((rn, ab))} vs {gv}")

# Idempotence: a second ingest of every fixture adds nothing.
before = c.execute("SELECT (SELECT count(*) FROM tensor_values), (SELECT count(*) FROM reductions), (SELECT count(*) FROM steps)").fetchone()
c.close()
for t in names:
    r = subprocess.run([BIN, "ingest", os.path.join(FX, t), "--db", db, "--name", t], capture_output=True, text=True)
    check(r.returncode == 0, f"{t}: second ingest exit code {r.returncode}")
c = sqlite3.connect(db)
after = c.execute("SELECT (SELECT count(*) FROM tensor_values), (SELECT count(*) FROM reductions), (SELECT count(*) FROM steps)").fetchone()
check(before == after, f"re-ingest changed row counts {before} -> {after}")
print(f"parity: {ok} checks agree, {bad} mismatch")
print(f"{ok} passed, {bad} failed")
sys.exit(1 if bad else 0)
