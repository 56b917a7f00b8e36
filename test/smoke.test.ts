import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shingleHashesSync } from '../lib/index';

test('smoke: murmur3_32 of a word', () => {
  const r = shingleHashesSync(['hello'], { unit: 'word', n: 1, hash: 'murmur3_32' });
  assert.equal(Array.from(r.hashes), [613153351]);
});

test.run();
