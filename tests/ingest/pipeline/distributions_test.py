"""The distributions and histogram_buckets views against numpy, on every bundled fixture.

Each fixture is ingested with the built CLI and read back with /usr/bin/python3's sqlite3 and no
extension (the views are plain SQL). For every raw numeric value, decoded from its blob as
docs/BLOB_FORMAT.md describes:
- the counts and the 11 percentiles equal numpy's (nanpercentile, linear, on the values as float64);
- its histogram_buckets rows are exactly the buckets numpy computes from the float64 bit patterns
  (edges and counts), every element lies in its bucket (lo < x <= hi, or lo <= x < hi below
  zero), and the counts sum to the finite elements.
With the extension loaded, distribution_quantile over the buckets of every tensor merged across
all its steps and workers (and of every step merged across workers) is within the bucket width
(< 1%) of the exact quantile of the concatenated finite elements.

usage: distributions_test.py TRIALDB FIXTURES_DIR EXTENSION
"""
import math
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

NP = {0: "bool", 1: "int8", 2: "uint8", 3: "int16", 4: "uint16", 5: "int32", 6: "uint32", 7: "int64",
      8: "uint64", 9: "float16", 11: "float32", 12: "float64"}
BFLOAT16 = 10
PERCENTS = [0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100]
MAG = np.uint64(0x7FFFFFFFFFFFFFFF)
SHIFT = np.uint64(45)


