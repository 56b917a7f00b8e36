// SimHash weighting (issue 26): how many unrelated documents share a fingerprint under each weighting.
//   nice -n 10 node --import tsx bench/simhash-weighting.ts
// Corpora: test/fixtures/corpora/spamassassin.jsonl.gz (one document per message) and every file under
// node_modules/ (one document per file, 1 byte .. 4 MiB). Fingerprints: char 5-grams (fast64) and the default
// profile (word 3-grams), --weighting count and binary. A pair of documents with the same fingerprint is
// "unrelated" when the Jaccard similarity of their distinct char 5-gram sets is below 0.5 (exact, from the
// shingle hashes); pairs are counted over every group of equal fingerprints (groups over 400 documents: a
// fixed sample of 400, the count scaled to the group).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { shingleHashesSync, simhashFingerprintsSync } from '../lib/index';
import { nodeModulesFiles } from './node-modules-files';

const root = path.join(__dirname, '..');

function spam(): Buffer[] {
  const f = path.join(root, 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz');
  return zlib.gunzipSync(fs.readFileSync(f)).toString('utf8').split('\n').filter(Boolean).map((l) => Buffer.from(JSON.parse(l).text as string));
}

const files = (): Buffer[] => nodeModulesFiles(root);

function jaccard(a: Set<bigint>, b: Set<bigint>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  const [s, l] = a.size < b.size ? [a, b] : [b, a];
  for (const x of s) if (l.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

const log = (s: string) => console.log(s);
log('| corpus | docs | shingles | weighting | distinct fingerprints | docs sharing one | largest group | unrelated pairs (J < 0.5) | docs in an unrelated pair |');
log('|---|---:|---|---|---:|---:|---:|---:|---:|');
for (const [name, docs] of [['SpamAssassin', spam()], ['node_modules files', files()]] as const) {
  const sh = shingleHashesSync(docs, { unit: 'char', n: 5, dedupe: true });
  const sets = docs.map((_, i) => new Set(sh.hashes.subarray(sh.offsets[i], sh.offsets[i + 1]) as BigUint64Array));
  for (const [shName, base] of [['char 5-grams', { unit: 'char', n: 5 }], ['default (word 3-grams)', {}]] as const) {
    for (const weighting of ['count', 'binary'] as const) {
      const fps = simhashFingerprintsSync(docs, { ...base, weighting } as never);
      const groups = new Map<bigint, number[]>();
      fps.forEach((f, i) => {
        const g = groups.get(f);
        if (g) g.push(i);
        else groups.set(f, [i]);
      });
      let sharing = 0, largest = 0, unrelated = 0;
      const inPair = new Set<number>();
      for (const g of groups.values()) {
        if (g.length < 2) continue;
        sharing += g.length;
        largest = Math.max(largest, g.length);
        const s = g.length > 400 ? g.filter((_, i) => i % Math.ceil(g.length / 400) === 0) : g;
        let u = 0;
        for (let a = 0; a < s.length; a++)
          for (let b = a + 1; b < s.length; b++)
            if (jaccard(sets[s[a]], sets[s[b]]) < 0.5) {
              u++;
              inPair.add(s[a]);
              inPair.add(s[b]);
            }
        unrelated += s === g ? u : Math.round((u * g.length * (g.length - 1)) / (s.length * (s.length - 1)));
      }
      log(`| ${name} | ${docs.length} | ${shName} | ${weighting} | ${groups.size} | ${sharing} | ${largest} | ${unrelated} | ${inPair.size} |`);
    }
  }
}
