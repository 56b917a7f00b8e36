// Dedup on corpora of large families (issue 26): recall, precision and CPU of the defaults vs `--fast`, side
// by side, against exact truth.
//
// Corpora (built here, never committed; deterministic):
//   families   every .js/.ts/.md file under the project's node_modules (symbolic links followed), one JSONL
//              line each, the path as id: generated locale modules, re-export stubs, copies of licences and
//              type declarations, i.e. band buckets of many documents.
//   copies30   SpamAssassin texts, each in 30 edited copies (0-6 % of its words replaced, a quarter
//              with 5 % of the words upper-cased), --copies-mb of it, the copies shuffled.
//   noisy      bench/dedup-noisy-corpus.ts (--noisy-mb), the corpus the defaults were tuned on.
// Truth (out of the timed part): the shingle sets of the verification (lower-cased char 5-grams, fast64 hashes cut
// to 53 bits), then every pair with J >= 0.8 by brute force over all pairs, cut only by exact bounds: the size
// filter (|B| <= |A| / t for |A| <= |B|) and a merge that stops once the intersection cannot reach t.
// Empty sets are no near-duplicates. Truth flags: doubri's keep rule over the true pairs.
// Timed: the CLI (node dist/cli/main.js), defaults and --fast alternated, --flags only (what a dedup run
// writes), `--rounds` each; CPU = user + sys of the process (/usr/bin/time), medians. Quality: one more run of
// each with --pairs.
//   npx tsc -p . && node --import tsx bench/dedup-families.ts [--copies-mb 20] [--noisy-mb 20] [--rounds 3] [--cli dist/cli/main.js]
// (CPU alone on a larger corpus: node --import tsx -e "require('./bench/dedup-families').buildCopies('c.jsonl', 100e6)",
// then /usr/bin/time the CLI on it.)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { shingleHashes } from '../lib/index';
import { keptFlags, prf } from '../test/reference/jaccard-join';
import { loadTexts, machine, median } from './corpus';
import { generateNoisyCorpus } from './dedup-noisy-corpus';
import { makeRng } from '../test/support/noisy-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const T = 0.8;
const root = path.join(__dirname, '..');

function walk(dir: string, out: string[]): void {
  let ents: fs.Dirent[];
  try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of ents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const p = path.join(dir, e.name);
    let st: fs.Stats;
    try { st = fs.statSync(p); } catch { continue; }
    if (st.isDirectory()) walk(p, out);
    else if (st.isFile() && /\.(js|ts|md)$/.test(e.name)) out.push(p);
  }
}

export function buildFamilies(out: string): void {
  const files: string[] = [];
  walk(path.join(root, 'node_modules'), files);
  const lines = files.map((f) => JSON.stringify({ id: path.relative(root, f), text: fs.readFileSync(f, 'utf8') }));
  fs.writeFileSync(out + '.tmp', lines.join('\n') + '\n');
  fs.renameSync(out + '.tmp', out);
}

export function buildCopies(out: string, bytes: number, copies = 30, seed = 7): void {
  const texts = loadTexts().map((t) => t.slice(0, 4000));
  const rnd = makeRng(seed);
  const word = () => Math.floor(rnd() * 2 ** 31).toString(36);
  const docs: string[] = [];
  let written = 0;
  for (let i = 0; written < bytes; i++) {
    const base = word() + ' ' + texts[i % texts.length];
    for (let c = 0; c < copies; c++) {
      const rate = [0, 0.01, 0.02, 0.04, 0.06][c % 5];
      let t = base.split(' ').map((w) => (rnd() < rate ? word() : w)).join(' ');
      if (c % 4 === 1) t = t.split(' ').map((w) => (rnd() < 0.05 ? w.toUpperCase() : w)).join(' ');
      docs.push(t);
      written += t.length;
    }
  }
  for (let i = docs.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [docs[i], docs[j]] = [docs[j], docs[i]]; }
  fs.writeFileSync(out + '.tmp', docs.map((t, id) => JSON.stringify({ id, text: t })).join('\n') + '\n');
  fs.renameSync(out + '.tmp', out);
}

function jsonlTexts(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l).text as string);
}

