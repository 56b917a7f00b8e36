// The held-out multilingual check of the word units (issue 31 part 2; docs/languages.md): generated text in
// eight languages (Chinese, Japanese, Korean, Thai, Arabic, Hindi, Russian, English), each from its script's
// letters with a plausible word-length distribution and a Zipf-like vocabulary shared by all documents, with
// planted near-duplicates: edited copies whose Jaccard over the generated words' 5-grams is known. Runs
// `neardup dedup --unit word` (n = 5, threshold 0.8) under each word rule and reports precision and recall of
// the planted pairs (true Jaccard >= 0.8) per language; then `simhash fingerprint` (its default profile, word
// 3-grams) and `simhash find-all --distance 3` under the rules it can take. Run from the repo root after `npx tsc`:
//   node --import tsx bench/languages-check.ts [base documents per language, default 400]
// Prints the table of bench/RESULTS-languages.md ("Word units") with the load average before and after;
// LANG_CHECK_DEBUG=1 also lists each rule's false pairs (their true Jaccard) on stderr.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { sfc32 } from './corpus';

const BASE = Number(process.argv[2] ?? 400);
const WORDS = 120;  // words a document
const N = 5, THRESHOLD = 0.8;
const r32 = sfc32(3102);
const r = () => r32() / 2 ** 32;
const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => String.fromCodePoint(lo + i));
/** A length from weights over 1..k. */
const lengthOf = (w: readonly number[]) => {
  let x = r() * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) if ((x -= w[i]) < 0) return i + 1;
  return w.length;
};
const chars = (set: readonly string[], w: readonly number[]) => Array.from({ length: lengthOf(w) }, () => pick(set)).join('');

interface Lang {
  name: string;
  word: () => string;
  sep: string;  // between words ('' for scripts without spaces)
  punct: readonly string[];  // a clause ends with one of these every ~8 words
  phraseSpace?: boolean;  // Thai: a space between phrases
}

const EN = range(0x61, 0x7a), RU = range(0x430, 0x44f);
const AR = [...range(0x628, 0x63a), ...range(0x641, 0x64a)], HARAKAT = range(0x64e, 0x650);
const HI_C = range(0x915, 0x939), HI_V = [...range(0x93e, 0x944), ...range(0x947, 0x948), ...range(0x94b, 0x94c)];
const han = (() => { const s = new Set<string>(); while (s.size < 2500) s.add(String.fromCodePoint(int(0x4e00, 0x9fa5))); return [...s]; })();
const hangul = (() => { const s = new Set<string>(); while (s.size < 900) s.add(String.fromCodePoint(int(0xac00, 0xd7a3))); return [...s]; })();
const HIRA = range(0x3041, 0x3093), KATA = [...range(0x30a1, 0x30f3), 'ー'];
const TH_C = range(0xe01, 0xe2e), TH_MARK = ['\u0e31', ...range(0xe34, 0xe39)], TH_V = ['\u0e32', '\u0e33', '\u0e40', '\u0e41'], TH_TONE = range(0xe48, 0xe4b);
const WORD_LEN = [5, 10, 15, 17, 15, 12, 9, 7, 5, 3];  // Latin/Cyrillic letters a word
const LANGS: Lang[] = [
  { name: 'Chinese', word: () => chars(han, [35, 50, 12, 3]), sep: '', punct: ['，', '。', '、'] },
  {
    name: 'Japanese', sep: '', punct: ['、', '。'],
    word: () => { const k = r(); return k < 0.4 ? chars(han, [45, 50, 5]) : k < 0.8 ? chars(HIRA, [40, 40, 20]) : chars(KATA, [0, 20, 30, 30, 20]); },
  },
  { name: 'Korean', word: () => chars(hangul, [20, 35, 30, 15]), sep: ' ', punct: [',', '.'] },
  {
    name: 'Thai', sep: '', punct: [' '], phraseSpace: true,
    word: () => Array.from({ length: lengthOf([30, 45, 25]) }, () => (r() < 0.2 ? pick(TH_V) : '') + pick(TH_C) +
      (r() < 0.5 ? pick(TH_MARK) : '') + (r() < 0.3 ? pick(TH_TONE) : '') + (r() < 0.3 ? pick(TH_C) : '')).join(''),
  },
  { name: 'Arabic', word: () => Array.from({ length: lengthOf([2, 10, 20, 22, 18, 12, 8]) }, () => pick(AR) + (r() < 0.1 ? pick(HARAKAT) : '')).join(''), sep: ' ', punct: ['،', '.'] },
  {
    name: 'Hindi', sep: ' ', punct: ['।', ','],
    word: () => Array.from({ length: lengthOf([25, 35, 25, 15]) }, () => pick(HI_C) + (r() < 0.1 ? '\u094d' + pick(HI_C) : '') + (r() < 0.6 ? pick(HI_V) : '') + (r() < 0.08 ? '\u0902' : '')).join(''),
  },
  { name: 'Russian', word: () => chars(RU, WORD_LEN), sep: ' ', punct: [',', '.'] },
  { name: 'English', word: () => chars(EN, WORD_LEN), sep: ' ', punct: [',', '.'] },
];

