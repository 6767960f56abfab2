"""Loads build/lib/trialdb.so into the stock Debian sqlite3 shell with .load and queries it:
the REGEXP cases of the issue, blobs built by tensor_from_json, error reporting, and a fixture
database ingested by the CLI (a failed ingest fails the test). Also checks the module does not
link its own SQLite."""
from sqlext_testlib import Checker, args, check_self_contained_module, fixture_db, shell

a = args()
c = Checker()
check_self_contained_module(c, a.module, "sqlite3_trialdb_init")

rc, out, err = shell(a.shell, a.module, """
SELECT 'Net_conv0.weight' REGEXP '^(?!gradient).*weight';
SELECT 'gradient/Net_conv0.weight' REGEXP '^(?!gradient).*weight';
SELECT tensor_json(tensor_from_json('[[1,2],[3,4]]', 'float32'));
SELECT tensor_reduce(tensor_from_json('[[1,2],[3,4]]'), 'l2');
SELECT tensor_shape(tensor_concat(v)) FROM (SELECT tensor_from_json('[1,2]') v UNION ALL SELECT tensor_from_json('[3]'));
SELECT group_concat(idx || ':' || value, ' ') FROM tensor_each(tensor_from_json('[5, 6]', 'int8'));
SELECT tensor_histogram(tensor_from_json('[0, 1, 1, 2]'), 2);
""")
c.eq(rc, 0, "shell exit status (stderr: %s)" % err.strip())
c.eq(out.split("\n"), ["1", "0", "[[1,2],[3,4]]", "5.47722557505166", "[3]", "0:5 1:6",
                       '{"edges":[0,1,2],"counts":[1,3]}', ""], "shell output")

rc, out, err = shell(a.shell, a.module, "SELECT tensor_reduce(x'B10C0000', 'sum');")
c.true(rc != 0 and "tensor_reduce: argument 1: value blob data length does not match dtype and shape" in err,
       "malformed blob is an SQL error in the shell: %r" % err)
rc, out, err = shell(a.shell, a.module, "SELECT 'x' REGEXP '[a-';")
c.true(rc != 0 and "invalid regular expression '[a-'" in err, "bad pattern names the pattern: %r" % err)

db = fixture_db(a)
rc, out, err = shell(a.shell, a.module, """
SELECT count(*) > 0 FROM tensor_values WHERE value IS NOT NULL;
SELECT count(*) FROM tensor_values v JOIN reductions r USING (trial, tensor, step, worker)
 WHERE v.value IS NOT NULL AND r.abs = 0 AND r.reduction = 'mean'
   AND abs(tensor_reduce(v.value, 'mean') - r.value) > 1e-12 * (1 + abs(r.value));
SELECT count(*) FROM tensor_values WHERE value IS NOT NULL AND tensor_dtype(value) != dtype;
""", db=db)
c.eq((rc, out.split("\n")[:3]), (0, ["1", "0", "0"]), "fixture db queries (stderr %s)" % err.strip())
c.done()
