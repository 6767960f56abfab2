"""Hostile names and values in what trialdb prints (issue 17, F18, F19): control characters in
tensor names never reach the terminal raw (tables, messages); a tensor name holding U+0000 is
refused at ingest (an ingest_errors row naming file and step, the rest of the step ingested);
JSON output is always valid (strict parser, strict UTF-8) and encodes +-Inf and NaN one way, as
the strings "Infinity", "-Infinity" and "NaN".

Usage: names_json_test.py TRIALDB"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from xml.etree import ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reliability"))
import common  # noqa: E402

TRIALDB = sys.argv[1]
# ESC (an OSC title sequence ended by BEL), a newline, DEL and C1's CSI (U+009B).
HOSTILE = "Net\x1b]0;pwned\x07_fc0\n.bias\x7f\x9b31m"
RENAMED = "Net_fc0.bias"
NUL_NAME, NUL_STEP, NUL_VICTIM = "relu\x00x", 1, "relu0_output_0"
STRING_STEP, STRING_VICTIM = 2, "CrossEntropyLoss_output_0"
ZERO_STEP, ZERO_VICTIM = 3, "Net_fc0.weight"
DT_FLOAT, DT_STRING = 1, 7
STRING_VALUES = [b"ok", b"bad \xff\xfe utf-8", b"c1 \xc2\x9b"]
# Bytes a terminal acts on: C0 except the newline ending a line, DEL, and C1 in UTF-8 (C2 80..9F).
RAW_CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def fields(buf):
    """The (number, value) pairs of a protobuf message: ints for varints, bytes for the rest."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        elif wire == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        out.append((num, v))
    return out


def varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def rename(trial, old, new, steps):
    """Renames a tensor in the index and in its record (the record's tag must match its entry)."""
    for step in steps:
        e = common.entry(trial, step, old)
        with open(common.event_path(trial, step), "rb") as f:
            f.seek(e["start_idx"])
            payload = f.read(e["length"])[12:-4]
        summary = dict(fields(payload))[5]
        value = dict(fields(summary))[1]
        tensor = dict(fields(dict(fields(value))[8]))
        shape = [dict(fields(d))[1] for n, d in fields(tensor[2]) if n == 2]
        common.replace_record(trial, step, old, common.tensor_event(new, tensor[1], shape, tensor[4], step),
                              real_crc=True)
        doc = common.read_index(trial, step)
        for e in doc["tensor_payload"] + doc.get("shape_payload", []):
            if e["tensorname"] == old:
                e["tensorname"] = new
        common.write_index(trial, step, doc)


def string_tensor_event(tag, values, step):
    f = common._field
    tensor = f(1, 0, DT_STRING) + f(2, 2, f(2, 2, f(1, 0, len(values)))) + b"".join(f(8, 2, v) for v in values)
    return f(2, 0, step) + f(5, 2, f(1, 2, f(1, 2, tag.encode()) + f(8, 2, tensor)))


def build(tmp):
    trial = os.path.join(tmp, "t")
    subprocess.run([TRIALDB, "synth", trial, "--steps", "4", "--tensors", "4", "--elements", "16"], check=True,
                   stdout=subprocess.DEVNULL)
    base = common.copy_trial(trial, os.path.join(tmp, "base"))
    rename(trial, RENAMED, HOSTILE, range(4))
    rename(trial, NUL_VICTIM, NUL_NAME, [NUL_STEP])
    common.replace_record(trial, STRING_STEP, STRING_VICTIM,
                          string_tensor_event(STRING_VICTIM, STRING_VALUES, STRING_STEP), real_crc=True)
    # A second trial whose tensor is all zeros at one step: compare's ratio x/0 is infinite.
    zero = common.copy_trial(base, os.path.join(tmp, "zero"))
    common.replace_record(zero, ZERO_STEP, ZERO_VICTIM,
                          common.tensor_event(ZERO_VICTIM, DT_FLOAT, [4], struct.pack("<4f", 0, 0, 0, 0), ZERO_STEP),
                          real_crc=True)
    return trial, base, zero


def run(*args):
    p = subprocess.run([TRIALDB, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr


def assert_printable(what, *outputs):
    for out in outputs:
        m = RAW_CONTROL.search(out)
        assert m is None, (what, out[max(0, m.start() - 40):m.end() + 40])


def strict_json(what, out):
    text = out.decode("utf-8")   # strict: invalid UTF-8 raises
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"{what}: bare {c}")))


def test_ingest(tmp, trial, base):
    db, clean = os.path.join(tmp, "h.db"), os.path.join(tmp, "clean.db")
    rc, out, err = run("ingest", trial, "--db", db, "--name", "t")
    assert rc == 4, (rc, err)
    assert_printable("ingest", out, err)
    errs = common.errors(db)
    nul = [e for e in errs if "U+0000" in e[3]]
    assert len(nul) == 1 and nul[0][1] == common.index_rel(NUL_STEP) and nul[0][2] == NUL_STEP, errs
    assert all("\x00" not in t for (_, t) in common.connect(db).execute("SELECT trial, tensor FROM tensors"))
    # The rest of that step, and every other step, as a clean ingest of the undamaged trial.
    assert common.ingest(TRIALDB, base, clean, name="t").rc == 0
    h, c = common.rows_by_step(db, "t"), common.rows_by_step(clean, "t")
    drop = lambda rows, names: [r for r in rows if r[1] not in names]
    assert drop(h[NUL_STEP], {HOSTILE}) == drop(c[NUL_STEP], {RENAMED, NUL_VICTIM})
    assert drop(h[0], {HOSTILE}) == drop(c[0], {RENAMED})
    assert len([r for r in h[0] if r[1] == HOSTILE]) == len([r for r in c[0] if r[1] == RENAMED])
    return db


