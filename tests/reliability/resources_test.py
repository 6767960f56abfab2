"""Resources: memory and file descriptors stay bounded whatever the trial's size.

  1. One 1 GiB float32 tensor ingests with peak RSS under 3 GiB (measured with wait4 on the
     child). Its event file is sparse (zero pages except a few marked elements), so the test
     costs no disk. The value is larger than SQLite's largest value (SQLITE_MAX_LENGTH, 1e9 bytes
     in Debian's build): it is reported, and its dtype, shape and reductions are stored.
  2. A trial of 100,000 files (50,000 steps, an index and an event file each) ingests with
     RLIMIT_NOFILE = 64.
  3. A trial several times larger than the ingester's peak RSS: memory does not grow with the
     trial, the database file does.

usage: resources_test.py <trialdb>
"""
import os
import resource
import shutil
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

F = C._field
GIB = 1 << 30


def tensor_event_prefix(tag, dtype, shape, content_len, step=0):
    """The bytes of an Event up to its tensor_content's data (which comes last), without the data."""
    dims = b"".join(F(2, 2, F(1, 0, d)) for d in shape)
    content_key = C._varint((4 << 3) | 2) + C._varint(content_len)
    tensor_head = F(1, 0, dtype) + F(2, 2, dims) + content_key
    tensor_len = len(tensor_head) + content_len
    value_head = F(1, 2, tag.encode()) + C._varint((8 << 3) | 2) + C._varint(tensor_len) + tensor_head
    value_len = len(value_head) + content_len
    summary_head = C._varint((1 << 3) | 2) + C._varint(value_len)
    summary_len = len(summary_head) + value_len
    event_head = F(2, 0, step) + C._varint((5 << 3) | 2) + C._varint(summary_len)
    prefix = event_head + summary_head + value_head
    return prefix, len(prefix) + content_len


def write_sparse_tensor_trial(root, name, shape, marks, steps=1):
    """A trial of steps steps whose single float32 tensor is zeros except marks {element: value}."""
    numel = 1
    for d in shape:
        numel *= d
    content_len = numel * 4
    os.makedirs(os.path.join(root, "index", "000000000"))
    os.makedirs(os.path.join(root, "collections", "000000000"))
    for step in range(steps):
        prefix, payload_len = tensor_event_prefix(name, 1, shape, content_len, step)   # the record names its step
        os.makedirs(os.path.join(root, "events", f"{step:012d}"))
        ev_rel = f"events/{step:012d}/{step:012d}_worker_0.tfevents"
        head = struct.pack("<Q", payload_len)
        with open(os.path.join(root, ev_rel), "wb") as f:
            f.write(head + struct.pack("<I", C.masked_crc(head)) + prefix)
            data_at = f.tell()
            for i, v in marks.items():
                f.seek(data_at + 4 * i)
                f.write(struct.pack("<f", v))
            f.seek(data_at + content_len)
            f.write(struct.pack("<I", C.masked_crc(b"0x12345678")))
            size = f.tell()
        with open(os.path.join(root, "index", "000000000", f"{step:012d}_worker_0.json"), "w") as f:
            f.write('{"meta": {"mode": "TRAIN", "mode_step": %d, "event_file_name": "%s"}, '
                    '"tensor_payload": [{"tensorname": "%s", "start_idx": 0, "length": %d}]}'
                    % (step, ev_rel, name, size))
    with open(os.path.join(root, "collections", "000000000", "worker_0_collections.json"), "w") as f:
        f.write('{"collections": {"weights": {"name": "weights", "include_regex": ["weight"]}}, '
                '"_meta": {"num_workers": 1}}')
    open(os.path.join(root, "training_job_end.ts"), "w").close()
    return size


def write_many_files_trial(root, steps):
    """steps steps of one tiny scalar each: 2 * steps files (each record names its own step)."""
    os.makedirs(os.path.join(root, "collections", "000000000"))
    with open(os.path.join(root, "collections", "000000000", "worker_0_collections.json"), "w") as f:
        f.write('{"collections": {"losses": {"name": "losses", "include_regex": ["loss"]}}, '
                '"_meta": {"num_workers": 1}}')
    for s in range(steps):
        rec = C.frame(C.tensor_event("loss", 1, [], b"\0\0\x80\x3f", s))
        ev = f"events/{s:012d}/{s:012d}_worker_0.tfevents"
        os.makedirs(os.path.join(root, "events", f"{s:012d}"))
        with open(os.path.join(root, ev), "wb") as f:
            f.write(rec)
        idir = os.path.join(root, "index", f"{s // 1000:09d}")
        if s % 1000 == 0:
            os.makedirs(idir)
        with open(os.path.join(idir, f"{s:012d}_worker_0.json"), "w") as f:
            f.write('{"meta": {"mode": "TRAIN", "mode_step": %d, "event_file_name": "%s"}, '
                    '"tensor_payload": [{"tensorname": "loss", "start_idx": 0, "length": %d}]}' % (s, ev, len(rec)))
    open(os.path.join(root, "training_job_end.ts"), "w").close()


