"""Histogram bins under hostile ranges (issue 17, C7): `plot distribution` and tensor_histogram
never index outside their bins, whatever the values or --range: a subnormal range, a single
distinct (subnormal or huge) value, values at +-DBL_MAX (a width past the largest double), only
NaN/Inf; a non-finite --range is a usage error.

Usage: histogram_bounds_test.py TRIALDB"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

TRIALDB = sys.argv[1]
DT_DOUBLE = 2
STEPS = 4
TINY = 5e-324            # the smallest subnormal
HUGE = 1.7976931348623157e308
NAN, INF = float("nan"), float("inf")
# tensor -> its elements at every step
CASES = {
    "Net_fc0.weight": [0.0, TINY, TINY, 0.0, 2 * TINY],          # a subnormal range
    "Net_fc0.bias": [TINY] * 5,                                   # one subnormal value
    "relu0_output_0": [-HUGE, HUGE, 0.0, HUGE, -HUGE],            # width past the largest double
    "CrossEntropyLoss_output_0": [NAN, INF, -INF, NAN, INF],      # nothing finite
    "gradient/Net_fc0.weight": [HUGE] * 5,                        # one value at the top
}
PNG = b"\x89PNG\r\n\x1a\n"


def build(tmp):
    trial = os.path.join(tmp, "t")
    subprocess.run([TRIALDB, "synth", trial, "--steps", str(STEPS), "--tensors", "4", "--elements", "8",
                    "--eval-every", "0"], check=True, stdout=subprocess.DEVNULL)
    for tensor, values in CASES.items():
        content = struct.pack(f"<{len(values)}d", *values)
        for step in range(STEPS):
            common.replace_record(trial, step, tensor,
                                  common.tensor_event(tensor, DT_DOUBLE, [len(values)], content, step), real_crc=True)
    db = os.path.join(tmp, "t.db")
    r = common.ingest(TRIALDB, trial, db, name="t")
    assert r.rc == 0, r
    return db


def plot(tmp, db, tensor, *extra, out="d.png"):
    path = os.path.join(tmp, out)
    if os.path.exists(path):
        os.remove(path)
    r = common.run([TRIALDB, "plot", "--db", db, "--out", path, "distribution", "--trial", "t", "--tensor", tensor,
                    *extra])
    return r, path


def test_plot(tmp, db):
    for tensor in CASES:
        for extra in ([], ["--bins", "2"], ["--bins", "1000"], ["--linear-color"]):
            for out in ("d.png", "d.svg"):
                r, path = plot(tmp, db, tensor, *extra, out=out)
                assert r.rc == 0, (tensor, extra, r)
                with open(path, "rb") as f:
                    head = f.read(256)
                assert head.startswith(PNG) if out.endswith(".png") else b"<svg" in head, (tensor, out)
    for lo, hi in (("0", "1e-320"), ("-1.7e308", "1.7e308"), ("-5e-324", "5e-324"), ("1e300", "1.5e300")):
        r, _ = plot(tmp, db, "Net_fc0.weight", "--range", lo, hi)
        assert r.rc == 0, (lo, hi, r)
        r, _ = plot(tmp, db, "relu0_output_0", "--range", lo, hi)
        assert r.rc == 0, (lo, hi, r)
    for lo, hi in (("-inf", "inf"), ("0", "inf"), ("-inf", "0"), ("nan", "nan"), ("0", "nan"), ("1", "1")):
        r, path = plot(tmp, db, "Net_fc0.weight", "--range", lo, hi)
        assert r.rc == 2 and "--range" in r.err and not os.path.exists(path), (lo, hi, r)


def histogram(db, sql):
    r = common.run([TRIALDB, "sql", "--db", db, "--csv", sql])
    assert r.rc == 0, (sql, r)
    return json.loads(r.out.splitlines()[1].strip().strip('"').replace('""', '"'))


def test_sql(db):
    for tensor, values in CASES.items():
        finite = [v for v in values if v == v and abs(v) != INF]
        for bins in (1, 2, 7):
            q = f"SELECT tensor_histogram(value, {bins}) FROM tensor_values WHERE tensor = '{tensor}' AND step = 0"
            if len(finite) < len(values):
                r = common.run([TRIALDB, "sql", "--db", db, q])
                assert r.rc == 1 and "not finite" in r.err, r
                continue
            h = histogram(db, q)
            assert len(h["counts"]) == bins and sum(h["counts"]) == len(values), (tensor, bins, h)
            assert len(h["edges"]) == bins + 1 and all(isinstance(e, (int, float)) for e in h["edges"]), h
        q = (f"SELECT tensor_histogram(value, 3, {-HUGE!r}, {HUGE!r}) FROM tensor_values "
             f"WHERE tensor = '{tensor}' AND step = 0")
        h = histogram(db, q)
        assert sum(h["counts"]) == len(finite), (tensor, h)
        assert all(isinstance(e, (int, float)) and e == e for e in h["edges"]), h
    # The two halves of the widest range: each extreme in its own end bin.
    h = histogram(db, "SELECT tensor_histogram(value, 2) FROM tensor_values WHERE tensor = 'relu0_output_0' AND step = 0")
    assert h["counts"] == [2, 3], h


def main():
    tmp = tempfile.mkdtemp(prefix="trialdb_hostile_hist_")
    try:
        db = build(tmp)
        test_plot(tmp, db)
        test_sql(db)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
