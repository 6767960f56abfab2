"""trialdb export --tensorboard, read back as TensorBoard reads it: every event file of every run
is split into TFRecords (CRCs checked), each record decoded with TensorBoard's own message
definitions (tensorboard_event.proto, compiled here with protoc), and every scalar, histogram and
text compared with the database it came from. Also: a re-export writes only new steps, and the
two exports together equal one fresh export; a hostile trial name stays inside the folder.

usage: tensorboard_export_test.py TRIALDB FIXTURES_DIR PROTOC EXTENSION (the trialdb SQL extension)"""
import collections
import glob
import math
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

import numpy as np

TRIALDB, FIXTURES, PROTOC, EXTENSION = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reliability"))
from common import masked_crc  # noqa: E402  (TFRecord's CRC, as the reliability tests compute it)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, expect=0):
    done = subprocess.run([TRIALDB, *args], capture_output=True, text=True)
    check(done.returncode == expect, "trialdb %s: exit %d, expected %d: %s" % (" ".join(args), done.returncode, expect,
                                                                               done.stderr.strip()))
    return done


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        payload = data[at + 12:at + 12 + length]
        (footer,) = struct.unpack_from("<I", data, at + 12 + length)
        check(length_crc == masked_crc(data[at:at + 8]) and footer == masked_crc(payload), "CRCs of a record in " + path)
        yield payload
        at += 12 + length + 4


def read_runs(folder, pb):
    """{(run, kind, tag, step): decoded value} of every event file under folder."""
    out = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(folder, "**", "*tfevents*"), recursive=True)):
        run_name = os.path.relpath(os.path.dirname(path), folder)
        events = [pb.Event.FromString(r) for r in records(path)]
        check(events[0].file_version == "brain.Event:2", "file_version first in " + path)
        for ev in events[1:]:
            for v in ev.summary.value:
                kind = v.WhichOneof("value")
                payload = {"simple_value": lambda: v.simple_value, "histo": lambda: v.histo,
                           "tensor": lambda: (v.metadata.plugin_data.plugin_name, v.tensor.string_val[0].decode())}[kind]()
                out[(run_name, kind, v.tag, ev.step)].append(payload)
    return out


def compare_with_database(db, events):
    con = sqlite3.connect(db)
    con.enable_load_extension(True)
    con.load_extension(EXTENSION)   # histogram_buckets reads the stored histograms through it
    mode_of = {(t, s): m.lower() for t, s, m in con.execute("SELECT trial, step, mode FROM steps WHERE complete")}
    scalars = {k: v for k, v in events.items() if k[1] == "simple_value"}
    histos = {k: v for k, v in events.items() if k[1] == "histo"}
    texts = {k: v for k, v in events.items() if k[1] == "tensor"}
    check(len(scalars) > 100 and len(histos) > 100 and len(texts) > 0,
          "scalars, histograms and texts written: %d %d %d" % (len(scalars), len(histos), len(texts)))
    # Losses under their own names; reductions under <collection>/<tensor>/<reduction>.
    for trial in ("pt_bad_init", "dist2"):
        for tensor, step, mean in con.execute(
                "SELECT tensor, global_step, avg(value) FROM reductions JOIN collections USING (trial, tensor) "
                "WHERE trial = ? AND collection = 'losses' AND reduction = 'mean' AND abs = 0 GROUP BY tensor, global_step",
                (trial,)):
            got = scalars.get((trial + "/" + mode_of[(trial, step)], "simple_value", tensor, step))
            check(got == [np.float32(mean)], "%s loss %s at %d: %r vs %r" % (trial, tensor, step, got, mean))
        for tensor, step, mean_abs in con.execute(
                "SELECT tensor, global_step, avg(value) FROM reductions JOIN collections USING (trial, tensor) "
                "WHERE trial = ? AND collection = 'gradients' AND reduction = 'mean' AND abs = 1 GROUP BY tensor, global_step",
                (trial,)):
            got = scalars.get((trial + "/" + mode_of[(trial, step)], "simple_value", "gradients/%s/mean_abs" % tensor, step))
            check(got == [np.float32(mean_abs)], "%s mean |%s| at %d: %r vs %r" % (trial, tensor, step, got, mean_abs))
    # Histograms: counts from histogram_buckets, the statistics from distributions and reductions.
    checked = 0
    for (run_name, _, tag, step), [h] in histos.items():
        trial, mode = run_name.split("/")
        tensor = tag.split("/", 1)[1]
        buckets = con.execute(
            "SELECT h.lo, h.hi, sum(h.count) FROM histogram_buckets h JOIN steps s ON s.trial = h.trial AND "
            "s.mode = h.mode AND s.mode_step = h.mode_step WHERE h.trial = ? AND h.tensor = ? AND s.step = ? "
            "GROUP BY h.lo, h.hi ORDER BY h.lo, h.hi", (trial, tensor, step)).fetchall()
        # TensorBoard's bucket i is (limit[i-1], limit[i]]: each non-empty one is a grid bucket
        # (lo, hi], the zeros' bucket (lo = hi = 0) one ending at 0.
        limits = [-math.inf] + list(h.bucket_limit)
        shown = [(limits[i], limits[i + 1], c) for i, c in enumerate(h.bucket) if c]
        expected = [(lo_, hi_, float(n)) for lo_, hi_, n in buckets]
        check(len(shown) == len(expected) and all(
                  (s[1], s[2]) == (e[1], e[2]) and (s[0] == e[0] or (e[0] == e[1] == 0 and s[0] < 0))
                  for s, e in zip(shown, expected)),
              "%s %s at %d: buckets %s vs %s" % (run_name, tag, step, shown[:3], expected[:3]))
        check(list(h.bucket_limit) == sorted(h.bucket_limit), "%s %s at %d: limits ascending" % (run_name, tag, step))
        lo, hi, num = con.execute(
            "SELECT min(d.p0), max(d.p100), sum(d.count - d.nan - d.pos_inf - d.neg_inf) FROM distributions d JOIN steps s "
            "ON s.trial = d.trial AND s.mode = d.mode AND s.mode_step = d.mode_step WHERE d.trial = ? AND d.tensor = ? "
            "AND s.step = ?", (trial, tensor, step)).fetchone()
        total, squares = con.execute(
            "SELECT sum(CASE WHEN reduction = 'sum' THEN value END), sum(CASE WHEN reduction = 'l2' THEN value * value END) "
            "FROM reductions WHERE trial = ? AND tensor = ? AND global_step = ? AND abs = 0", (trial, tensor, step)).fetchone()
        check((h.min, h.max, h.num) == (lo, hi, num) and h.num == sum(h.bucket),
              "%s %s at %d: min/max/num %r vs %r" % (run_name, tag, step, (h.min, h.max, h.num), (lo, hi, num)))
        check(h.sum == total and h.sum_squares == squares, "%s %s at %d: sum, sum_squares" % (run_name, tag, step))
        checked += 1
    check(checked > 100, "histograms compared: %d" % checked)
    # Findings: one text per rule and step, a line per finding.
    for trial, rule, step, n in con.execute("SELECT trial, rule, step, count(*) FROM rule_findings GROUP BY 1, 2, 3"):
        got = texts.get((trial + "/" + mode_of[(trial, step)], "tensor", "findings/" + rule, step))
        check(got is not None and got[-1][0] == "text" and got[-1][1].count("\n- ") + 1 == n,
              "%s findings of %s at %d: %r" % (trial, rule, step, got))


