"""Bad input: trials damaged in each way a crashed job, a partial upload or a buggy writer damages
them, ingested with the real `trialdb` binary.

For every kind of damage:
  - the run finishes with exit code 4 (finished with errors) and never crashes;
  - stderr and the ingest_errors view name the file, the step and what is wrong;
  - every undamaged step is present and equal (tensor_values and reductions rows) to a clean ingest;
  - another trial already stored in the same database is unchanged;
  - a second run adds nothing; --strict stops at the first error with exit code 1.

usage: bad_input_test.py <trialdb> <fixtures dir>
"""
import json
import os
import shutil
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

TRIALDB = FIXTURES = None
EXIT_PARTIAL, EXIT_ERROR = 4, 1


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="trialdb_bad_input_")
        cls.sources = {
            "pt_bad_init": os.path.join(FIXTURES, "pt_bad_init"),
            "dist2": os.path.join(FIXTURES, "dist2"),
        }
        # A trial written with real data CRCs (smdebug's write_checksum), so a flipped data byte
        # is detectable there.
        crc = os.path.join(cls.tmp, "crc_trial")
        r = C.run([TRIALDB, "synth", crc, "--steps", "6", "--tensors", "5", "--elements", "64", "--checksums"])
        assert r.rc == 0, r
        cls.sources["crc"] = crc
        cls.refs = {}
        for key, path in cls.sources.items():
            db = os.path.join(cls.tmp, f"ref_{key}.db")
            r = C.ingest(TRIALDB, path, db, name="t")
            assert r.rc == 0, (key, r)
            cls.refs[key] = (C.rows_by_step(db, "t"), C.dump(db, trial="t"))
        cls.other_trial = os.path.join(FIXTURES, "pt_reductions")
        cls.case_no = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def fresh(self, key):
        BadInput.case_no += 1
        d = os.path.join(self.tmp, f"case{self.case_no}")
        os.makedirs(d)
        return d, C.copy_trial(self.sources[key], os.path.join(d, key))

    def check(self, key, damage, expected, strict_first_step=None):
        """damage(trial) damages a copy; expected = [(file, step or None, substring)]: every
        reported error. The steps in expected are the damaged ones."""
        d, trial = self.fresh(key)
        damage(trial)
        db = os.path.join(d, "t.db")
        # Something already stored in this database must not change.
        self.assertEqual(C.ingest(TRIALDB, self.other_trial, db, name="other").rc, 0)
        other_before = C.dump(db, trial="other")

        r = C.ingest(TRIALDB, trial, db, name="t")
        self.assertEqual(r.rc, EXIT_PARTIAL, r)
        got = C.errors(db, "t")
        self.assertEqual(len(got), len(expected), f"errors reported: {got}")
        for (file, step, what) in expected:
            match = [e for e in got if e[1] == file and e[2] == step and what in e[3]]
            self.assertTrue(match, f"no ingest_errors row ({file}, {step}, ...{what}...) in {got}")
            line = f"trialdb ingest: {file}" + (f" (step {step})" if step is not None else "") + ": "
            self.assertTrue(any(l.startswith(line) and what in l for l in r.err.splitlines()),
                            f"stderr does not report {line}...{what}: {r.err}")

        ref_steps, ref_dump = self.refs[key]
        damaged = {s for (_, s, _) in expected if s is not None}
        now = C.rows_by_step(db, "t")
        for s, rows in ref_steps.items():
            if s not in damaged:
                self.assertEqual(now.get(s), rows, f"undamaged step {s} differs from a clean ingest")
        self.assertLessEqual(set(now) - set(ref_steps), set(), "steps appeared that a clean ingest lacks")
        for s in damaged:   # what is kept of a damaged step is a subset of the clean step
            self.assertLessEqual(set(now.get(s, [])), set(ref_steps.get(s, [])))
        self.assertEqual(C.dump(db, trial="other"), other_before, "another trial changed")
        self.assertEqual(C.integrity(db), "ok")

        again = C.ingest(TRIALDB, trial, db, name="t")
        self.assertIn(again.rc, (0, EXIT_PARTIAL), again)
        self.assertEqual(C.rows_by_step(db, "t"), now, "a second run changed the trial")
        self.assertEqual(len(C.errors(db, "t")), len(expected), "a second run reported errors again")

        # --strict: stop at the first error; what comes before it is ingested, nothing after.
        sdb = os.path.join(d, "strict.db")
        s = C.ingest(TRIALDB, trial, sdb, name="t", extra=["--strict"])
        self.assertEqual(s.rc, EXIT_ERROR, s)
        self.assertIn("--strict: stopped", s.err)
        self.assertEqual(len(C.errors(sdb, "t")), 1)
        first = min(damaged) if strict_first_step is None else strict_first_step
        kept = C.rows_by_step(sdb, "t")
        self.assertEqual(sorted(kept), sorted(st for st in ref_steps if st < first),
                         f"--strict must keep exactly the steps before the first error (step {first})")
        for st in kept:
            self.assertEqual(kept[st], ref_steps[st])
        shutil.rmtree(d)
        return db

    # --- TFRecord framing ------------------------------------------------------------------

    def test_flipped_length_byte(self):
        def damage(t):
            e = C.entry(t, 5, "Net_conv1.weight")
            C.patch_bytes(C.event_path(t, 5), e["start_idx"] + 1, lambda b: b ^ 0x10)
        self.check("pt_bad_init", damage, [(C.index_rel(5), 5, "length CRC mismatch")])

    def test_flipped_footer_byte(self):
        # smdebug's default footer is a constant: a footer that is neither it nor the data CRC.
        def damage(t):
            e = C.entry(t, 6, "Net_fc.bias")
            C.patch_bytes(C.event_path(t, 6), e["start_idx"] + e["length"] - 2, lambda b: b ^ 0x01)
        self.check("pt_bad_init", damage, [(C.index_rel(6), 6, "data CRC mismatch")])

    def test_flipped_data_byte_with_real_crcs(self):
        def damage(t):
            doc = C.read_index(t, 3)
            e = doc["tensor_payload"][1]
            C.patch_bytes(C.event_path(t, 3), e["start_idx"] + e["length"] - 10, lambda b: b ^ 0x80)
        self.check("crc", damage, [(C.index_rel(3), 3, "data CRC mismatch")])

    def test_message_names_the_event_file_and_tensor(self):
        def damage(t):
            e = C.entry(t, 5, "Net_conv1.weight")
            C.patch_bytes(C.event_path(t, 5), e["start_idx"] + 1, lambda b: b ^ 0x10)
        self.check("pt_bad_init", damage,
                   [(C.index_rel(5), 5, "tensor 'Net_conv1.weight' in events/000000000005/000000000005_worker_0.tfevents")])

    def test_truncated_mid_record_in_ended_trial(self):
        def damage(t):
            ev = C.event_path(t, 7)
            os.truncate(ev, os.path.getsize(ev) // 2)
        # Every record past the cut is reported (one error per tensor of that step).
        d, t = self.fresh("pt_bad_init")
        doc = C.read_index(t, 7)
        cut = os.path.getsize(C.event_path(t, 7)) // 2
        lost = [e for e in doc["tensor_payload"] if e["start_idx"] + e["length"] > cut]
        shutil.rmtree(d)
        self.check("pt_bad_init", damage, [(C.index_rel(7), 7, f"tensor '{e['tensorname']}': record at offset")
                                           for e in lost])

    def test_length_field_claiming_gigabytes(self):
        def damage(t):
            # A record whose (CRC-valid) length field says 6 GB: not allocated, reported.
            C.replace_record(t, 8, "Net_fc.weight", b"")
            e = C.entry(t, 8, "Net_fc.weight")
            payload = C.tensor_event("Net_fc.weight", 1, [4], b"\0" * 16)
            rec = C.frame(payload, length=6 << 30)
            with open(C.event_path(t, 8), "r+b") as f:
                f.seek(e["start_idx"])
                f.write(rec)
            doc = C.read_index(t, 8)
            for x in doc["tensor_payload"]:
                if x["tensorname"] == "Net_fc.weight":
                    x["length"] = len(rec)
            C.write_index(t, 8, doc)
        self.check("pt_bad_init", damage, [(C.index_rel(8), 8, "record length field does not match")])

    def test_index_length_claiming_gigabytes(self):
        def damage(t):
            doc = C.read_index(t, 9)
            doc["tensor_payload"][0]["length"] = 5 << 30
            C.write_index(t, 9, doc)
        d, t = self.fresh("pt_bad_init")
        damage(t)
        r = C.ingest(TRIALDB, t, os.path.join(d, "t.db"))
        self.assertEqual(r.rc, EXIT_PARTIAL, r)
        self.assertLess(r.maxrss_kb, 512 * 1024, "a forged length made trialdb allocate it")
        shutil.rmtree(d)
        self.check("pt_bad_init", damage, [(C.index_rel(9), 9, "past the end")])

    # --- index files -------------------------------------------------------------------------

    def test_garbage_index_json(self):
        def damage(t):
            with open(C.index_path(t, 10), "wb") as f:
                f.write(b"\x00\xff{{not json")
        self.check("pt_bad_init", damage, [(C.index_rel(10), 10, "not valid JSON")])

    def test_truncated_index_json(self):
        def damage(t):
            p = C.index_path(t, 11)
            os.truncate(p, os.path.getsize(p) // 2)
        self.check("pt_bad_init", damage, [(C.index_rel(11), 11, "not valid JSON")])

    def test_wrong_typed_index_json(self):
        cases = [
            (lambda doc: doc["meta"].update(mode_step="3"), "mode_step is missing or not a non-negative integer"),
            (lambda doc: doc["meta"].update(mode="TRAINING"), "mode is missing or not one of"),
            (lambda doc: doc.update(tensor_payload={"a": 1}), "tensor_payload is not an array"),
            (lambda doc: doc["tensor_payload"][2].update(start_idx=-5), "has no valid start_idx/length"),
            (lambda doc: doc["tensor_payload"][2].update(length="12"), "has no valid start_idx/length"),
            (lambda doc: doc["meta"].update(event_file_name=7), "event_file_name is not a string"),
            (lambda doc: doc.update(meta=[1, 2]), "no 'meta' object"),
        ]
        for i, (edit, what) in enumerate(cases):
            with self.subTest(what=what):
                def damage(t, edit=edit):
                    doc = C.read_index(t, 12)
                    edit(doc)
                    C.write_index(t, 12, doc)
                self.check("pt_bad_init", damage, [(C.index_rel(12), 12, what)])

    def test_event_file_outside_the_trial(self):
        for target in ["../../x", "events/../../../etc/passwd", "/etc/passwd", "/tmp/x.tfevents"]:
            with self.subTest(target=target):
                def damage(t, target=target):
                    doc = C.read_index(t, 13)
                    doc["meta"]["event_file_name"] = target
                    C.write_index(t, 13, doc)
                self.check("pt_bad_init", damage, [(C.index_rel(13), 13, "points outside the trial")])

    def test_missing_event_file(self):
        def damage(t):
            os.remove(C.event_path(t, 14))
        self.check("pt_bad_init", damage, [(C.index_rel(14), 14, "does not exist")])

    def test_offsets_past_the_end(self):
        def damage(t):
            size = os.path.getsize(C.event_path(t, 15))
            doc = C.read_index(t, 15)
            doc["tensor_payload"][3]["start_idx"] = size + 100
            C.write_index(t, 15, doc)
        self.check("pt_bad_init", damage, [(C.index_rel(15), 15, "past the end")])

    def test_empty_tensor_name(self):
        def damage(t):
            doc = C.read_index(t, 16)
            doc["tensor_payload"][1]["tensorname"] = ""
            C.write_index(t, 16, doc)
        self.check("pt_bad_init", damage, [(C.index_rel(16), 16, "tensor_payload entry 1 has an empty tensorname")])

    def test_enormous_tensor_name(self):
        def damage(t):
            doc = C.read_index(t, 17)
            doc["tensor_payload"][0]["tensorname"] = "x" * 200000
            C.write_index(t, 17, doc)
        self.check("pt_bad_init", damage, [(C.index_rel(17), 17, "tensorname of 200000 bytes")])

    def test_bad_index_file_name(self):
        def damage(t):
            shutil.copy(C.index_path(t, 3), os.path.join(os.path.dirname(C.index_path(t, 3)), "step3.json"))
        self.check("pt_bad_init", damage, [("index/000000000/step3.json", None, "index file name is not")],
                   strict_first_step=0)

    # --- event payloads ----------------------------------------------------------------------

    def test_unknown_dtype(self):
        def damage(t):
            C.replace_record(t, 18, "Net_conv0.bias", C.tensor_event("Net_conv0.bias", 99, [4], b"\1" * 16, 18))
        self.check("pt_bad_init", damage, [(C.index_rel(18), 18, "unknown tensor dtype 99")])

    def test_tensor_content_size_mismatch(self):
        def damage(t):
            C.replace_record(t, 19, "Net_conv0.bias", C.tensor_event("Net_conv0.bias", 1, [5], b"\1" * 16, 19))
        self.check("pt_bad_init", damage,
                   [(C.index_rel(19), 19, "tensor_content has 16 bytes but dtype float32 x shape [5] needs 20")])

    def test_forged_shape_does_not_wrap_around(self):
        # 2^62 + 1 float64 elements "fit" 8 bytes if the product wraps: must be refused.
        def damage(t):
            C.replace_record(t, 20, "Net_conv0.bias", C.tensor_event("Net_conv0.bias", 2, [(1 << 61) + 1], b"\1" * 8, 20))
        self.check("pt_bad_init", damage, [(C.index_rel(20), 20, "tensor_content has 8 bytes")])

    def test_broadcast_claiming_gigabytes(self):
        # No tensor_content and no typed values: TensorFlow would fill zeros; a 16-byte record
        # must not claim 8 GB.
        def damage(t):
            C.replace_record(t, 21, "Net_conv0.bias", C.tensor_event("Net_conv0.bias", 1, [1 << 31], b"", 21))
        d, t = self.fresh("pt_bad_init")
        damage(t)
        r = C.ingest(TRIALDB, t, os.path.join(d, "t.db"))
        self.assertLess(r.maxrss_kb, 512 * 1024)
        shutil.rmtree(d)
        self.check("pt_bad_init", damage, [(C.index_rel(21), 21, "would expand to a shape of 2147483648")])

    def test_protobuf_garbage(self):
        def damage(t):
            C.replace_record(t, 22, "Net_conv0.bias", b"\xff\xff\xff\xff\x0f garbage")
        self.check("pt_bad_init", damage, [(C.index_rel(22), 22, "event protobuf does not parse")])

    # --- collections files -------------------------------------------------------------------

    def collections_file(self, t, worker):
        return os.path.join(t, "collections", "000000000", f"{worker}_collections.json")

    def test_garbage_collections_json(self):
        def damage(t):
            with open(self.collections_file(t, "worker_1"), "w") as f:
                f.write("{\"collections\": {\"weights\": ")
        self.check("dist2", damage, [("collections/000000000/worker_1_collections.json", None, "not valid JSON")],
                   strict_first_step=0)

    def test_wrong_typed_collections_json(self):
        def damage(t):
            p = self.collections_file(t, "worker_1")
            with open(p) as f:
                doc = json.load(f)
            doc["collections"]["weights"]["include_regex"] = "^weight"
            with open(p, "w") as f:
                json.dump(doc, f)
        self.check("dist2", damage, [("collections/000000000/worker_1_collections.json", None,
                                      "collection 'weights': include_regex is not a list of strings")],
                   strict_first_step=0)

    def test_collections_damage_keeps_the_other_workers_collections(self):
        def damage(t):
            with open(self.collections_file(t, "worker_1"), "w") as f:
                f.write("[]")
        d, t = self.fresh("dist2")
        damage(t)
        db = os.path.join(d, "t.db")
        self.assertEqual(C.ingest(TRIALDB, t, db, name="t").rc, EXIT_PARTIAL)
        now = C.dump(db, trial="t")
        ref = self.refs["dist2"][1]
        for view in ("trials", "steps", "tensors", "collections", "tensor_values", "reductions"):
            self.assertEqual(now[view], ref[view], view)
        shutil.rmtree(d)

    # --- workers -----------------------------------------------------------------------------

    def test_different_tensors_per_worker_is_not_an_error(self):
        # Workers may save different tensors at one step (smdebug allows it): each keeps its own.
        d, t = self.fresh("dist2")
        doc = C.read_index(t, 4, "worker_1")
        dropped = {e["tensorname"] for e in doc["tensor_payload"][::2]}
        doc["tensor_payload"] = doc["tensor_payload"][1::2]
        C.write_index(t, 4, doc, "worker_1")
        db = os.path.join(d, "t.db")
        r = C.ingest(TRIALDB, t, db, name="t")
        self.assertEqual(r.rc, 0, r)
        ref = self.refs["dist2"][0]
        now = C.rows_by_step(db, "t")
        for s in ref:
            if s != 4:
                self.assertEqual(now[s], ref[s])
        want = [row for row in ref[4] if not (row[3] == "worker_1" and row[1] in dropped)]
        self.assertEqual(now[4], want)
        self.assertGreater(len(ref[4]), len(want))
        shutil.rmtree(d)

    def test_workers_disagreeing_on_a_steps_mode(self):
        def damage(t):
            doc = C.read_index(t, 4, "worker_1")
            doc["meta"]["mode"], doc["meta"]["mode_step"] = "EVAL", 77
            C.write_index(t, 4, doc, "worker_1")
        self.check("dist2", damage, [(C.index_rel(4, "worker_1"), 4,
                                      "worker worker_1 says step 4 is EVAL step 77 but another worker wrote it as TRAIN")])

    # --- several at once ---------------------------------------------------------------------

    def test_many_damaged_steps_at_once(self):
        def damage(t):
            os.remove(C.event_path(t, 2))
            with open(C.index_path(t, 4), "w") as f:
                f.write("nope")
            C.replace_record(t, 23, "Net_conv0.bias", C.tensor_event("Net_conv0.bias", 42, [4], b"\1" * 16, 23))
        self.check("pt_bad_init", damage, [(C.index_rel(2), 2, "does not exist"),
                                           (C.index_rel(4), 4, "not valid JSON"),
                                           (C.index_rel(23), 23, "unknown tensor dtype 42")])


if __name__ == "__main__":
    TRIALDB, FIXTURES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[3:])
