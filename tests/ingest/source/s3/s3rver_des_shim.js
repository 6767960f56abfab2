// Preloaded into s3rver (node -r) by the tests. s3rver encrypts its ListObjectsV2 continuation
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