def test_tables_and_messages(tmp, db):
    outputs = [
        run("info", "--db", db),
        run("sql", "--db", db, "SELECT * FROM tensors"),
        run("sql", "--db", db, "SELECT * FROM ingest_errors"),
        run("sql", "--db", db, f"SELECT tensor_at(value, 1), tensor_at(value, 2) FROM tensor_values "
                               f"WHERE tensor = '{STRING_VICTIM}' AND step = {STRING_STEP}"),
        run("compare", "--db", db, "t", "t"),
        run("sql", "--db", db, f"SELECT * FROM nosuch WHERE x = '{HOSTILE}'"),
        run("plot", "--db", db, "--out", os.path.join(tmp, "d.png"), "distribution", "--trial", "t",
            "--tensor", HOSTILE + "x"),
        run("compare", "--db", db, "t", HOSTILE),
    ]
    for i, (rc, out, err) in enumerate(outputs):
        assert_printable(f"output {i}", out, err)
    assert b"\\x1b]0;pwned\\x07" in outputs[1][1] and b"\\u009b" in outputs[1][1], outputs[1][1]
    assert b"\\xff\\xfe" in outputs[3][1], outputs[3][1]
    assert outputs[5][0] == 1 and outputs[6][0] == 1 and outputs[7][0] == 1


def test_json(db, zero):
    assert run("ingest", zero, "--db", db, "--name", "zero", "-q")[0] == 0
    rc, out, err = run("sql", "--db", db, "--json", "SELECT 1e999 AS inf, -1e999 AS ninf, 0.5 AS half, NULL AS n, "
                                                    "CAST(x'ff41' AS TEXT) AS bad, tensor, tensor_at(value, 1) AS s "
                                                    "FROM tensors JOIN tensor_values USING (trial, tensor) "
                                                    f"WHERE trial = 't' AND step = {STRING_STEP}")
    assert rc == 0, err
    rows = strict_json("sql", out)
    assert rows and all(r["inf"] == "Infinity" and r["ninf"] == "-Infinity" and r["half"] == 0.5 and r["n"] is None
                        for r in rows), rows
    assert {r["tensor"] for r in rows} >= {HOSTILE, STRING_VICTIM}
    # JSON keeps each value's type: the string tensor's elements are strings, the others numbers
    texts = [r["s"] for r in rows if isinstance(r["s"], str)]
    assert "ok" not in texts and any("\ufffd" in t for t in texts), rows
    for args in (["info", "--json"], ["sql", "--json", "SELECT * FROM ingest_errors"],
                 ["compare", "t", "t", "--json", "--all"], ["rules", "--json", "--trial", "zero"]):
        rc, out, err = run(args[0], "--db", db, *args[1:])
        assert rc in (0, 3), (args, err)
        strict_json(args[0], out)
    rc, out, err = run("compare", "--db", db, "zero", "t", "--json", "--tensor", f"^{ZERO_VICTIM}$")
    rows = strict_json("compare", out)
    at = [r for r in rows if r["step_a"] == ZERO_STEP]
    assert len(at) == 1 and at[0]["value_a"] == 0 and at[0]["ratio_b_a"] == "Infinity", at
    assert all(isinstance(r["ratio_b_a"], float) for r in rows if r["step_a"] != ZERO_STEP), rows


def test_json_keys(db):
    """sql --json never merges two columns: a repeated name's suffix never collides with a real one."""
    rc, out, err = run("sql", "--db", db, "--json", "SELECT 1 AS a, 2 AS a_2, 3 AS a, 4 AS a_3, 5 AS a")
    assert rc == 0, err
    rows = strict_json("sql", out)
    assert len(rows) == 1 and sorted(rows[0].values()) == [1, 2, 3, 4, 5], rows
    assert list(rows[0])[:2] == ["a", "a_2"] and rows[0]["a_3"] == 4, rows


def test_svg(tmp, db):
    """The SVG of a chart whose tensor name holds markup and control characters is well-formed XML."""
    out = os.path.join(tmp, "hostile.svg")
    rc, _, err = run("plot", "--db", db, "--out", out, "reduction", "--trial", "t", "--tensor", "_fc0")
    assert rc == 0, err
    root = ElementTree.parse(out).getroot()   # raises on XML that is not well-formed
    texts = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "_fc0" in texts and "\ufffd" in texts, texts


def main():
    tmp = tempfile.mkdtemp(prefix="trialdb_hostile_names_")
    try:
        trial, base, zero = build(tmp)
        db = test_ingest(tmp, trial, base)
        test_tables_and_messages(tmp, db)
        test_json(db, zero)
        test_json_keys(db)
        test_svg(tmp, db)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