def scalar(db, sql):
    c = C.connect(db)
    try:
        return c.execute(sql).fetchone()[0]
    finally:
        c.close()


def main():
    trialdb = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="trialdb_resources_")
    try:
        # 1. A single 1 GiB tensor.
        big = os.path.join(tmp, "big")
        shape = [256, 1 << 20]
        last = shape[0] * shape[1] - 1
        size = write_sparse_tensor_trial(big, "Net_big.weight", shape, {0: 1.0, last // 2: -2.0, last: 3.0})
        assert size > GIB
        db = os.path.join(tmp, "big.db")
        r = C.ingest(trialdb, big, db, name="big")
        peak = r.maxrss_kb * 1024
        print(f"1 GiB tensor: exit {r.rc}, peak RSS {peak / GIB:.2f} GiB")
        assert peak < 3 * GIB, f"peak RSS {peak / GIB:.2f} GiB"
        con = sqlite3.connect(":memory:")
        limit = con.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)   # the same libsqlite3 trialdb links
        con.close()
        if GIB + 64 > limit:   # Debian's SQLite (1e9): reported; dtype, shape, reductions stored
            assert r.rc == 4, r
            assert f"over SQLite's limit of {limit} bytes" in r.err and "Net_big.weight" in r.err \
                and "(step 0)" in r.err, r.err
            assert scalar(db, "SELECT value IS NULL FROM tensor_values WHERE tensor = 'Net_big.weight'") == 1
        else:
            assert r.rc == 0, r
            assert scalar(db, "SELECT length(value) FROM tensor_values WHERE tensor = 'Net_big.weight'") > GIB
        assert scalar(db, "SELECT dtype || shape FROM tensor_values WHERE tensor = 'Net_big.weight'") == \
            "float32[256,1048576]"
        red = dict(C.connect(db).execute(
            "SELECT reduction, value FROM reductions WHERE tensor = 'Net_big.weight' AND abs = 0").fetchall())
        assert (red["sum"], red["min"], red["max"], red["l1"]) == (2.0, -2.0, 3.0, 6.0), red
        assert scalar(db, "SELECT count(*) FROM collections WHERE tensor = 'Net_big.weight'") == 1
        shutil.rmtree(big)

        # 1b. Several big tensors that SQLite can hold: stored whole, and the ingester does not
        #     read a window of them ahead at once (its read-ahead budget is 512 MiB).
        big = os.path.join(tmp, "bigs")
        shape = [75, 1 << 20]   # 300 MiB each
        last = shape[0] * shape[1] - 1
        write_sparse_tensor_trial(big, "Net_big.weight", shape, {0: 1.5, last: -0.5}, steps=3)
        db = os.path.join(tmp, "bigs.db")
        r = C.ingest(trialdb, big, db, name="bigs", extra=["--threads", "2"])
        assert r.rc == 0, r
        peak = r.maxrss_kb * 1024
        print(f"3 x 300 MiB tensors: stored, peak RSS {peak / GIB:.2f} GiB")
        assert scalar(db, "SELECT count(*) FROM tensor_values WHERE length(value) > 300 * 1048576") == 3, \
            scalar(db, "SELECT group_concat(length(value)) FROM tensor_values")
        assert scalar(db, "SELECT group_concat(value) FROM reductions WHERE reduction = 'sum' AND abs = 0") == "1.0,1.0,1.0"
        assert peak < 1.5 * GIB, f"peak RSS {peak / GIB:.2f} GiB for 300 MiB tensors"
        shutil.rmtree(big)
        os.remove(db)

        # 2. 100,000 files with 64 file descriptors.
        many = os.path.join(tmp, "many")
        write_many_files_trial(many, 50000)
        n_files = sum(len(f) for _, _, f in os.walk(many))
        db = os.path.join(tmp, "many.db")
        r = C.run([trialdb, "ingest", many, "--db", db, "--quiet"], limits={resource.RLIMIT_NOFILE: 64})
        assert r.rc == 0, r
        assert scalar(db, "SELECT count(*) FROM steps WHERE complete") == 50000
        assert scalar(db, "SELECT count(*) FROM tensor_values") == 50000
        print(f"{n_files} files ingested with RLIMIT_NOFILE 64, peak RSS {r.maxrss_kb // 1024} MiB")
        assert n_files >= 100000
        shutil.rmtree(many)

        # 3. Memory does not follow the trial's size.
        mid = os.path.join(tmp, "mid")
        r = C.run([trialdb, "synth", mid, "--steps", "120", "--tensors", "10", "--elements", "125000"])
        assert r.rc == 0, r
        trial_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(mid) for f in fs)
        db = os.path.join(tmp, "mid.db")
        r = C.ingest(trialdb, mid, db)
        assert r.rc == 0, r
        peak = r.maxrss_kb * 1024
        db_bytes = os.path.getsize(db) + (os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0)
        print(f"{trial_bytes >> 20} MiB trial: peak RSS {peak >> 20} MiB, database {db_bytes >> 20} MiB")
        assert db_bytes > trial_bytes * 0.9, "the database does not hold the trial's values"
        assert peak < trial_bytes / 4, "ingest memory grows with the trial"
        print("ok")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
