// The lower-casing of U+0130 (İ): neardup's full mapping (İ -> i + U+0307 COMBINING DOT ABOVE, as
// String.prototype.toLowerCase and Python's str.lower()) against the simple mapping many tools use (İ -> i).
//   node --import tsx bench/lowercase-i.ts
// Corpora: TypeScript's Turkish diagnostic messages (node_modules/typescript/lib/tr/, one document per
// message) and the SpamAssassin sample. For each shingling, the documents whose shingle set changes and the
// mean Jaccard similarity between the two sets of those documents (exact, distinct fast64 hashes).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { shingleHashesSync } from '../lib/index';

const root = path.join(__dirname, '..');
const tr = Object.values(JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'typescript', 'lib', 'tr', 'diagnosticMessages.generated.json'), 'utf8'))) as string[];
const spam = zlib.gunzipSync(fs.readFileSync(path.join(root, 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz'))).toString('utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l).text as string);

console.log('| corpus | docs | docs with U+0130 | shingles | docs whose set changes | mean Jaccard of their two sets |');
console.log('|---|---:|---:|---|---:|---:|');
for (const [name, docs] of [['TypeScript tr messages', tr], ['SpamAssassin', spam]] as const) {
  const simple = docs.map((d) => d.replace(/\u0130/g, 'i'));  // İ -> i, then the same lower-casing for the rest
  const withI = docs.filter((d) => d.includes('\u0130')).length;
  for (const [shName, o] of [
    ['word 3-grams, nonword split', { unit: 'word', n: 3, split: 'nonword', lowercase: true }],
    ['word 5-grams, whitespace split', { unit: 'word', n: 5, split: 'whitespace', lowercase: true }],
    ['char 5-grams', { unit: 'char', n: 5, lowercase: true }],
  ] as const) {
    const a = shingleHashesSync(docs, { ...o, dedupe: true } as never), b = shingleHashesSync(simple, { ...o, dedupe: true } as never);
    let changed = 0, jsum = 0;
    docs.forEach((_, i) => {
      const x = new Set(a.hashes.subarray(a.offsets[i], a.offsets[i + 1]) as BigUint64Array);
      const y = new Set(b.hashes.subarray(b.offsets[i], b.offsets[i + 1]) as BigUint64Array);
      let inter = 0;
      for (const h of x) if (y.has(h)) inter++;
      if (inter === x.size && inter === y.size) return;
      changed++;
      jsum += inter / (x.size + y.size - inter);
    });
    console.log(`| ${name} | ${docs.length} | ${withI} | ${shName} | ${changed} | ${changed ? (jsum / changed).toFixed(3) : '-'} |`);
  }
}