/** A Zipf-like vocabulary: distinct words by rank, sampled with weight 1 / (rank + 2.7). */
function vocabulary(l: Lang, size = 4000): { words: string[]; cdf: Float64Array } {
  const s = new Set<string>();
  while (s.size < size) s.add(l.word());
  const words = [...s];
  const cdf = new Float64Array(size);
  let t = 0;
  for (let i = 0; i < size; i++) cdf[i] = t += 1 / (i + 2.7);
  for (let i = 0; i < size; i++) cdf[i] /= t;
  return { words, cdf };
}
function draw(v: { words: string[]; cdf: Float64Array }): string {
  const x = r();
  let lo = 0, hi = v.cdf.length - 1;
  while (lo < hi) { const m = (lo + hi) >> 1; if (v.cdf[m] < x) lo = m + 1; else hi = m; }
  return v.words[lo];
}
/** The text of a word sequence: words joined by the language's separator, a clause mark every ~8 words. */
function render(l: Lang, words: readonly string[], marks: readonly number[]): string {
  let s = '';
  words.forEach((w, i) => {
    s += w;
    if (marks[i]) s += l.punct[marks[i] - 1] + (l.sep === '' || l.phraseSpace ? '' : ' ');
    else if (i + 1 < words.length) s += l.sep;
  });
  return s;
}
const grams = (w: readonly string[]) => new Set(Array.from({ length: Math.max(1, w.length - N + 1) }, (_, i) => w.slice(i, i + N).join('\u0000')));
function jaccard(a: readonly string[], b: readonly string[]): number {
  const A = grams(a), B = grams(b);
  let inter = 0;
  for (const g of A) if (B.has(g)) inter++;
  return inter / (A.size + B.size - inter);
}

interface Doc { words: string[]; marks: number[] }
function corpus(l: Lang): { texts: string[]; truth: Map<string, number> } {
  const v = vocabulary(l);
  const docs: Doc[] = [];
  for (let i = 0; i < BASE; i++) {
    const words = Array.from({ length: WORDS }, () => draw(v));
    docs.push({ words, marks: words.map(() => (r() < 1 / 8 ? int(1, l.punct.length) : 0)) });
  }
  // planted copies: near-duplicates (one word replaced, and one inserted or deleted in half of them: true J
  // 0.85-0.92) and related documents (6-16 words replaced: J 0.2-0.6), so that no planted pair is near the threshold
  const planted: Array<[number, Doc]> = [];
  for (let i = 0; i < BASE / 4; i++) {
    for (const near of [true, false]) {
      const src = int(0, BASE - 1);
      const words = [...docs[src].words], marks = [...docs[src].marks];
      const k = near ? 1 : int(6, 16);
      for (let e = 0; e < k; e++) words[int(0, words.length - 1)] = draw(v);
      if (near && r() < 0.5) {
        const at = int(0, words.length - 1);
        if (r() < 0.5) { words.splice(at, 1); marks.splice(at, 1); } else { words.splice(at, 0, draw(v)); marks.splice(at, 0, 0); }
      }
      planted.push([src, { words, marks }]);
    }
  }
  const all = [...docs, ...planted.map(([, d]) => d)];
  // the true Jaccard of every pair within a family (a source and its copies)
  const truth = new Map<string, number>();
  const family = new Map<number, number[]>();
  planted.forEach(([src], j) => family.set(src, [...(family.get(src) ?? [src]), BASE + j]));
  for (const members of family.values())
    for (let x = 0; x < members.length; x++)
      for (let y = x + 1; y < members.length; y++) {
        const [a, b] = [members[x], members[y]].sort((p, q) => p - q);
        truth.set(`${a} ${b}`, jaccard(all[a].words, all[b].words));
      }
  return { texts: all.map((d) => render(l, d.words, d.marks)), truth };
}

