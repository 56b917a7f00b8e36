// The core's Unicode normalisation (native/core/text/normalization.h) against String.prototype.normalize:
// every code point alone, then seeded random strings drawn from every 16-code-point window that holds an
// assigned character (every Unicode block is a run of such windows), with sequences of combining marks,
// Hangul jamo and decomposable characters spliced in; nfkc_casefold against its TS definition (refNormalize);
// the shingle stream under each form against the reference; and `--normalize` through the CLI.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { normalizeTextSync, shingleHashesSync, type NormalizeForm, type ShingleHashOptions } from '../lib/index';
import { refNormalize } from './reference/text';
import { int, pick, randomBytes, randomText, rng } from './reference/random';
import { expectSame, plain, reference } from './helpers/parity';
import { cli } from './cli-helper';
import { normalizeJson, settingsDifferences } from '../lib/minhash/dedup-index';

const test = suite('normalize');
const FORMS: readonly Exclude<NormalizeForm, 'none'>[] = ['nfc', 'nfkc', 'nfkc_casefold'];
const hex = (s: string) => Array.from(s, (c) => c.codePointAt(0)!.toString(16).padStart(4, '0')).join(' ');

function expectNormalized(texts: string[], form: Exclude<NormalizeForm, 'none'>, label: string): void {
  const got = normalizeTextSync(texts, form);
  let bad = 0;
  const first: string[] = [];
  texts.forEach((t, i) => {
    const want = refNormalize(t, form);
    if (got[i] !== want) {
      bad++;
      if (first.length < 5) first.push(`[${hex(t)}] -> [${hex(got[i])}], want [${hex(want)}]`);
    }
  });
  assert.is(bad, 0, `${label} ${form}: ${bad} of ${texts.length} differ, e.g.\n${first.join('\n')}`);
}

// The Unicode version the tables were generated from (tools/gen-unicode.mjs). Under another Node (Node 18:
// Unicode 15.0) only code points this Node knows are drawn: normalisation is stable for assigned characters
// (Unicode's stability policy), so the core and an older Node agree there; a newer Node needs the tables
// regenerated.
const TABLES_UNICODE = /from Unicode ([\d.]+)/.exec(fs.readFileSync(path.join(__dirname, '..', 'native', 'core', 'text', 'normalization_tables.inc'), 'utf8'))![1];
const SAME_UNICODE = TABLES_UNICODE === process.versions.unicode;

// Scalar values by class, from this Node's own Unicode data.
const SCALARS: number[] = [];
for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xd800 || cp > 0xdfff) SCALARS.push(cp);
const ASSIGNED = SCALARS.filter((cp) => !/\p{Cn}/u.test(String.fromCodePoint(cp)));
const ALL = SAME_UNICODE ? SCALARS : ASSIGNED;
const MARKS = ASSIGNED.filter((cp) => /\p{M}/u.test(String.fromCodePoint(cp)));
const DECOMPOSING = ASSIGNED.filter((cp) => String.fromCodePoint(cp).normalize('NFKD') !== String.fromCodePoint(cp));
const JAMO = [...Array.from({ length: 19 }, (_, i) => 0x1100 + i), ...Array.from({ length: 21 }, (_, i) => 0x1161 + i),
  ...Array.from({ length: 28 }, (_, i) => 0x11a7 + i), 0xac00, 0xac01, 0xd7a3, 0xd4db];
const WINDOWS = new Map<number, number[]>();
for (const cp of ASSIGNED) {
  const w = cp >> 4;
  if (!WINDOWS.has(w)) WINDOWS.set(w, []);
  WINDOWS.get(w)!.push(cp);
}

