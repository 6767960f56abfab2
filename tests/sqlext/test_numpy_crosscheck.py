"""Every sqlext function compared with numpy's answer on random arrays of every real dtype, with
the extension loaded into /usr/bin/python3's sqlite3. Blobs are built and decoded here exactly
as docs/BLOB_FORMAT.md describes."""
import json
import math
import sqlite3
import struct
import sys

from sqlext_testlib import Checker, args, connect

try:
    import numpy as np
except ImportError:
    print("python3-numpy is not installed (scripts/setup.sh --tests installs it)")
    sys.exit(1)

a = args()
c = Checker()
con = connect(a.module)
rng = np.random.default_rng(2024)

CODES = {"bool": 0, "int8": 1, "uint8": 2, "int16": 3, "uint16": 4, "int32": 5, "uint32": 6, "int64": 7,
         "uint64": 8, "float16": 9, "float32": 11, "float64": 12}
NP = {v: k for k, v in CODES.items()}


def enc(x):
    x = np.array(x, order="C")  # (ascontiguousarray would turn 0-d into 1-d)
    return bytes([0xB1, CODES[x.dtype.name], x.ndim, 0]) + struct.pack("<%dq" % x.ndim, *x.shape) + x.tobytes()


def dec(b):
    ndim = b[2]
    dims = struct.unpack_from("<%dq" % ndim, b, 4)
    return np.frombuffer(b[4 + 8 * ndim:], dtype=NP[b[1]]).reshape(dims)


def one(sql, *params):
    return con.execute(sql, params).fetchone()[0]


def close(got, want, rtol=1e-9, what=""):
    if want is None or (isinstance(want, float) and math.isnan(want)):
        c.eq(got, None, what)
        return
    ok = got is not None and (got == want or abs(got - want) <= rtol * max(abs(want), 1e-300) or
                              (math.isinf(want) and got == want))
    c.true(ok, "%s: got %r want %r" % (what, got, want))


def sample(dtype, shape):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 3).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -50), min(info.max, 50)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


