"""Loads build/lib/trialdb.so into /usr/bin/python3's sqlite3 (enable_load_extension /
load_extension) and queries it: every function once, errors as sqlite3 exceptions, blobs built
in Python per docs/BLOB_FORMAT.md, and a fixture database ingested by the CLI (a failed ingest
fails the test)."""
import sqlite3
import struct

from sqlext_testlib import Checker, args, connect, fixture_db

a = args()
c = Checker()
con = connect(a.module)


def one(sql, *params):
    return con.execute(sql, params).fetchone()[0]


def blob(code, dims, data):
    return bytes([0xB1, code, len(dims), 0]) + struct.pack("<%dq" % len(dims), *dims) + data


f32 = blob(11, [2, 2], struct.pack("<4f", 1.0, -2.0, 3.5, 0.0))
c.eq(one("SELECT tensor_dtype(?)", f32), "float32", "dtype")
c.eq(one("SELECT tensor_shape(?)", f32), "[2,2]", "shape")
c.eq(one("SELECT tensor_json(?)", f32), "[[1,-2],[3.5,0]]", "json")
c.eq(one("SELECT tensor_reduce(?, 'sum')", f32), 2.5, "sum")
c.eq(one("SELECT tensor_reduce(?, 'max', 1)", f32), 3.5, "max abs")
c.eq(one("SELECT tensor_at(?, 1, 0)", f32), 3.5, "at")
c.eq(one("SELECT tensor_count(?, '<', 0)", f32), 1, "count")
c.eq(one("SELECT tensor_bytes(?)", f32), f32[4 + 16:], "bytes")
c.eq(one("SELECT tensor_json(tensor_map(?, '*', 2))", f32), "[[2,-4],[7,0]]", "map")
c.eq(one("SELECT tensor_argmax(?)", f32), 2, "argmax")
c.eq(con.execute("SELECT idx, value FROM tensor_each(?)", (f32,)).fetchall(),
     [(0, 1.0), (1, -2.0), (2, 3.5), (3, 0.0)], "tensor_each")
c.eq(one("SELECT 'Net_conv0.weight' REGEXP '^(?!gradient).*weight'"), 1, "regexp 1")
c.eq(one("SELECT 'gradient/Net_conv0.weight' REGEXP '^(?!gradient).*weight'"), 0, "regexp 0")
c.eq(one("SELECT tensor_json(tensor_sum(v)) FROM (SELECT ? v UNION ALL SELECT ?)", f32, f32), "[[2,-4],[7,0]]", "tensor_sum")

for bad in [b"", b"\xb1", f32[:-1], f32 + b"\0", b"\xb2" + f32[1:], blob(99, [], b""), blob(11, [-1], b"")]:
    try:
        one("SELECT tensor_reduce(?, 'sum')", bad)
        c.true(False, "malformed blob %r raised" % bad[:12])
    except sqlite3.OperationalError as e:
        c.true(str(e).startswith("tensor_reduce: argument 1: "), "error message names the function: %s" % e)

db = fixture_db(a)
fx = connect(a.module, db)
n, bad = fx.execute("""
    SELECT count(*), sum(abs(tensor_reduce(v.value, r.reduction, r.abs) - r.value) > 1e-9 * (1 + abs(r.value)))
    FROM tensor_values v JOIN reductions r USING (trial, tensor, step, worker)
    WHERE v.value IS NOT NULL AND r.value IS NOT NULL""").fetchone()
c.true(n > 0, "fixture has raw values with reductions")
c.eq(bad, 0, "tensor_reduce agrees with the reductions view on the fixture")
# tensor_bytes is numpy's tobytes(): its sha256 is the golden file's (smdebug's own answer).
import hashlib
import json
import os
golden = json.load(open(os.path.join(a.fixtures, "pt_bad_init.golden.json")))["tensors"]
matched = 0
for tensor, step, worker, data, dtype in fx.execute(
        "SELECT tensor, step, worker, tensor_bytes(value), tensor_dtype(value) FROM tensor_values "
        "WHERE value IS NOT NULL"):
    g = golden.get(tensor, {}).get("values", {}).get("%d/%s" % (step, worker))
    if g is None or g.get("sha256") is None:
        continue
    matched += 1
    c.eq((dtype, hashlib.sha256(data).hexdigest()), (g["dtype"], g["sha256"]), "%s step %d bytes" % (tensor, step))
c.true(matched > 100, "fixture values checked against golden sha256 (%d)" % matched)
c.done()