/** A random string: mostly characters of one window, with marks, jamo, decomposable and ASCII characters. */
function randomString(r: () => number, window: number[]): string {
  const out: number[] = [];
  const len = int(r, 1, 24);
  for (let i = 0; i < len; i++) {
    const k = r();
    if (k < 0.45) out.push(pick(r, window));
    else if (k < 0.7) for (let m = int(r, 1, 4); m > 0; m--) out.push(pick(r, MARKS));  // a sequence of marks
    else if (k < 0.8) out.push(pick(r, DECOMPOSING));
    else if (k < 0.88) out.push(pick(r, JAMO));
    else if (k < 0.95) out.push(int(r, 0x20, 0x7e));
    else out.push(pick(r, ASSIGNED));
  }
  return String.fromCodePoint(...out);
}

test(`every code point alone, and after a base letter (NFC, NFKC, nfkc_casefold; tables: Unicode ${TABLES_UNICODE}, this Node: ${process.versions.unicode})`, () => {
  const single = ALL.map((cp) => String.fromCodePoint(cp));
  for (const form of FORMS) expectNormalized(single, form, 'alone');
  const after = DECOMPOSING.concat(MARKS).map((cp) => 'a' + String.fromCodePoint(cp) + '\u0301');
  for (const form of FORMS) expectNormalized(after, form, 'after a');
});

test('random strings from every 16-code-point window with assigned characters (seeded)', () => {
  const r = rng(31);
  const texts: string[] = [];
  for (const window of WINDOWS.values()) texts.push(randomString(r, window));
  assert.ok(texts.length > 5000, `${texts.length} windows`);
  // their NFD and NFKD forms too: composition from fully decomposed input; and long texts (runs and segments
  // of every length, across the eight-byte ASCII scan)
  const more = texts.slice(0, 4000).flatMap((t) => [t.normalize('NFD'), t.normalize('NFKD')]);
  for (let i = 0; i + 40 <= texts.length && more.length < 8200; i += 40) more.push(texts.slice(i, i + 40).join(i % 80 ? ' ' : ''));
  for (const form of FORMS) expectNormalized(texts.concat(more), form, 'random');
});

test('long runs of marks, marks before any starter, Hangul sequences, invalid UTF-8', () => {
  const r = rng(32);
  const texts: string[] = [];
  for (let i = 0; i < 500; i++) {
    const marks = Array.from({ length: int(r, 0, 80) }, () => pick(r, MARKS));
    texts.push(String.fromCodePoint(...marks, ...(i % 2 ? [pick(r, ASSIGNED)] : [])));
    texts.push(String.fromCodePoint(pick(r, ASSIGNED), ...marks));
    texts.push(String.fromCodePoint(...Array.from({ length: int(r, 1, 30) }, () => pick(r, JAMO))));
  }
  for (const form of FORMS) expectNormalized(texts, form, 'runs');
  // bytes with invalid sequences: as Buffer.toString decodes them (U+FFFD per maximal subpart), then normalised
  const bufs = Array.from({ length: 500 }, () => randomBytes(r, int(r, 0, 30), 0.2));
  for (const form of FORMS) {
    const got = normalizeTextSync(bufs, form);
    bufs.forEach((b, i) => assert.is(got[i], refNormalize(b.toString('utf8'), form), `${form} ${b.toString('hex')}`));
  }
});

test('the shingle stream under each form equals the reference (char and word units, with the other options)', () => {
  const r = rng(33);
  const windows = [...WINDOWS.values()];
  const texts: Array<string | Uint8Array> = [];
  for (let i = 0; i < 150; i++) texts.push(randomString(r, pick(r, windows)));
  for (let i = 0; i < 50; i++) texts.push(randomText(r, int(r, 0, 30)), randomBytes(r, int(r, 0, 30), 0.1));
  texts.push('\ufdfa', '\ufdfa \ufdfa', 'ABC', '');
  let k = 0;
  for (const normalize of FORMS)
    for (const unit of ['char', 'word'] as const)
      for (const lowercase of [false, true])
        for (const n of [1, 3]) {
          k++;
          const o: ShingleHashOptions = { normalize, unit, lowercase, n, stripPunctuation: k % 2 === 0, foldWhitespace: k % 3 === 0, split: k % 4 < 2 ? 'whitespace' : 'nonword' };
          expectSame(plain(shingleHashesSync(texts, o)), reference(texts, o), texts, JSON.stringify(o));
        }
  // 'none' is the default: the same hashes as before
  expectSame(plain(shingleHashesSync(texts, { normalize: 'none', n: 3 })), plain(shingleHashesSync(texts, { n: 3 })), texts, 'none');
});