SHAPES = [(), (1,), (7,), (3, 4), (2, 3, 5), (64,)]
for dtype in CODES:
    for shape in SHAPES:
        x = np.asarray(sample(dtype, shape))
        b = enc(x)
        f = x.astype(np.float64)
        tag = "%s%s" % (dtype, list(shape))
        # metadata and bytes
        c.eq(one("SELECT tensor_dtype(?)", b), dtype, tag + " dtype")
        c.eq(json.loads(one("SELECT tensor_shape(?)", b)), list(shape), tag + " shape")
        c.eq(one("SELECT tensor_numel(?)", b), x.size, tag + " numel")
        c.eq(one("SELECT tensor_bytes(?)", b), x.tobytes(), tag + " bytes")
        # reductions (float64 accumulation, as numpy with dtype=float64)
        ax = np.abs(f)
        want = {"min": f.min(), "max": f.max(), "mean": f.mean(), "prod": np.prod(f), "std": f.std(),
                "variance": f.var(), "sum": f.sum(), "l1": ax.sum(), "l2": math.sqrt((f * f).sum())}
        want_abs = {"min": ax.min(), "max": ax.max(), "mean": ax.mean(), "prod": np.prod(ax), "std": ax.std(),
                    "variance": ax.var(), "sum": ax.sum(), "l1": ax.sum(), "l2": math.sqrt((f * f).sum())}
        for name in want:
            close(one("SELECT tensor_reduce(?, ?)", b, name), float(want[name]), 1e-9, tag + " " + name)
            close(one("SELECT tensor_reduce(?, ?, 1)", b, name), float(want_abs[name]), 1e-9, tag + " abs " + name)
        # json, at, each, from_json round trip
        got = np.array(json.loads(one("SELECT tensor_json(?)", b)), dtype=x.dtype)
        c.true(got.shape == x.shape and np.array_equal(got, x), tag + " tensor_json")
        c.true(one("SELECT tensor_from_json(tensor_json(?1), tensor_dtype(?1))", b) == b, tag + " from_json round trip")
        flat = x.reshape(-1)
        for i in (0, -1, x.size // 2):
            v = one("SELECT tensor_at(?, ?)", b, i)
            c.eq(v, flat[i].item() if dtype != "bool" else int(flat[i]), tag + " tensor_at flat %d" % i)
        if x.ndim >= 2:
            idx = tuple(int(rng.integers(-d, d)) for d in x.shape)
            c.eq(one("SELECT tensor_at(?, %s)" % ",".join(map(str, idx)), b), x[idx].item(), tag + " tensor_at %s" % (idx,))
        rows = con.execute("SELECT idx, value FROM tensor_each(?)", (b,)).fetchall()
        c.eq([v for _, v in rows], [e.item() if dtype != "bool" else int(e) for e in flat], tag + " tensor_each")
        # counts
        for op, fnp in (("<", np.less), ("<=", np.less_equal), (">", np.greater), (">=", np.greater_equal),
                        ("=", np.equal), ("!=", np.not_equal)):
            c.eq(one("SELECT tensor_count(?, ?, 0)", b, op), int(fnp(f, 0).sum()), tag + " count " + op)
        c.eq(one("SELECT tensor_count(?, 'zero')", b), int((f == 0).sum()), tag + " count zero")
        close(one("SELECT tensor_fraction(?, '>', 0)", b), float((f > 0).mean()), 1e-15, tag + " fraction")
        # percentile, histogram
        for p in (0, 12.5, 50, 90, 100):
            close(one("SELECT tensor_percentile(?, ?)", b, p), float(np.percentile(f, p)), 1e-12, tag + " percentile %g" % p)
        ps = [0, 1, 5, 12.5, 50, 50, 90, 99, 100]
        got = json.loads(one("SELECT tensor_percentiles(?, ?)", b, json.dumps(ps)))
        c.eq(got, [float(np.percentile(f, p)) for p in ps], tag + " percentiles")
        h = json.loads(one("SELECT tensor_histogram(?, 5)", b))
        counts, edges = np.histogram(x if dtype != "bool" else f, bins=5)
        c.eq(h["counts"], counts.tolist(), tag + " histogram counts")
        # float16 edges: numpy rounds its intermediate steps in float16 too; agree to its precision.
        c.true(np.allclose(h["edges"], edges, rtol=1e-6 if dtype != "float16" else 2e-3, atol=0 if dtype != "float16" else 1e-3), tag + " histogram edges %s vs %s" % (h["edges"], edges.tolist()))
        h = json.loads(one("SELECT tensor_histogram(?, 4, -1, 2)", b))
        c.eq(h["counts"], np.histogram(f, bins=4, range=(-1, 2))[0].tolist(), tag + " histogram range counts")
        # elementwise, compare
        y = np.asarray(sample(dtype, shape))
        by = enc(y)
        fy = y.astype(np.float64)
        for op, fnp in (("+", np.add), ("-", np.subtract), ("*", np.multiply)):
            c.true(np.array_equal(dec(one("SELECT tensor_binop(?, ?, ?)", b, op, by)), fnp(f, fy)), tag + " binop " + op)
            c.true(np.array_equal(dec(one("SELECT tensor_map(?, ?, 2.5)", b, op)), fnp(f, 2.5)), tag + " map " + op)
        c.true(np.array_equal(dec(one("SELECT tensor_map(?, '>=', 0)", b)), f >= 0), tag + " map >=")
        c.true(np.array_equal(dec(one("SELECT tensor_map(?, 'abs')", b)), np.abs(f)), tag + " map abs")
        c.eq(one("SELECT tensor_allclose(?, ?)", b, by), int(np.allclose(f, fy)), tag + " allclose")
        c.eq(one("SELECT tensor_allclose(?, ?)", b, b), 1, tag + " allclose self")
        close(one("SELECT tensor_diff_norm(?, ?)", b, by), float(np.linalg.norm((f - fy).ravel())), 1e-12, tag + " diff_norm")
        # axis operations
        c.eq(one("SELECT tensor_argmax(?)", b), int(np.argmax(x)), tag + " argmax")
        for axis in range(x.ndim):
            got = dec(one("SELECT tensor_reduce_axis(?, 'sum', ?)", b, axis))
            c.true(np.allclose(got, f.sum(axis=axis), rtol=1e-12), tag + " reduce_axis sum %d" % axis)
            got = dec(one("SELECT tensor_reduce_axis(?, 'std', ?)", b, axis))
            c.true(np.allclose(got, f.std(axis=axis), rtol=1e-9), tag + " reduce_axis std %d" % axis)
            c.true(np.array_equal(dec(one("SELECT tensor_argmax(?, ?)", b, axis)), np.argmax(x, axis=axis)),
                   tag + " argmax axis %d" % axis)
        if dtype not in ("bool", "uint64") and not dtype.startswith("float") and x.size and x.min() >= 0:
            c.true(np.array_equal(dec(one("SELECT tensor_bincount(?)", b)), np.bincount(x.ravel())), tag + " bincount")
        # aggregates
        got = dec(one("SELECT tensor_sum(v) FROM (SELECT ? v UNION ALL SELECT ?)", b, by))
        c.true(np.array_equal(got, f + fy), tag + " tensor_sum")
        if x.ndim:
            got = dec(one("SELECT tensor_concat(v) FROM (SELECT ? v UNION ALL SELECT ?)", b, by))
            c.true(np.array_equal(got, np.concatenate([x, y])), tag + " tensor_concat")

# float64 percentiles and the NaN rules
x = rng.standard_normal(1001)
for p in (0.1, 33.3, 66.6, 99.9):
    c.eq(one("SELECT tensor_percentile(?, ?)", enc(x), p), float(np.percentile(x, p)), "float64 percentile exact %g" % p)
# Large float32 values are binned through the prefix table: values on and near every edge,
# outside the range, NaN and Inf included.
big = (rng.standard_normal(300000) * 2).astype("float32")
edges = np.linspace(-1, 2, 51).astype("float32")
big[:51] = edges
big[51:102] = np.nextafter(edges, np.float32(-9))
big[102:153] = np.nextafter(edges, np.float32(9))
big[200:210] = np.nan
big[210:220] = np.inf
big[220:230] = -np.inf
h = json.loads(one("SELECT tensor_histogram(?, 50, -1, 2)", enc(big)))
c.eq(h["counts"], np.histogram(big[np.isfinite(big)], bins=50, range=(-1, 2))[0].tolist(), "float32 prefix-table histogram")
fin = big[np.isfinite(big)]
h = json.loads(one("SELECT tensor_histogram(?, 7)", enc(fin)))
c.eq(h["counts"], np.histogram(fin, bins=7)[0].tolist(), "float32 prefix-table histogram, default range")
many = [float(p) for p in np.linspace(0, 100, 301)]   # more than one selection pass holds
c.eq(json.loads(one("SELECT tensor_percentiles(?, ?)", enc(x), json.dumps(many))),
     [float(np.percentile(x, p)) for p in many], "float64 percentiles exact, 301 of them")
x[17] = np.nan
c.eq(one("SELECT tensor_percentiles(?, '[5, 95]')", enc(x)), "[null,null]", "NaN percentiles are null")
c.eq(one("SELECT tensor_reduce(?, 'mean')", enc(x)), None, "NaN mean is NULL")
c.eq(one("SELECT tensor_argmax(?)", enc(x)), int(np.argmax(x)), "argmax with NaN")
c.eq(one("SELECT tensor_count(?, 'nan')", enc(x)), 1, "count nan")


# Values a few ulps apart, where neighbouring edges round to one number: numpy corrects its bin
# estimate once (numpy/lib/histograms.py), in the values' own dtype for float32 and float16, and
# tensor_histogram and tensor_percentile must answer exactly as numpy does. 3,000 random cases.
def ulp_case(k):
    dtype = ["float64", "float32", "float16"][k % 3]
    scale = float(rng.choice([1.0, -1.0, 0.1, -3.0, 1e-3, 1234.5])) * 10.0 ** float(rng.integers(-3, 4))
    if dtype == "float16":
        scale = float(np.clip(scale, -6e4, 6e4)) or 1.0
    x = np.full(int(rng.integers(1, 12)), scale, dtype=dtype)
    for i in range(x.size):
        for _ in range(int(rng.integers(0, 4))):
            x[i] = np.nextafter(x[i], np.array(np.inf, dtype=dtype))
    return x


mismatched = {"histogram": [], "histogram range": [], "percentile": []}
for k in range(3000):
    x = ulp_case(k)
    b = enc(x)
    bins = int(rng.integers(1, 21))
    h = json.loads(one("SELECT tensor_histogram(?, ?)", b, bins))
    counts, edges = np.histogram(x, bins=bins)
    if h["counts"] != counts.tolist() or not np.array_equal(np.array(h["edges"], dtype=edges.dtype), edges):
        mismatched["histogram"].append((x.dtype.name, x.tolist(), bins, h, counts.tolist(), edges.tolist()))
    lo, hi = float(x.min()), float(x.max()) * (1 + float(rng.integers(0, 2)) * 2.0 ** -52)
    if lo < hi:
        h = json.loads(one("SELECT tensor_histogram(?, ?, ?, ?)", b, bins, lo, hi))
        counts, edges = np.histogram(x, bins=bins, range=(lo, hi))
        if h["counts"] != counts.tolist() or not np.array_equal(np.array(h["edges"], dtype=edges.dtype), edges):
            mismatched["histogram range"].append((x.dtype.name, x.tolist(), bins, lo, hi, h, counts.tolist()))
    p = float(rng.choice([0, 100, float(rng.uniform(0, 100)), 50, 12.5]))
    want = float(np.percentile(x.astype(np.float64), p))
    got = one("SELECT tensor_percentile(?, ?)", b, p)
    if got != want:
        mismatched["percentile"].append((x.dtype.name, x.tolist(), p, got, want))
for what, cases in mismatched.items():
    c.true(not cases, "%s of values a few ulps apart: %d of 3000 differ from numpy, e.g. %r"
           % (what, len(cases), cases[:2]))

# tensor_json is UTF-8 text whatever bytes a string tensor holds (Python's sqlite3 fetches it);
# each byte that starts no character is U+FFFD (here as Python's decode(errors="replace") gives).
elements = [b"ok", b"bad \xff\xfe end", b"\xc3\xa9t\xc3", b"\xed\xa0\x80"]
blob = bytes([0xB1, 15, 1, 0]) + struct.pack("<q", len(elements)) + b"".join(
    struct.pack("<I", len(e)) + e for e in elements)
try:
    text = one("SELECT tensor_json(?)", blob)
    c.eq(json.loads(text), [e.decode("utf-8", "replace") for e in elements], "tensor_json of invalid UTF-8")
except sqlite3.Error as e:
    c.true(False, "tensor_json of invalid UTF-8 cannot be fetched: %s" % e)
c.done()
