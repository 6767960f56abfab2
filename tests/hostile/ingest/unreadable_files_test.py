"""A1/A3: one event or index file that cannot be opened or read costs only its own step.

Each case damages step 5 of a small trial in one way the operating system refuses a read
(ENOTDIR, ENAMETOOLONG, ELOOP, EISDIR, a FIFO, a device, a dangling symlink, a symlink out of the
trial, no permission). The ingest must finish (a FIFO must not block it), exit 4, report the
index file with step 5, and hold every other step exactly as a clean ingest does. A second run:
a permanent failure is not reported again (exit 0); a failure that may pass (permission, dangling
link) is read again, and once fixed its step is ingested like any other.

usage: unreadable_files_test.py TRIALDB"""
import os
import sys

import hostile_common as H

STEP = 5
INDEX = H.C.index_rel(STEP)


def event_of(trial):
    return H.C.event_path(trial, STEP)


def set_event_name(trial, name):
    doc = H.C.read_index(trial, STEP)
    doc["meta"]["event_file_name"] = name
    H.C.write_index(trial, STEP, doc)


def replace_event(trial, make):
    ev = event_of(trial)
    os.remove(ev)
    make(ev)


# name -> (damage(trial, workspace), words in the message, permanent, repair(trial) or None)
CASES = {
    "enotdir": (lambda t, w: set_event_name(t, H.C.read_index(t, STEP)["meta"]["event_file_name"] + "/x"),
                ["Not a directory"], True, None),
    "enametoolong": (lambda t, w: set_event_name(t, "events/" + "n" * 300 + "/e.tfevents"),
                     ["File name too long"], True, None),
    "eloop": (lambda t, w: replace_event(t, lambda ev: os.symlink(os.path.basename(ev), ev)),
              ["Too many levels of symbolic links"], True, None),
    "eisdir": (lambda t, w: replace_event(t, os.mkdir), ["a folder"], True, None),
    "fifo": (lambda t, w: replace_event(t, os.mkfifo), ["a FIFO"], True, None),
    "device": (lambda t, w: replace_event(t, lambda ev: os.symlink("/dev/zero", ev)),
               ["a character device"], True, None),
    "outside_symlink": (lambda t, w: replace_event(t, lambda ev: os.symlink(
        os.path.join(w.clean, H.C.read_index(t, STEP)["meta"]["event_file_name"]), ev)),
        ["outside the trial"], True, None),
    "dangling_event": (lambda t, w: replace_event(t, lambda ev: os.symlink("gone.tfevents", ev)),
                       ["dangling symlink"], False, None),
    "index_fifo": (lambda t, w: (os.remove(H.C.index_path(t, STEP)), os.mkfifo(H.C.index_path(t, STEP))),
                   ["a FIFO"], True, None),
    "index_dangling": (lambda t, w: (os.remove(H.C.index_path(t, STEP)),
                                     os.symlink("gone.json", H.C.index_path(t, STEP))),
                       ["dangling symlink"], False, None),
    "event_no_permission": (lambda t, w: os.chmod(event_of(t), 0), ["Permission denied"], False,
                            lambda t: os.chmod(event_of(t), 0o644)),
    "index_no_permission": (lambda t, w: os.chmod(H.C.index_path(t, STEP), 0), ["Permission denied"], False,
                            lambda t: os.chmod(H.C.index_path(t, STEP), 0o644)),
}


def check(ws, name, damage, words, permanent, repair):
    trial, db = ws.copy()
    damage(trial, ws)
    unprivileged = repair is not None
    r = H.ingest(ws.trialdb, trial, db, unprivileged)
    assert r.rc == H.EXIT_PARTIAL, (name, r)
    H.assert_reported(db, INDEX, STEP, *words)
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})
    again = H.ingest(ws.trialdb, trial, db, unprivileged)
    assert again.rc == (H.EXIT_OK if permanent else H.EXIT_PARTIAL), (name, "second run", again)
    H.assert_other_steps_equal(db, ws.clean_db, damaged={STEP})
    if repair:
        repair(trial)
        fixed = H.ingest(ws.trialdb, trial, db, unprivileged)
        assert fixed.rc == H.EXIT_OK, (name, "after the repair", fixed)
        H.assert_other_steps_equal(db, ws.clean_db)
        assert H.C.rows_by_step(db, H.TRIAL)[STEP] == H.C.rows_by_step(ws.clean_db, H.TRIAL)[STEP]


def main():
    trialdb = sys.argv[1]
    with H.Workspace(trialdb) as ws:
        for name, (damage, words, permanent, repair) in CASES.items():
            check(ws, name, damage, words, permanent, repair)
            print(f"ok {name}")


if __name__ == "__main__":
    main()
