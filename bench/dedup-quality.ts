// Quality of `dedup` settings against exact truth: every pair with Jaccard >= 0.8 of the char 5-gram sets of
// the lower-cased texts (the exact prefix-filter join of test/reference/jaccard-join.ts over the shingles'
// 64-bit fast64 hashes, cut to 53 bits for JS numbers: ~1e-2 expected collisions in 10^7 shingles), and the
// truth's flags (doubri's keep rule over the true pairs). Reports pairs and flags precision / recall / F1 and
// the wall time of each setting through the library API (the same code path as the CLI).
//   node --import tsx bench/dedup-quality.ts [--noisy FILE] [--noisy-mb 30]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { dedup, shingleHashes, type DedupOptions } from '../lib/index';
import { jaccardJoin, keptFlags, prf } from '../test/reference/jaccard-join';
import { corpusPath, machine } from './corpus';
import { generateNoisyCorpus } from './dedup-noisy-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const T = 0.8;

function jsonlTexts(file: string): string[] {
  let raw = fs.readFileSync(file);
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = zlib.gunzipSync(raw);
  return raw.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l).text as string);
}

const bodyOf = (t: string) => { const k = t.search(/\r?\n\r?\n/); return k < 0 ? '' : t.slice(k).replace(/^\s+/, ''); };

async function truthOf(texts: string[]) {
  const sets: Float64Array[] = [];
  for (let i = 0; i < texts.length; i += 2048) {
    const r = await shingleHashes(texts.slice(i, i + 2048), { lowercase: true, hash: 'fast64', dedupe: true });
    const h = r.hashes as BigUint64Array;
    for (let k = 0; k + 1 < r.offsets.length; k++)
      sets.push(Float64Array.from(h.subarray(r.offsets[k], r.offsets[k + 1]), (x) => Number(x >> 11n)).sort());
  }
  const pairs = jaccardJoin(sets, T);
  const keep = keptFlags(texts.length, pairs);
  return { pairs: pairs.map(([a, b]) => `${a},${b}`), dropped: [...keep.keys()].filter((i) => !keep[i]).map(String) };
}

const SETTINGS: [string, DedupOptions][] = [
  ['defaults (exact verification, lower-case, recall banding 16x6, keep rule)', {}],
  ['--fast (no verification; banding 9x13)', { verify: 'none' }],
  ['old defaults (case kept, no verification, 9x13, components)', { lowercase: false, verify: 'none', clustering: 'components' }],
  ['defaults --verify estimate', { verify: 'estimate' }],
  ['defaults --clustering components', { clustering: 'components' }],
  ['defaults --keep-case', { lowercase: false }],
  ['defaults --fold-whitespace', { foldWhitespace: true }],
  ['defaults --strip-punctuation', { stripPunctuation: true }],
];

(async () => {
  const noisy = opt('noisy', path.join(os.tmpdir(), 'neardup-bench', 'dedup-noisy-30m.jsonl'));
  if (!fs.existsSync(noisy)) {
    fs.mkdirSync(path.dirname(noisy), { recursive: true });
    generateNoisyCorpus(noisy, Number(opt('noisy-mb', '30')) * 1e6);
  }
  const mails = jsonlTexts(corpusPath);
  const corpora: [string, string[]][] = [
    ['SpamAssassin bodies', mails.map(bodyOf)], ['SpamAssassin full mails', mails], [`generated noisy (${path.basename(noisy)})`, jsonlTexts(noisy)],
  ];
  console.log(`# dedup quality at J >= ${T}: ${machine()}\n`);
  for (const [name, texts] of corpora) {
    const t0 = Date.now();
    const truth = await truthOf(texts);
    console.log(`## ${name}: ${texts.length} documents, ${truth.pairs.length} true pairs, ${truth.dropped.length} true duplicates (truth in ${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
    console.log('| settings | (b, r) | pairs P | pairs R | pairs F1 | flags P | flags R | flags F1 | dropped | s |');
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [label, o] of SETTINGS) {
      const s0 = Date.now();
      const r = await dedup(texts, { ...o, threshold: T, pairs: true });
      const secs = (Date.now() - s0) / 1000;
      const p = prf(Array.from(r.pairA, (a, i) => `${a},${r.pairB[i]}`), truth.pairs);
      const f = prf([...r.representative.keys()].filter((i) => r.representative[i] !== i).map(String), truth.dropped);
      const x = (v: number) => v.toFixed(3);
      console.log(`| ${label} | ${r.b}x${r.r} | ${x(p.precision)} | ${x(p.recall)} | ${x(p.f1)} | ${x(f.precision)} | ${x(f.recall)} | ${x(f.f1)} | ${r.duplicates} | ${secs.toFixed(1)} |`);
    }
    console.log('');
  }
})();