async function truthOf(texts: string[]): Promise<{ pairs: string[]; dropped: string[] }> {
  const sets: Float64Array[] = [];
  for (let i = 0; i < texts.length; i += 512) {
    const r = await shingleHashes(texts.slice(i, i + 512), { lowercase: true, hash: 'fast64', dedupe: true });
    const h = r.hashes as BigUint64Array;
    for (let k = 0; k + 1 < r.offsets.length; k++) {
      const s = Float64Array.from(h.subarray(r.offsets[k], r.offsets[k + 1]), (x) => Number(x >> 11n)).sort();
      let m = 0;  // distinct after the cut
      for (let j = 0; j < s.length; j++) if (j === 0 || s[j] !== s[j - 1]) s[m++] = s[j];
      sets.push(s.subarray(0, m));
    }
  }
  const order = [...sets.keys()].sort((a, b) => sets[a].length - sets[b].length || a - b);
  const pairs: [number, number][] = [];
  for (let x = 0; x < order.length; x++) {
    const A = sets[order[x]], na = A.length;
    if (na === 0) continue;
    for (let y = x + 1; y < order.length; y++) {
      const B = sets[order[y]], nb = B.length;
      if (na < T * nb) break;  // sizes ascending: no later set can reach t
      const need = Math.ceil((T * (na + nb)) / (1 + T) - 1e-9);
      let i = 0, j = 0, inter = 0;
      while (i < na && j < nb) {
        if (inter + Math.min(na - i, nb - j) < need) break;
        if (A[i] < B[j]) i++; else if (B[j] < A[i]) j++; else { inter++; i++; j++; }
      }
      if (inter / (na + nb - inter) >= T) {
        const a = order[x], b = order[y];
        pairs.push(a < b ? [a, b] : [b, a]);
      }
    }
  }
  const keep = keptFlags(texts.length, pairs);
  return { pairs: pairs.map(([a, b]) => `${a},${b}`), dropped: [...keep.keys()].filter((i) => !keep[i]).map(String) };
}

function run(cli: string, file: string, args: string[], dir: string): { cpu: number; summary: Record<string, unknown> } {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', 'nice', '-n', '10', process.execPath, cli, 'dedup', file, ...args],
    { cwd: dir, maxBuffer: 1 << 26, env: { ...process.env } });
  if (r.status !== 0) throw new Error(`${cli} dedup ${args.join(' ')}: ${r.stderr}`);
  const err = r.stderr.toString().trim().split('\n');
  const [u, s] = err[err.length - 1].split(' ').map(Number);
  return { cpu: u + s, summary: JSON.parse(r.stdout.toString()) };
}

if (require.main === module) (async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-families-'));
  const cli = path.resolve(opt('cli', path.join(root, 'dist', 'cli', 'main.js')));
  const rounds = Number(opt('rounds', '3'));
  try {
    const corpora: [string, string][] = [];
    const fam = path.join(dir, 'families.jsonl');
    buildFamilies(fam);
    corpora.push(['families (node_modules .js/.ts/.md)', fam]);
    const cp = path.join(dir, 'copies30.jsonl');
    buildCopies(cp, Number(opt('copies-mb', '20')) * 1e6);
    corpora.push(['30 edited copies', cp]);
    const noisy = path.join(dir, 'noisy.jsonl');
    generateNoisyCorpus(noisy, Number(opt('noisy-mb', '20')) * 1e6);
    corpora.push(['generated noisy', noisy]);
    console.log(`# dedup on large families, J >= ${T}: ${machine()}; CLI ${path.relative(root, cli)}\n`);
    for (const [name, file] of corpora) {
      const texts = jsonlTexts(file);
      const t0 = Date.now();
      const truth = await truthOf(texts);
      const mb = fs.statSync(file).size / 1e6;
      console.log(`## ${name}: ${texts.length} documents, ${mb.toFixed(1)} MB, ${truth.pairs.length} true pairs, ${truth.dropped.length} true duplicates (truth in ${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
      console.log('| settings | pairs P | pairs R | flags P | flags R | dropped | CPU-s (median) | CPU ratio |');
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
      const settings: [string, string[]][] = [['defaults', []], ['--fast', ['--fast']]];
      const cpu: number[][] = settings.map(() => []);
      for (let k = 0; k < rounds; k++) settings.forEach(([, a], i) => cpu[i].push(run(cli, file, [...a, '--flags', 'f.txt'], dir).cpu));
      const base = median(cpu[0]);
      for (const [i, [label, a]] of settings.entries()) {
        run(cli, file, [...a, '--pairs', 'p.jsonl', '--flags', 'f.txt'], dir);
        const got = fs.readFileSync(path.join(dir, 'p.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => { const p = JSON.parse(l); return `${p.a},${p.b}`; });
        const flags = fs.readFileSync(path.join(dir, 'f.txt'), 'utf8').split('\n').filter(Boolean);
        const dropped = [...flags.keys()].filter((d) => flags[d] === '0').map(String);
        const p = prf(got, truth.pairs), f = prf(dropped, truth.dropped);
        const x = (v: number) => v.toFixed(3);
        console.log(`| ${label} | ${x(p.precision)} | ${x(p.recall)} | ${x(f.precision)} | ${x(f.recall)} | ${dropped.length} | ${median(cpu[i]).toFixed(2)} | ${(median(cpu[i]) / base).toFixed(2)} |`);
      }
      console.log('');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();
