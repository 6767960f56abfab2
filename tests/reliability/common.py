"""Shared helpers of the reliability tests: running `trialdb`, comparing databases through their
public views, and damaging smdebug trials in controlled ways (TFRecord framing with CRC-32C,
hand-encoded Event protobufs, index JSON edits)."""
import json
import os
import resource
import shutil
import sqlite3
import struct
import subprocess
import tempfile

# ---------------------------------------------------------------------------------------------
# Running trialdb
# ---------------------------------------------------------------------------------------------


class Run:
    def __init__(self, rc, out, err, maxrss_kb):
        self.rc, self.out, self.err, self.maxrss_kb = rc, out, err, maxrss_kb

    def __repr__(self):
        return f"rc={self.rc} stderr={self.err[-2000:]!r}"


def run(argv, limits=None, timeout=300):
    """Runs argv; returns its exit code, output and own peak RSS.
    limits: {resource.RLIMIT_*: value} applied in the child.

    The peak RSS comes from GNU time wrapped around the command, not from wait4 on it: Linux
    counts the RSS a process had before exec (here, this Python process, which may hold hundreds
    of MB after writing big test tensors) into the child's ru_maxrss."""
    def pre():
        for k, v in (limits or {}).items():
            resource.setrlimit(k, (v, v))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as rss:
        p = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *argv], stdout=out, stderr=err,
                             preexec_fn=pre if limits else None)
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except BaseException:
            p.kill()
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = rss.read().strip().splitlines()
        maxrss = int(text[-1]) if text and text[-1].isdigit() else usage.ru_maxrss
        return Run(p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"), maxrss)


def ingest(trialdb, trial, db, name=None, extra=()):
    argv = [trialdb, "ingest", str(trial), "--db", str(db), "--quiet"] + list(extra)
    if name:
        argv += ["--name", name]
    return run(argv)


# ---------------------------------------------------------------------------------------------
# Reading databases through the public views
# ---------------------------------------------------------------------------------------------

VIEW_QUERIES = {
    "trials": "SELECT trial, workers, ended FROM trials ORDER BY 1",
    "steps": "SELECT * FROM steps ORDER BY 1, 2",
    "tensors": "SELECT * FROM tensors ORDER BY 1, 2",
    "collections": "SELECT * FROM collections ORDER BY 1, 2, 3",
    "tensor_values": "SELECT trial, tensor, step, worker, mode, mode_step, dtype, shape, hex(value) "
                     "FROM tensor_values ORDER BY 1, 2, 3, 4",
    "reductions": "SELECT trial, tensor, step, worker, reduction, abs, printf('%.17g', value) FROM reductions "
                  "ORDER BY 1, 2, 3, 4, 5, 6",
    "ingest_errors": "SELECT trial, file, step, message FROM ingest_errors ORDER BY 1, 2, 3, 4",
}


def connect(db):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    return c


def dump(db, views=VIEW_QUERIES, trial=None):
    """{view: [rows]} for every public view (optionally one trial's rows)."""
    c = connect(db)
    try:
        out = {}
        for v, q in views.items():
            rows = c.execute(q).fetchall()
            out[v] = [r for r in rows if trial is None or r[0] == trial]
        return out
    finally:
        c.close()


def rows_by_step(db, trial):
    """{step: sorted rows of tensor_values and reductions} (tensor_values.step is the tensor step,
    equal to the global step for TRAIN/EVAL trials)."""
    d = dump(db, {k: VIEW_QUERIES[k] for k in ("tensor_values", "reductions")}, trial)
    by = {}
    for view in ("tensor_values", "reductions"):
        for r in d[view]:
            by.setdefault(r[2], []).append((view,) + tuple(r[1:]))
    return {s: sorted(v) for s, v in by.items()}


def errors(db, trial=None):
    c = connect(db)
    try:
        rows = c.execute("SELECT trial, file, step, message FROM ingest_errors ORDER BY file, step").fetchall()
    finally:
        c.close()
    return [r for r in rows if trial is None or r[0] == trial]


def integrity(db):
    c = sqlite3.connect(str(db), timeout=30)
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        c.close()


# ---------------------------------------------------------------------------------------------
# Trials and damage
# ---------------------------------------------------------------------------------------------


def copy_trial(src, dst):
    shutil.copytree(src, dst)
    for root, dirs, files in os.walk(dst):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)
    return dst


def index_path(trial, step, worker="worker_0"):
    return os.path.join(trial, "index", f"{step // 1000:09d}", f"{step:012d}_{worker}.json")


def index_rel(step, worker="worker_0"):
    return f"index/{step // 1000:09d}/{step:012d}_{worker}.json"


def read_index(trial, step, worker="worker_0"):
    with open(index_path(trial, step, worker)) as f:
        return json.load(f)


def write_index(trial, step, doc, worker="worker_0"):
    with open(index_path(trial, step, worker), "w") as f:
        json.dump(doc, f)


def event_path(trial, step, worker="worker_0"):
    return os.path.join(trial, read_index(trial, step, worker)["meta"]["event_file_name"])


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload, real_crc=False, length=None):
    """One TFRecord record; length overrides the length field (its CRC stays valid)."""
    head = struct.pack("<Q", len(payload) if length is None else length)
    footer = masked_crc(payload) if real_crc else masked_crc(b"0x12345678")
    return head + struct.pack("<I", masked_crc(head)) + payload + struct.pack("<I", footer)


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num, wire, body):
    key = _varint((num << 3) | wire)
    if wire == 0:
        return key + _varint(body)
    return key + _varint(len(body)) + body


def tensor_event(tag, dtype, shape, content, step=0):
    """An Event{step, summary{value{tag, tensor{dtype, shape, tensor_content}}}} payload."""
    dims = b"".join(_field(2, 2, _field(1, 0, d)) for d in shape)
    tensor = _field(1, 0, dtype) + _field(2, 2, dims) + _field(4, 2, content)
    value = _field(1, 2, tag.encode()) + _field(8, 2, tensor)
    return _field(2, 0, step) + _field(5, 2, _field(1, 2, value))


def replace_record(trial, step, tensor, payload, worker="worker_0", real_crc=False):
    """Appends a record to the step's event file and points the index entry of tensor at it."""
    doc = read_index(trial, step, worker)
    ev = os.path.join(trial, doc["meta"]["event_file_name"])
    rec = frame(payload, real_crc)
    start = os.path.getsize(ev)
    with open(ev, "ab") as f:
        f.write(rec)
    for e in doc["tensor_payload"]:
        if e["tensorname"] == tensor:
            e["start_idx"], e["length"] = start, len(rec)
            break
    else:
        raise KeyError(tensor)
    write_index(trial, step, doc, worker)


def entry(trial, step, tensor, worker="worker_0"):
    for e in read_index(trial, step, worker)["tensor_payload"]:
        if e["tensorname"] == tensor:
            return e
    raise KeyError(tensor)


def patch_bytes(path, offset, fn):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([fn(b[0])]))
