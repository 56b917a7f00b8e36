// Unicode normalisation in the core (native/core/text/normalization.h): MB/s per core for ASCII, Latin with
// accents (precomposed, as most text is, and decomposed: the slow path), CJK and mixed text, under none / nfc /
// nfkc / nfkc_casefold; then the cost inside the shingle stream (char 5-grams and word 3-grams, fast64),
// with and without it; String.prototype.normalize beside it. Generates the corpora (seeded), packs them,
// and runs the core benchmark build-core/rel/normalize_bench (native/bench/normalize_bench.cc: one thread,
// CPU time, no N-API or result allocation in the figures). Run: node --import tsx bench/normalize.ts [MB per
// corpus, default 8] (from the repo root; prints the tables of bench/RESULTS-languages.md with the load
// average before and after); `--pack DIR [MB]` only writes the packed corpora (for normalize_bench alone).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { machine, sfc32 } from './corpus';

const args = process.argv.slice(2);
const packDir = args[0] === '--pack' ? args[1] : undefined;  // --pack DIR: only write the packed corpora there
const MB = Number((packDir !== undefined ? args[2] : args[0]) ?? 8);
const r32 = sfc32(2026);
const r = () => r32() / 2 ** 32;  // [0, 1)
const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => String.fromCodePoint(lo + i));

const EN = 'the of and to in is that for it as with was on be by this are from at or an have not which but all were when we there can more one'.split(' ');
const LATIN = ['café', 'élève', 'où', 'être', 'déjà', 'Ñandú', 'straße', 'Việt', 'Nguyễn', 'tiếng', 'über', 'façade', 'naïve', 'año', 'São', 'Łódź', 'crème', 'brûlée', 'à', 'la', 'de', 'et', 'le'];
const CJK = [...range(0x4e00, 0x4fff), ...range(0x3041, 0x3093), ...range(0x30a1, 0x30f3), ...range(0xac00, 0xac40), '。', '、', '「', '」', '，', '１', 'Ａ'];
const RU = 'и в не на я быть он с что а по это она этот к но они мы как из у который то за свой что весь год от так о для ты же'.split(' ');
const AR = 'في من على إلى أن عن مع هذا كان التي الذي قد ما لا'.split(' ');

function words(list: readonly string[], sep = ' '): string {
  let s = '';
  while (s.length < 4000) s += pick(list) + sep;
  return s;
}
function docs(make: () => string): string[] {
  const out: string[] = [];
  let bytes = 0;
  while (bytes < MB * 1e6) {
    const d = make();
    out.push(d);
    bytes += Buffer.byteLength(d);
  }
  return out;
}
function cjk(): string {
  let s = '';
  while (s.length < 1500) s += pick(CJK);
  return s;
}
const corpora: [string, string[]][] = [
  ['ASCII (English words)', docs(() => words(EN))],
  ['Latin with accents, NFC', docs(() => words([...EN, ...LATIN, ...LATIN]))],
  ['Latin with accents, NFD', docs(() => words([...EN, ...LATIN, ...LATIN]).normalize('NFD'))],
  ['CJK (Han, kana, Hangul)', docs(cjk)],
  ['mixed (en, ru, ar, CJK, full-width, ligatures, emoji)', docs(() => words([...EN, ...RU, ...AR, ...LATIN, 'ｆｕｌｌ', 'ﬁne', '😀', '①', 'Ⅻ', cjk().slice(0, 8)]))],
];

/** Writes texts as a packed corpus file (bench/pack-corpus.ts layout). */
function pack(file: string, texts: string[]): void {
  const bufs = texts.map((t) => Buffer.from(t, 'utf8'));
  const head = Buffer.alloc(8 + 8 * (bufs.length + 1));
  head.writeBigUInt64LE(BigInt(bufs.length), 0);
  let at = 0;
  bufs.forEach((b, i) => { at += b.length; head.writeBigUInt64LE(BigInt(at), 8 + 8 * (i + 1)); });
  fs.writeFileSync(file, Buffer.concat([head, ...bufs]));
}

function main() {
  if (packDir !== undefined) {
    fs.mkdirSync(packDir, { recursive: true });
    corpora.forEach(([name, texts], i) => pack(path.join(packDir, `c${i}.packed`), texts));
    console.log(corpora.map(([name], i) => `${path.join(packDir, `c${i}.packed`)}: ${name}`).join('\n'));
    return;
  }
  const load = () => fs.readFileSync('/proc/loadavg', 'utf8').trim().split(' ').slice(0, 3).join(' ');
  const bin = path.join(__dirname, '..', 'build-core', 'rel', 'normalize_bench');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: cmake -S native -B build-core/rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-core/rel --target normalize_bench`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-normbench-'));
  try {
    const files = corpora.map(([, texts], i) => {
      const f = path.join(dir, `c${i}.packed`);
      pack(f, texts);
      return f;
    });
    console.log(`# Unicode normalisation — ${machine()}; ${MB} MB per corpus; load average before: ${load()}\n`);
    const out = execFileSync(bin, [...files, '-r', '5'], { encoding: 'utf8' });
    const rows = new Map<string, string[]>();
    for (const line of out.trim().split('\n')) {
      const [file, what, ...rates] = line.split('\t');
      rows.set(`${file} ${what}`, rates);
    }
    const forms = ['none', 'nfc', 'nfkc', 'nfkc_casefold'];
    console.log('## The normaliser alone (core, one thread; MB of input per CPU-second, median of 5)\n');
    console.log(`| text | non-ASCII bytes | changed by NFC / NFKC | ${forms.join(' | ')} | JS normalize('NFC') | JS normalize('NFKC') |`);
    console.log('|---|---:|---:|' + '---:|'.repeat(forms.length + 2));
    corpora.forEach(([name, texts], i) => {
      const mb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / 1e6;
      const js = ['NFC', 'NFKC'].map((f) => {
        const rates: number[] = [];
        for (let k = 0; k < 5; k++) {
          const c0 = process.cpuUsage();
          for (const t of texts) t.normalize(f);
          const c = process.cpuUsage(c0);
          rates.push(mb / ((c.user + c.system) / 1e6));
        }
        return rates.sort((a, b) => a - b)[2].toFixed(0);
      });
      const all = Buffer.from(texts.join(''));
      const high = all.reduce((n, b) => n + (b >= 0x80 ? 1 : 0), 0);
      const changed = (f: string) => `${((100 * texts.filter((t) => t.normalize(f) !== t).length) / texts.length).toFixed(0)}%`;
      console.log(`| ${name} | ${((100 * high) / all.length).toFixed(0)}% | ${changed('NFC')} / ${changed('NFKC')} of docs | ${rows.get(`${files[i]} normalize`)!.join(' | ')} | ${js.join(' | ')} |`);
    });
    console.log('\n## The shingle stream under each form (core, one thread, fast64 into a reused buffer; MB/CPU-s)\n');
    console.log(`| text | shingles | ${forms.join(' | ')} |`);
    console.log('|---|---|' + '---:|'.repeat(forms.length));
    corpora.forEach(([name], i) => {
      for (const [shape, label] of [['char5', 'char 5-grams'], ['word3-lower', 'word 3-grams, lower-cased']])
        console.log(`| ${name} | ${label} | ${rows.get(`${files[i]} ${shape}`)!.join(' | ')} |`);
    });
    console.log(`\nload average after: ${load()}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
