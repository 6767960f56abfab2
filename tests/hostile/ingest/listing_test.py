"""A2/A3: nothing the listing of index/ finds is skipped silently, and no folder walk runs away.

Cases: an index file in the wrong group folder or outside the index/<group>/ layout (reported,
once: a second run exits 0); symlinks `ln -s . x` inside index/ (the walk stays linear: every step
once, exit 0, fast); a symlinked group folder leading outside the trial (refused, reported); an
index/ folder that cannot be listed (reported, exit 4, and ingested once readable); a trial that
has ended with no step at all (an error, exit 4).

usage: listing_test.py TRIALDB"""
import os
import shutil
import sys

import hostile_common as H

STEP = 5


def wrong_group(ws):
    trial, db = ws.copy()
    moved = "index/000000007/000000000005_worker_0.json"
    os.makedirs(os.path.join(trial, "index", "000000007"))
    os.rename(H.C.index_path(trial, STEP), os.path.join(trial, moved))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, moved, STEP, "index/000000000/000000000005_worker_0.json")
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})
    assert STEP not in H.C.rows_by_step(db, H.TRIAL)
    again = H.ingest(ws.trialdb, trial, db)
    assert again.rc == H.EXIT_OK, again


def outside_layout(ws):
    trial, db = ws.copy()
    extra = "index/extra/000000000005_worker_0.json"
    os.makedirs(os.path.join(trial, "index", "extra"))
    shutil.copy(H.C.index_path(trial, STEP), os.path.join(trial, extra))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, extra, STEP, "not where")
    H.assert_other_steps_equal(db, ws.clean_db)   # the real index file of step 5 is ingested, once


def symlink_cycles(ws):
    trial, db = ws.copy()
    for folder in ("index", "index/000000000"):
        for link in ("x", "y"):
            os.symlink(".", os.path.join(trial, folder, link))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_OK, r
    assert r.wall < H.WALL_SECONDS / 2, r
    H.assert_other_steps_equal(db, ws.clean_db)
    assert H.view(db, "SELECT count(*) FROM steps") == H.view(ws.clean_db, "SELECT count(*) FROM steps")


def symlink_outside(ws):
    trial, db = ws.copy()
    outside = os.path.join(os.path.dirname(trial), "elsewhere")
    os.makedirs(outside)
    shutil.copy(H.C.index_path(trial, STEP), os.path.join(outside, "000000001005_worker_0.json"))
    os.symlink(outside, os.path.join(trial, "index", "000000001"))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, "index/000000001", None, "outside the trial")
    H.assert_other_steps_equal(db, ws.clean_db)


def unlistable_folder(ws):
    trial, db = ws.copy()
    group = os.path.join(trial, "index", "000000000")
    os.chmod(group, 0)
    r = H.ingest(ws.trialdb, trial, db, unprivileged=True)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, "index/000000000/", None, "cannot list the folder", "Permission denied")
    os.chmod(group, 0o755)
    fixed = H.ingest(ws.trialdb, trial, db, unprivileged=True)
    assert fixed.rc == H.EXIT_OK, fixed
    H.assert_other_steps_equal(db, ws.clean_db)
    assert H.C.rows_by_step(db, H.TRIAL) == H.C.rows_by_step(ws.clean_db, H.TRIAL)


def ended_without_steps(ws):
    trial, db = ws.copy()
    shutil.rmtree(os.path.join(trial, "index"))
    r = H.ingest(ws.trialdb, trial, db)
    assert r.rc == H.EXIT_PARTIAL, r
    H.assert_reported(db, "index/", None, "no steps")


def main():
    with H.Workspace(sys.argv[1]) as ws:
        for case in (wrong_group, outside_layout, symlink_cycles, symlink_outside, unlistable_folder,
                     ended_without_steps):
            case(ws)
            print(f"ok {case.__name__}")


if __name__ == "__main__":
    main()
