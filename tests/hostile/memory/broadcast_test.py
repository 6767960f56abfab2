"""B6: typed values that broadcast a few bytes to a huge shape cannot take memory beyond the
read-ahead budget's bound. A step whose records each carry one float_val over a shape of
~200 MB (TensorFlow broadcasts the last value) is reported tensor by tensor in ingest_errors,
the other steps equal a clean ingest, peak RSS stays small, and a small legitimate broadcast
still decodes to the repeated value.

usage: broadcast_test.py TRIALDB"""
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

DT_FLOAT = 1
HUGE_ELEMENTS = 50_000_000      # 200 MB of float32 from a 4-byte float_val
SMALL_SHAPE = [2, 3]            # a broadcast any writer may produce: 24 bytes
DAMAGED_STEP = 1
MAX_RSS_KB = 300 * 1024         # the clean ingest of this trial needs a few tens of MB
TENSORS = 4


def typed_event(tag, shape, floats, step):
    """Event{step, summary{value{tag, tensor{dtype float, shape, float_val (packed)}}}}."""
    f = common._field
    dims = b"".join(f(2, 2, f(1, 0, d)) for d in shape)
    tensor = f(1, 0, DT_FLOAT) + f(2, 2, dims) + f(5, 2, struct.pack(f"<{len(floats)}f", *floats))
    value = f(1, 2, tag.encode()) + f(8, 2, tensor)
    return f(2, 0, step) + f(5, 2, f(1, 2, value))


def main():
    trialdb = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="hostile_broadcast_")
    try:
        clean = os.path.join(tmp, "clean")
        r = common.run([trialdb, "synth", clean, "--steps", "3", "--tensors", str(TENSORS), "--elements", "8"])
        assert r.rc == 0, r
        trial = os.path.join(tmp, "t")
        common.copy_trial(clean, trial)
        names = [e["tensorname"] for e in common.read_index(trial, DAMAGED_STEP)["tensor_payload"]]
        huge, small = names[:-1], names[-1]
        for name in huge:
            common.replace_record(trial, DAMAGED_STEP, name, typed_event(name, [HUGE_ELEMENTS], [1.5], DAMAGED_STEP),
                                  real_crc=True)
        common.replace_record(trial, DAMAGED_STEP, small, typed_event(small, SMALL_SHAPE, [2.5], DAMAGED_STEP),
                              real_crc=True)

        clean_db, db = os.path.join(tmp, "clean.db"), os.path.join(tmp, "t.db")
        assert common.ingest(trialdb, clean, clean_db, name="t").rc == 0
        r = common.ingest(trialdb, trial, db)
        assert r.rc == 4, r
        assert r.maxrss_kb < MAX_RSS_KB, f"peak RSS {r.maxrss_kb} KiB, bound {MAX_RSS_KB} KiB"

        errs = common.errors(db, "t")
        index_file = common.index_rel(DAMAGED_STEP)
        for name in huge:
            mine = [e for e in errs if f"'{name}'" in e[3]]
            assert len(mine) == 1 and mine[0][1] == index_file and mine[0][2] == DAMAGED_STEP, (name, errs)
            assert "would expand" in mine[0][3], mine
        assert len(errs) == len(huge), errs

        got, want = common.rows_by_step(db, "t"), common.rows_by_step(clean_db, "t")
        for step in want:
            if step != DAMAGED_STEP:
                assert got[step] == want[step], step
        c = common.connect(db)
        shape, blob = c.execute("SELECT shape, value FROM tensor_values WHERE tensor = ? AND step = ?",
                                (small, DAMAGED_STEP)).fetchone()
        c.close()
        assert shape == "[2,3]", shape
        assert blob.endswith(struct.pack("<6f", *[2.5] * 6)), blob
        print(f"ok: {len(huge)} broadcasts reported, peak RSS {r.maxrss_kb} KiB")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