test('invalid normalize values are rejected (API TypeError/RangeError, CLI usage error)', () => {
  assert.throws(() => shingleHashesSync(['x'], { normalize: 'NFC' as never }), (e: Error) => e instanceof RangeError && /'normalize' must be one of 'none', 'nfc', 'nfkc', 'nfkc_casefold'/.test(e.message));
  assert.throws(() => shingleHashesSync(['x'], { normalize: 1 as never }), (e: Error) => e instanceof TypeError && /normalize/.test(e.message));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-norm-'));
  try {
    fs.writeFileSync(path.join(dir, 'in.jsonl'), '{"text":"x"}\n');
    const r = cli(dir, ['shingles', '--normalize', 'nfd', 'in.jsonl']);
    assert.is(r.code, 2);
    assert.match(r.stderr, /--normalize must be one of none, nfc, nfkc, nfkc_casefold, got 'nfd'/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('--normalize nfkc: ｆｕｌｌ and full give the same shingles and the same signature through the CLI', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-norm-'));
  try {
    const a = 'ｆｕｌｌ-width text: ﬁne ligatures, Ｎｏ．１', b = 'full-width text: fine ligatures, No.1';
    fs.writeFileSync(path.join(dir, 'in.jsonl'), JSON.stringify({ text: a }) + '\n' + JSON.stringify({ text: b }) + '\n');
    const lines = (args: string[]) => {
      const r = cli(dir, args);
      assert.is(r.code, 0, r.stderr);
      return r.stdout.toString().trim().split('\n');
    };
    const [sa, sb] = lines(['shingles', '-n', '3', '--normalize', 'nfkc', 'in.jsonl']);
    assert.is(sa, sb);
    const [ma, mb] = lines(['minhash', '--normalize', 'nfkc', 'in.jsonl']);
    assert.is(ma.replace(/"id":[^,]*,/, ''), mb.replace(/"id":[^,]*,/, ''));
    // dedup: the pair is found only under NFKC, and the summary says so
    const run = (extra: string[]) => {
      const r = cli(dir, ['dedup', '--threshold', '0.9', ...extra, 'in.jsonl']);
      assert.is(r.code, 0, r.stderr);
      return JSON.parse(r.stdout.toString().trim().split('\n').pop()!);
    };
    const on = run(['--normalize', 'nfkc']), off = run([]);
    assert.is(on.duplicates, 1);
    assert.is(on.shingle.normalize, 'nfkc');
    assert.is(off.duplicates, 0);
    assert.is(off.shingle.normalize, undefined);  // 'none' is left out: summaries as before
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("an index's settings keep normalize (only when not 'none': older indexes read as 'none')", () => {
  const base = { profile: 'default', threshold: 0.8, num_perm: 128, b: 9, r: 13, seed: '1', banding: 'optimal', verify: 'exact', clustering: 'first' };
  const sh = { unit: 'char', n: 5, split: 'whitespace', lowercase: true, strip_punctuation: false, fold_whitespace: false, short: 'whole' };
  assert.equal(settingsDifferences({ ...base, shingle: sh }, { ...base, shingle: sh }), []);
  assert.equal(settingsDifferences({ ...base, shingle: { ...sh, normalize: 'nfkc' } }, { ...base, shingle: sh }),
    ['shingle.normalize "nfkc" here, "none" in the index']);
  assert.equal(normalizeJson('none'), {});
  assert.equal(normalizeJson('nfc'), { normalize: 'nfc' });
});

test.run();