const cli = path.resolve('dist/cli/main.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'languages-check-'));
function found(input: string, rule: string[]): Set<string> {
  const pairs = path.join(tmp, 'pairs.jsonl');
  execFileSync(process.execPath, [cli, 'dedup', input, '--unit', 'word', '-n', String(N), '--threshold', String(THRESHOLD),
    '--pairs', pairs, ...rule], { stdio: ['ignore', 'ignore', 'inherit'] });
  const out = new Set<string>();
  for (const line of fs.readFileSync(pairs, 'utf8').split('\n')) {
    if (!line) continue;
    const p = JSON.parse(line) as { a: number; b: number };
    out.add(`${Math.min(p.a, p.b)} ${Math.max(p.a, p.b)}`);
  }
  return out;
}

/** simhash fingerprint (default profile: word 3-grams) under a rule, then find-all --distance 3. */
function foundSimhash(input: string, rule: string[]): Set<string> {
  const fps = path.join(tmp, 'fps.txt');
  fs.writeFileSync(fps, execFileSync(process.execPath, [cli, 'simhash', 'fingerprint', input, '--id-field', 'id', ...rule], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 }));
  const out = new Set<string>();
  const text = execFileSync(process.execPath, [cli, 'simhash', 'find-all', '--ids', '--distance', '3', fps], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 28 }).toString();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [a, b] = line.split(' ').map(Number);
    out.add(`${Math.min(a, b)} ${Math.max(a, b)}`);
  }
  return out;
}
const SIMHASH_RULES: Array<[string, string[]]> = [
  ['simhash: nonword (the old default)', ['--split', 'nonword']],
  ['simhash: the new default (no --split)', []],
  ['simhash: unicode, chars', ['--split', 'unicode', '--cjk', 'chars']],
  ['simhash: unicode, bigrams', ['--split', 'unicode', '--cjk', 'bigrams']],
];

const RULES: Array<[string, string[]]> = [
  ['whitespace (the old default)', ['--split', 'whitespace']],
  ['nonword (\\W+)', ['--split', 'nonword']],
  ['unicode, cjk chars', ['--split', 'unicode', '--cjk', 'chars']],
  ['unicode, cjk bigrams', ['--split', 'unicode', '--cjk', 'bigrams']],
  ['the new default (no --split)', []],
];
const load0 = os.loadavg();
const rows: string[] = [];
const ALL = [...RULES.map(([n, r]) => [n, r, found] as const), ...SIMHASH_RULES.map(([n, r]) => [n, r, foundSimhash] as const)];
const totals = ALL.map(() => ({ tp: 0, found: 0, pos: 0 }));
for (const l of LANGS) {
  const { texts, truth } = corpus(l);
  const input = path.join(tmp, `${l.name}.jsonl`);
  fs.writeFileSync(input, texts.map((t, i) => JSON.stringify({ id: i, text: t })).join('\n') + '\n');
  const positives = new Set([...truth].filter(([, j]) => j >= THRESHOLD).map(([k]) => k));
  const js = [...truth.values()];
  const near = js.filter((j) => j >= THRESHOLD), rel = js.filter((j) => j < THRESHOLD);
  const cells = ALL.map(([, rule, how], i) => {
    const f = how(input, rule);
    let tp = 0;
    for (const k of f) if (positives.has(k)) tp++;
    totals[i].tp += tp; totals[i].found += f.size; totals[i].pos += positives.size;
    const p = f.size ? tp / f.size : 1, rc = positives.size ? tp / positives.size : 1;
    if (process.env.LANG_CHECK_DEBUG) {
      const fp = [...f].filter((k) => !positives.has(k));
      const rel = fp.filter((k) => truth.has(k));
      console.error(`${l.name} ${ALL[i][0]}: ${fp.length} false (${rel.length} related copies, true J ${rel.map((k) => truth.get(k)!.toFixed(2)).join(' ')}; ${fp.length - rel.length} others)`);
    }
    return `${p.toFixed(2)} / ${rc.toFixed(2)}`;
  });
  const mean = (a: number[]) => (a.reduce((x, y) => x + y, 0) / Math.max(1, a.length)).toFixed(2);
  rows.push(`| ${l.name} | ${texts.length} | ${near.length} (J ${mean(near)}) | ${rel.length} (J ${mean(rel)}) | ${cells.join(' | ')} |`);
}
const load1 = os.loadavg();
console.log(`load average ${load0.map((x) => x.toFixed(2)).join(' ')} before, ${load1.map((x) => x.toFixed(2)).join(' ')} after; ${os.cpus().length} cores`);
console.log(`\n| language | documents | planted pairs at true J >= 0.8 (mean J) | other planted pairs (mean J) | ${ALL.map(([n]) => n).join(' | ')} |`);
console.log(`|---|---:|---:|---:|${ALL.map(() => '---:').join('|')}|`);
for (const row of rows) console.log(row);
console.log(`| all | | | | ${totals.map((t) => `${(t.found ? t.tp / t.found : 1).toFixed(2)} / ${(t.tp / t.pos).toFixed(2)}`).join(' | ')} |`);
fs.rmSync(tmp, { recursive: true, force: true });