def decode(blob):
    code, ndim, flags = blob[1], blob[2], blob[3]
    data = blob[4 + 8 * ndim:]
    if flags & 1:
        data = zlib.decompress(data[8:])
    if code == BFLOAT16:
        return (np.frombuffer(data, "<u2").astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if code not in NP:
        return None
    return np.frombuffer(data, NP[code]).astype(np.float64)


def expected_buckets(x):
    """{(lo, hi): count} of the finite elements, from their float64 bits (kernels/bucket_grid.h)."""
    x = x[np.isfinite(x)]
    bits = x.view(np.uint64)
    mag = bits & MAG
    k = np.where(mag == 0, 0, ((mag - np.uint64(1)) >> SHIFT).astype(np.int64) + 1)
    k = np.where(bits >> np.uint64(63) == 1, -k, k)
    out = {}
    for b, n in zip(*np.unique(k, return_counts=True)):
        b = int(b)
        m = abs(b)
        lo_mag = float(np.uint64((m - 1) << 45).view(np.float64)) if m else 0.0
        hi_mag = float(np.uint64(m << 45).view(np.float64)) if m else 0.0
        edges = (lo_mag, hi_mag) if b > 0 else (-hi_mag, -lo_mag) if b < 0 else (0.0, 0.0)
        out[edges] = int(n)
    return out


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a == b


QUANTILES = [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0]


def check_merged_quantiles(con, name, elements, failures):
    """elements: {(tensor, step, worker): finite float64 array}."""
    groups = {}
    for (tensor, step, worker), x in elements.items():
        groups.setdefault((tensor, None), []).append(x)
        groups.setdefault((tensor, step), []).append(x)
    checked = 0
    for (tensor, step), parts in groups.items():
        if len(parts) < 2:
            continue
        x = np.sort(np.concatenate(parts))
        if x.size == 0:
            continue
        for q in QUANTILES:
            sql = "SELECT distribution_quantile(lo, hi, count, ?) FROM histogram_buckets WHERE trial = ? AND tensor = ?"
            params = [q, name, tensor]
            if step is not None:
                sql += " AND step = ?"
                params.append(step)
            got = con.execute(sql, params).fetchone()[0]
            exact = float(np.quantile(x, q))
            v = (x.size - 1) * q
            lo, hi = x[int(math.floor(v))], x[min(int(math.floor(v)) + 1, x.size - 1)]
            bound = 0.0079 * max(abs(lo), abs(hi))   # the grid's buckets are at most 2^-7 wide
            if got is None or abs(got - exact) > bound:
                failures.append("%s %s step %s: quantile %g of the merged buckets is %r, exact %r" %
                                (name, tensor, "all" if step is None else step, q, got, exact))
        checked += 1
    return checked


def check_fixture(trialdb, fixture, db, failures, extension):
    ingest = subprocess.run([trialdb, "ingest", fixture, "--db", db], capture_output=True, text=True)
    if ingest.returncode != 0:  # a fixture whose ingest failed would otherwise be checked as empty
        failures.append("%s: ingest exited %d: %s" % (fixture, ingest.returncode, ingest.stderr.strip()[-500:]))
    con = sqlite3.connect(db)
    con.enable_load_extension(True)
    con.load_extension(extension)   # the histogram views read the stored histograms through it
    name = os.path.basename(fixture)
    dist = {(r[0], r[1], r[2]): r[3:] for r in con.execute(
        "SELECT tensor, step, worker, count, nan, pos_inf, neg_inf, zero, negative, positive, "
        "p0, p1, p5, p10, p25, p50, p75, p90, p95, p99, p100 FROM distributions WHERE trial = ?", (name,))}
    buckets = {}
    for tensor, step, worker, lo, hi, count in con.execute(
            "SELECT tensor, step, worker, lo, hi, count FROM histogram_buckets WHERE trial = ?", (name,)):
        buckets.setdefault((tensor, step, worker), {})[(lo, hi)] = count
    checked = 0
    elements = {}
    for tensor, step, worker, blob in con.execute(
            "SELECT tensor, step, worker, value FROM tensor_values WHERE trial = ? AND value IS NOT NULL", (name,)):
        x = decode(blob)
        key = (tensor, step, worker)
        where = "%s %s step %s %s" % (name, tensor, step, worker)
        if x is None:
            if key in dist:
                failures.append(where + ": a distribution for a non-numeric value")
            continue
        if key not in dist:
            failures.append(where + ": no distribution")
            continue
        finite = x[np.isfinite(x)]
        elements[key] = finite
        want = [x.size, int(np.isnan(x).sum()), int((x == np.inf).sum()), int((x == -np.inf).sum()),
                int((x == 0).sum()), int((finite < 0).sum()), int((finite > 0).sum())]
        with np.errstate(all="ignore"):
            kept = x[~np.isnan(x)]
            for p in PERCENTS:
                v = float(np.percentile(kept, p)) if kept.size else math.nan
                want.append(None if math.isnan(v) else v)
        got = list(dist[key])
        for label, g, w in zip(["count", "nan", "pos_inf", "neg_inf", "zero", "negative", "positive"] +
                               ["p%d" % p for p in PERCENTS], got, want):
            if not same(g, w):
                failures.append("%s: %s is %r, numpy says %r" % (where, label, g, w))
        have = buckets.get(key, {})
        if have != expected_buckets(x):
            failures.append("%s: buckets differ from numpy's: %d rows, expected %d" %
                            (where, len(have), len(expected_buckets(x))))
        if sum(have.values()) != finite.size:
            failures.append("%s: bucket counts sum to %d, %d finite elements" % (where, sum(have.values()), finite.size))
        for (lo, hi), n in have.items():
            inside = (finite == 0) if lo == hi == 0 else ((finite > lo) & (finite <= hi)) if lo >= 0 else \
                ((finite >= lo) & (finite < hi))
            if int(inside.sum()) != n:
                failures.append("%s: bucket (%r, %r] holds %d elements, the row says %d" % (where, lo, hi, inside.sum(), n))
        checked += 1
    merged = check_merged_quantiles(con, name, elements, failures)
    con.close()
    return checked, merged


def main():
    trialdb, fixtures, extension = sys.argv[1], sys.argv[2], sys.argv[3]
    failures = []
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in sorted(os.listdir(fixtures)):
            path = os.path.join(fixtures, f)
            if os.path.isdir(path):
                n, merged = check_fixture(trialdb, path, os.path.join(tmp, f + ".db"), failures, extension)
                print("%s: %d numeric values checked, %d merges" % (f, n, merged))
                total += n
    for f in failures[:40]:
        print("FAIL", f)
    if failures or total == 0:
        print("%d failures" % len(failures))
        return 1
    print("ok: %d values" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
