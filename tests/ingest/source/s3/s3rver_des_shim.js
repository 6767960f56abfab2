// Preloaded into s3rver (node -r) by the tests: it counts the bytes the server sends (at the end)
// and keeps continuation tokens working. s3rver encrypts its ListObjectsV2 continuation
// tokens with DES, which OpenSSL 3 (Node >= 17) refuses unless its legacy provider is loaded, so
// paginated listings fail with 500. The token only has to survive a round trip through the same
// server, so when DES is unavailable this substitutes AES-128-CBC with the key and IV zero-padded.
'use strict';
const crypto = require('crypto');
const pad16 = (b) => Buffer.concat([Buffer.from(b), Buffer.alloc(16)]).subarray(0, 16);
for (const name of ['createCipheriv', 'createDecipheriv']) {
  const original = crypto[name];
  crypto[name] = function (algorithm, key, iv, options) {
    if (String(algorithm).toLowerCase() === 'des') {
      try {
        return original.call(crypto, algorithm, key, iv, options);
      } catch (e) {
        return original.call(crypto, 'aes-128-cbc', pad16(key), pad16(iv), options);
      }
    }
    return original.call(crypto, algorithm, key, iv, options);
  };
}

// The bytes of the response bodies the server sent, for tests that check what an ingest
// transferred: the running total, rewritten after every response to <--directory>/../bytes_sent
// (S3rverProcess::bytes_sent).
const http = require('http');
const fs = require('fs');
const path = require('path');
const directory = process.argv[process.argv.indexOf('--directory') + 1];
const totalFile = path.join(directory, '..', 'bytes_sent');
let total = 0;
for (const name of ['write', 'end']) {
  const original = http.ServerResponse.prototype[name];
  http.ServerResponse.prototype[name] = function (chunk, ...rest) {
    if (chunk && typeof chunk !== 'function') total += Buffer.byteLength(chunk);
    if (name === 'end') fs.writeFileSync(totalFile, String(total));
    return original.call(this, chunk, ...rest);
  };
}
