"""A5: a re-run never takes away what it stored because a collections file is now missing,
truncated or half-written. Two workers' collections files together define "weights" (the second
adds the loss tensor by name); after a clean ingest, the second file is damaged in turn (cut in
half, emptied, removed, made unreadable) and the trial re-ingested: the collections view, the
expected workers and every value stay exactly as they were.

usage: collections_rerun_test.py TRIALDB"""
import json
import os
import shutil
import sys

import hostile_common as H

C = H.C
FIRST = "collections/000000000/worker_0_collections.json"
SECOND = "collections/000000000/worker_1_collections.json"


def add_second_worker_file(trial):
    with open(os.path.join(trial, FIRST)) as f:
        doc = json.load(f)
    weights = doc["collections"]["weights"]
    weights["tensor_names"] = list(weights.get("tensor_names") or []) + ["CrossEntropyLoss_output_0"]
    with open(os.path.join(trial, SECOND), "w") as f:
        json.dump(doc, f)


def cut_in_half(path):
    with open(path, "rb") as f:
        text = f.read()
    with open(path, "wb") as f:
        f.write(text[: len(text) // 2])


DAMAGE = {
    "cut_in_half": cut_in_half,
    "emptied": lambda p: open(p, "w").close(),
    "removed": os.remove,
    "a_folder": lambda p: (os.remove(p), os.mkdir(p)),
}
STATE = {
    "collections": "SELECT collection, tensor FROM collections ORDER BY 1, 2",
    "workers": "SELECT expected_workers FROM trial",
}


def main():
    with H.Workspace(sys.argv[1]) as ws:
        for name, damage in DAMAGE.items():
            trial, db = ws.copy()
            add_second_worker_file(trial)
            assert H.ingest(ws.trialdb, trial, db).rc == H.EXIT_OK
            before = {k: H.view(db, q) for k, q in STATE.items()}
            assert ("weights", "CrossEntropyLoss_output_0") in before["collections"], before
            values = C.rows_by_step(db, H.TRIAL)
            damage(os.path.join(trial, SECOND))
            r = H.ingest(ws.trialdb, trial, db)
            assert r.rc in (H.EXIT_OK, H.EXIT_PARTIAL), (name, r)
            after = {k: H.view(db, q) for k, q in STATE.items()}
            assert after == before, (name, before, after)
            assert C.rows_by_step(db, H.TRIAL) == values, name
            shutil.rmtree(os.path.dirname(db))
            print(f"ok {name}")


if __name__ == "__main__":
    main()
