"""A4 and B6: an index entry is checked against the record it points at, and what an index file
claims never decides how much memory an ingest takes.

Cases on step 5 of a small trial: two entries with their records swapped, a record of another
step, a saved reduction that is not a scalar (each reported with the index file and step, nothing
stored under the wrong name or step, every other value as in a clean ingest); an index file that
points 300 entries of other names at one 4 MB record, and an index file that is 1 GiB (sparse):
each reported, with peak RSS far below what decoding every alias or reading the whole file takes.

usage: record_checks_test.py TRIALDB"""
import os
import sys

import hostile_common as H

C = H.C
STEP = 5
INDEX = C.index_rel(STEP)
ALIASES = 300
BIG_ELEMENTS = 1 << 20            # 4 MiB of float32: 300 decoded copies would be 1.2 GiB
SPARSE_INDEX_BYTES = 1 << 30
PEAK_RSS_KB = 300 << 10           # far below either of the above, far above a clean ingest


def values_at(db, step):
    return H.view(db, "SELECT tensor, hex(value) FROM tensor_values WHERE step = %d ORDER BY 1" % step)


def swapped_records(ws):
    trial, db = ws.copy()
    doc = C.read_index(trial, STEP)
    a, b = doc["tensor_payload"][0], doc["tensor_payload"][1]
    (a["start_idx"], a["length"]), (b["start_idx"], b["length"]) = (b["start_idx"], b["length"]), \
        (a["start_idx"], a["length"])
    C.write_index(trial, STEP, doc)
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    for e in (a, b):
        H.assert_reported(db, INDEX, STEP, f"tensor '{e['tensorname']}'", "the record holds tensor")
    names = {a["tensorname"], b["tensorname"]}
    want = [row for row in values_at(ws.clean_db, STEP) if row[0] not in names]
    assert values_at(db, STEP) == want, values_at(db, STEP)
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})


def record_of_another_step(ws):
    trial, db = ws.copy()
    name = C.read_index(trial, STEP)["tensor_payload"][0]["tensorname"]
    C.replace_record(trial, STEP, name, C.tensor_event(name, 1, [4], b"\1" * 16, STEP + 1))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, INDEX, STEP, f"tensor '{name}'", f"of step {STEP + 1}")
    assert all(row[0] != name for row in values_at(db, STEP))
    assert values_at(db, STEP + 1) == values_at(ws.clean_db, STEP + 1)
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})


def reduction_not_scalar(ws):
    trial, db = ws.copy()
    doc = C.read_index(trial, STEP)
    tensor = doc["tensor_payload"][0]["tensorname"]
    name = "smdebug/reductions/max/" + tensor
    ev = os.path.join(trial, doc["meta"]["event_file_name"])
    rec = C.frame(C.tensor_event(name, 1, [4], b"\0\0\x80\x7f" * 4, STEP))
    start = os.path.getsize(ev)
    with open(ev, "ab") as f:
        f.write(rec)
    doc["tensor_payload"].append({"tensorname": name, "start_idx": start, "length": len(rec)})
    C.write_index(trial, STEP, doc)
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, INDEX, STEP, name, "not a numeric scalar")
    H.assert_other_steps_equal(db, ws.clean_db)   # the computed max of the tensor stands


def aliased_record(ws):
    trial = os.path.join(ws.dir, "big")
    r = H.run([ws.trialdb, "synth", trial, "--steps", "2", "--tensors", "1", "--elements", str(BIG_ELEMENTS)])
    assert r.rc == 0, r
    clean_db = os.path.join(ws.dir, "big_clean.db")
    assert H.ingest(ws.trialdb, trial, clean_db).rc == H.EXIT_OK
    doc = C.read_index(trial, 1)
    first = max(doc["tensor_payload"], key=lambda e: e["length"])
    doc["tensor_payload"] += [{"tensorname": f"alias{i}", "start_idx": first["start_idx"], "length": first["length"]}
                              for i in range(ALIASES)]
    C.write_index(trial, 1, doc)
    db = os.path.join(ws.dir, "big.db")
    r = C.ingest(ws.trialdb, trial, db, name=H.TRIAL, extra=["--threads", "2"])
    assert r.rc == H.EXIT_PARTIAL, r
    assert r.maxrss_kb < PEAK_RSS_KB, f"peak RSS {r.maxrss_kb} KiB with {ALIASES} aliases of one record"
    H.assert_reported(db, C.index_rel(1), 1, "tensor 'alias299'", "the record holds tensor")
    assert H.view(db, "SELECT count(*) FROM tensor_values WHERE tensor LIKE 'alias%'") == [(0,)]
    H.assert_other_steps_equal(db, clean_db)
    print(f"aliased record: peak RSS {r.maxrss_kb >> 10} MiB")


def sparse_index(ws):
    trial, db = ws.copy()
    os.truncate(C.index_path(trial, STEP), SPARSE_INDEX_BYTES)
    r = C.ingest(ws.trialdb, trial, db, name=H.TRIAL)
    assert r.rc == H.EXIT_PARTIAL, r
    assert r.maxrss_kb < PEAK_RSS_KB, f"peak RSS {r.maxrss_kb} KiB for a sparse index file"
    H.assert_reported(db, INDEX, STEP, "larger than the limit")
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})
    print(f"sparse index: peak RSS {r.maxrss_kb >> 10} MiB")


def main():
    with H.Workspace(sys.argv[1]) as ws:
        for case in (swapped_records, record_of_another_step, reduction_not_scalar, aliased_record, sparse_index):
            case(ws)
            print(f"ok {case.__name__}")


if __name__ == "__main__":
    main()
