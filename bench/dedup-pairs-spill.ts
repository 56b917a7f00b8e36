// dedup --pairs on a corpus of big families (issue 26): peak RSS and CPU with the candidate pairs in memory and
// spilled to sorted runs in --tmp, side by side (and, with --base DIST, another build's CLI, e.g. main's).
//
// Corpus (built here, deterministic, never committed): --families families of --size near-copies of one
// 40-word text each (0-25 % of the words replaced), plus 10 % unrelated texts, shuffled: every band bucket of
// a family holds hundreds of documents, so the candidate pairs grow as families x size^2 / 2.
// Runs: the CLI (dist/cli/main.js) with --pairs --flags, under /usr/bin/time -v (max RSS, user + sys), one run
// each: --memory 4G (a buffer of 26.8 M pairs: in memory), no --memory (2^23 pairs), --memory M (a quarter of
// it for pairs: spilled), and the --base CLI if given (no --memory). The pairs files are compared byte for byte.
//   npx tsc -p . && node --import tsx bench/dedup-pairs-spill.ts [--families 8] [--size 1500] [--memory 64M] [--base /tmp/base/dist/cli/main.js]
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const families = Number(opt('families', '8')), size = Number(opt('size', '1500')), memory = opt('memory', '64M');
const base = opt('base', '');
const cliMain = path.join(__dirname, '..', 'dist', 'cli', 'main.js');

function corpus(file: string): number {
  let s = 3;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
  const vocab = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
  const words = (k: number) => Array.from({ length: k }, () => vocab[Math.floor(rnd() * vocab.length)]);
  const lines: string[] = [];
  for (let f = 0; f < families; f++) {
    const t = words(40);
    for (let i = 0; i < size; i++) {
      const rate = [0, 0.01, 0.03, 0.05, 0.08, 0.12, 0.18, 0.25][Math.floor(rnd() * 8)];
      lines.push(t.map((w) => (rnd() < rate ? vocab[Math.floor(rnd() * vocab.length)] : w)).join(' '));
    }
  }
  for (let i = 0; i < families * size / 9; i++) lines.push(words(40).join(' '));
  for (let i = lines.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [lines[i], lines[j]] = [lines[j], lines[i]]; }
  fs.writeFileSync(file, lines.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  return lines.length;
}

function run(label: string, main: string, args: string[], env: Record<string, string>) {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, main, ...args], { env: { ...process.env, ...env }, maxBuffer: 1 << 28 });
  const err = r.stderr.toString();
  const num = (re: RegExp) => Number(re.exec(err)?.[1] ?? NaN);
  const cpu = num(/User time \(seconds\): ([\d.]+)/) + num(/System time \(seconds\): ([\d.]+)/);
  const rss = num(/Maximum resident set size \(kbytes\): (\d+)/) / 1024;
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)/.exec(err)?.[1] ?? '?';
  if (r.status !== 0) throw new Error(`${label}: exit ${r.status}\n${err}`);
  const summary = JSON.parse(r.stdout.toString());
  return { label, cpu, rss, wall, summary };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-pairs-'));
try {
  const input = path.join(dir, 'in.jsonl');
  const docs = corpus(input);
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  const common = (out: string) => ['dedup', input, '--pairs', path.join(dir, out), '--flags', path.join(dir, `${out}.flags`), '--tmp', tmp];
  const rows = [
    run('this, --memory 4G (in memory)', cliMain, [...common('memory'), '--memory', '4G'], {}),
    run('this, no --memory (buffer 2^23 pairs)', cliMain, common('default'), {}),
    run(`this, --memory ${memory} (spilled)`, cliMain, [...common('spilled'), '--memory', memory], {}),
  ];
  if (base) rows.push(run('base', base, common('base'), {}));
  const same = (a: string, b: string) => fs.readFileSync(path.join(dir, a)).equals(fs.readFileSync(path.join(dir, b)));
  console.log(`${docs} documents, ${families} families of ${size}; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`);
  console.log('| run | candidate pairs | reported pairs | pair runs | spilled MB | peak RSS MB | CPU s | wall |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const s = r.summary;
    console.log(`| ${r.label} | ${s.candidate_pairs} | ${s.reported_pairs} | ${s.pair_runs ?? '-'} | ${(s.spilled_bytes / 1e6).toFixed(1)} | ${r.rss.toFixed(0)} | ${r.cpu.toFixed(2)} | ${r.wall} |`);
  }
  console.log(`pairs files identical to the in-memory run's: spilled ${same('memory', 'spilled')}, default ${same('memory', 'default')}${base ? `, base ${same('memory', 'base')}` : ''}; flags: ${same('memory.flags', 'spilled.flags')}${base ? `, ${same('memory.flags', 'base.flags')}` : ''}`);
  console.log(`spill folder left: ${fs.readdirSync(tmp).length} entries`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