with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([PROTOC, "--python_out=" + tmp, "-I", HERE, os.path.join(HERE, "tensorboard_event.proto")], check=True)
    sys.path.insert(0, tmp)
    import tensorboard_event_pb2 as pb  # noqa: E402

    db = os.path.join(tmp, "t.db")
    runs, fresh = os.path.join(tmp, "runs"), os.path.join(tmp, "fresh")
    # A first export of part of a trial, then of the rest: the second writes only the new steps.
    run("ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", db, "--steps", ":12", "-q")
    run("ingest", os.path.join(FIXTURES, "dist2"), "--db", db, "-q")
    run("export", "--db", db, "--tensorboard", runs)
    first = read_runs(runs, pb)
    check(max(k[3] for k in first if k[0].startswith("pt_bad_init/")) < 12, "the first export has steps < 12 only")
    run("ingest", os.path.join(FIXTURES, "pt_bad_init"), "--db", db, "-q")
    run("rules", "--db", db, expect=0)
    files_before = set(glob.glob(os.path.join(runs, "**", "*tfevents*"), recursive=True))
    run("export", "--db", db, "--tensorboard", runs)
    new_files = set(glob.glob(os.path.join(runs, "**", "*tfevents*"), recursive=True)) - files_before
    check(new_files and all("pt_bad_init" in f or "dist2" in f for f in new_files), "the re-export added files")
    again = run("export", "--db", db, "--tensorboard", runs)
    check("nothing new to export" in again.stdout, "a third export writes nothing: %s" % again.stdout)
    incremental = read_runs(runs, pb)
    # Every step of the first export is in the incremental result once (no step written twice).
    check(all(len(v) == 1 for k, v in incremental.items() if k[1] != "tensor"), "no point written twice")
    run("export", "--db", db, "--tensorboard", fresh)
    check(read_runs(fresh, pb) == incremental, "two exports equal one fresh export")
    compare_with_database(db, incremental)

    # --tensors and --reductions choose what is written.
    chosen = os.path.join(tmp, "chosen")
    run("export", "--db", db, "--tensorboard", chosen, "--trial", "pt_bad_init", "--tensors", "fc", "--reductions",
        "max,l1_abs")
    tags = {k[2] for k in read_runs(chosen, pb)}
    check(any(t.endswith("/max") for t in tags) and any(t.endswith("/l1_abs") for t in tags)
          and not any(t.endswith("/mean_abs") for t in tags), "--reductions: %r" % sorted(tags)[:10])
    check(all("fc" in t for t in tags if t.count("/") >= 1 and not t.startswith("findings/")), "--tensors selects tensors")
    bad = run("export", "--db", db, "--tensorboard", chosen, "--reductions", "median", expect=2)
    check("median" in bad.stderr, "an unknown reduction is named: %s" % bad.stderr)
    run("export", "--db", db, "--out", chosen, "--tensors", "fc", expect=2)

    # A hostile trial name is one escaped folder inside the export.
    hostile = "../../escaped run"
    run("ingest", os.path.join(FIXTURES, "pt_good_init"), "--db", db, "--name", hostile, "-q")
    safe = os.path.join(tmp, "safe", "inside")
    run("export", "--db", db, "--tensorboard", safe, "--trial", hostile)
    check(os.listdir(os.path.join(tmp, "safe")) == ["inside"] and os.listdir(safe) == ["%2E.%2F..%2Fescaped%20run"],
          "escaped run folder: %r" % os.listdir(safe))

print("%d failures" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
