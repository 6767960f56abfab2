"""C8: deeply nested JSON never crashes the process. A collections file whose collection
definition nests far past any real one is an ingest_errors row naming the file (the steps are
ingested as from a clean trial), and tensor_from_json on deep JSON is an SQL error with exit
code 1, not a stack overflow.

usage: deep_json_test.py TRIALDB"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

COLLECTIONS_DEPTH = 500_000   # far past the stack of any recursive walk
SQL_DEPTH = 60_000            # '[' and ']' each: the SQL text stays under one argument's 128 KiB
COLLECTIONS = "collections/000000000/worker_0_collections.json"
EXIT_FAILED, EXIT_WITH_ERRORS = 1, 4


def main():
    trialdb = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="hostile_deep_json_")
    try:
        clean = os.path.join(tmp, "clean")
        assert common.run([trialdb, "synth", clean, "--steps", "3", "--tensors", "2", "--elements", "4"]).rc == 0
        trial = os.path.join(tmp, "t")
        common.copy_trial(clean, trial)
        path = os.path.join(trial, COLLECTIONS)
        with open(path) as f:
            doc = json.load(f)
        first = next(iter(doc["collections"]))
        doc["collections"][first]["reduction_config"] = "@DEEP@"
        text = json.dumps(doc).replace('"@DEEP@"', "[" * COLLECTIONS_DEPTH + "]" * COLLECTIONS_DEPTH)
        with open(path, "w") as f:
            f.write(text)

        clean_db, db = os.path.join(tmp, "clean.db"), os.path.join(tmp, "t.db")
        assert common.ingest(trialdb, clean, clean_db, name="t").rc == 0
        r = common.ingest(trialdb, trial, db)
        assert r.rc == EXIT_WITH_ERRORS, r
        errs = common.errors(db, "t")
        assert len(errs) == 1 and errs[0][1] == COLLECTIONS and "nested deeper than" in errs[0][3], errs
        assert common.rows_by_step(db, "t") == common.rows_by_step(clean_db, "t")

        deep = "[" * SQL_DEPTH + "]" * SQL_DEPTH
        r = common.run([trialdb, "sql", "--db", db, f"SELECT tensor_from_json('{deep}')"])
        assert r.rc == EXIT_FAILED and "nested deeper than" in r.err, r
        print("ok: deep collections file reported, deep tensor_from_json refused")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
