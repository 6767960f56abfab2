// Runs SQL statements (arguments) in an in-memory DuckDB and prints the last one's rows, one JSON
// array per line, each cell in a canonical text form the C++ tests compare exactly: integers in
// decimal, booleans 0/1, doubles as the 16 hex digits of their little-endian IEEE bits, strings as
// is, blobs as lower-case hex, NULL as null. Errors go to stderr with exit code 1.
'use strict';
const { DuckDBInstance, DuckDBBlobValue } = require('@duckdb/node-api');

function cell(v, type) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'number' && (type === 'DOUBLE' || type === 'FLOAT')) {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    return b.toString('hex');
  }
  if (v instanceof DuckDBBlobValue) return Buffer.from(v.bytes).toString('hex');
  return String(v);
}

async function main() {
  const statements = process.argv.slice(2);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  let reader = null;
  for (const sql of statements) reader = await connection.runAndReadAll(sql);
  const types = reader.columnTypes().map((t) => t.toString());
  const out = [];
  for (const row of reader.getRows()) {
    out.push(JSON.stringify(row.map((v, i) => cell(v, types[i]))));
  }
  process.stdout.write(out.length ? out.join('\n') + '\n' : '');
}

main().catch((e) => {
  process.stderr.write(String(e && e.message ? e.message : e) + '\n');
  process.exit(1);
});
