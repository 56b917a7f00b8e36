// The incremental run (issue 10, "Against yesterday's index"): `neardup dedup new --index old.lsh` against a
// full rerun over old + new, and the cost of writing the index (--index-out). Child processes of the built CLI
// (dist/cli/main.js) under /usr/bin/time and taskset -c 0,1 (NEARDUP_THREADS=2), alternated, medians.
//   node --import tsx bench/dedup-index.ts [--runs N] [--mb M] [--new-share F] [--fast-only]
// The corpus (default 200 MB) comes from bench/dedup-noisy-corpus.ts; the last --new-share (default 0.1) of its
// lines is today's input, the rest everything kept before. Checks that the incremental flags equal the tail of
// the full run's flags. Prints a markdown table.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { machine, median } from './corpus';
import { generateNoisyCorpus } from './dedup-noisy-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const runs = Number(opt('runs', '3'));
const mb = Number(opt('mb', '200'));
const newShare = Number(opt('new-share', '0.1'));
const dir = path.join(os.tmpdir(), 'neardup-bench-index');
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');

interface Run { wall: number; cpu: number; rssMb: number; summary: Record<string, unknown> }

function once(args: string[]): Run {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', 'taskset', '-c', '0,1', process.execPath, MAIN, 'dedup', ...args, '--tmp', dir], {
    env: { ...process.env, NEARDUP_THREADS: '2' }, encoding: 'utf8', maxBuffer: 1 << 26, cwd: dir,
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`dedup ${args.join(' ')} failed: ${r.stderr}`);
  return { wall: +m[1], cpu: +m[2] + +m[3], rssMb: +m[4] / 1024, summary: JSON.parse(r.stdout) };
}

fs.mkdirSync(dir, { recursive: true });
const corpus = path.join(dir, `noisy-${mb}mb.jsonl`);
if (!fs.existsSync(corpus)) {
  console.error(`generating ${corpus}...`);
  generateNoisyCorpus(corpus, mb * 1e6);
}
const lines = fs.readFileSync(corpus, 'utf8').split('\n').filter((l) => l.length > 0);
const cut = Math.round(lines.length * (1 - newShare));
fs.writeFileSync(path.join(dir, 'old.jsonl'), lines.slice(0, cut).join('\n') + '\n');
fs.writeFileSync(path.join(dir, 'new.jsonl'), lines.slice(cut).join('\n') + '\n');
const sizeMb = (f: string) => fs.statSync(path.join(dir, f)).size / 1e6;

console.log(`# dedup against an index vs a full rerun: ${machine()}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
console.log(`old.jsonl: ${cut.toLocaleString('en')} lines, ${sizeMb('old.jsonl').toFixed(0)} MB; new.jsonl: ${(lines.length - cut).toLocaleString('en')} lines, ${sizeMb('new.jsonl').toFixed(0)} MB\n`);
console.log('| settings | run | input MB | wall s | CPU s | peak RSS MB | duplicates | index MB | CPU vs full rerun |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');

const SETTINGS: [string, string[]][] = argv.includes('--fast-only') ? [['--fast', ['--fast']]] : [['defaults (verified)', []], ['--fast', ['--fast']]];
for (const [label, extra] of SETTINGS) {
  // the index of old.jsonl (day 1), built once per setting
  const build = once(['old.jsonl', '--index-out', 'old.lsh', '--flags', 'f-old-indexed', ...extra]);
  const JOBS: [string, string[], number][] = [
    ['full rerun over old + new', ['old.jsonl', 'new.jsonl', '--flags', 'f-full', ...extra], sizeMb('old.jsonl') + sizeMb('new.jsonl')],
    ['new against the index (--index)', ['new.jsonl', '--index', 'old.lsh', '--flags', 'f-inc', ...extra], sizeMb('new.jsonl')],
    ['new against the index, extended (--index --index-out)', ['new.jsonl', '--index', 'old.lsh', '--index-out', 'all.lsh', '--flags', 'f-inc2', ...extra], sizeMb('new.jsonl')],
    ['old alone (no index)', ['old.jsonl', '--flags', 'f-old', ...extra], sizeMb('old.jsonl')],
    ['old alone, writing its index (--index-out)', ['old.jsonl', '--index-out', 'old2.lsh', '--flags', 'f-old2', ...extra], sizeMb('old.jsonl')],
  ];
  const results = JOBS.map(() => [] as Run[]);
  results[4].push(build);
  for (let k = 0; k < runs; k++) JOBS.forEach(([, args], i) => { if (!(i === 4 && k === 0)) results[i].push(once(args)); });
  // the incremental run gives the full run's flags of new.jsonl
  const full = fs.readFileSync(path.join(dir, 'f-full'), 'utf8').split('\n');
  const inc = fs.readFileSync(path.join(dir, 'f-inc'), 'utf8').split('\n');
  if (full.slice(cut).join('\n') !== inc.join('\n')) throw new Error(`${label}: the incremental flags differ from the full run's`);
  const fullCpu = median(results[0].map((r) => r.cpu));
  JOBS.forEach(([name, , inMb], i) => {
    const rs = results[i];
    const cpu = median(rs.map((r) => r.cpu)), wall = median(rs.map((r) => r.wall)), rss = Math.max(...rs.map((r) => r.rssMb));
    const written = (rs[0].summary.index as { written?: string } | undefined)?.written;
    const ix = written ? sizeMb(written).toFixed(0) : '';
    console.log(`| ${label} | ${name} | ${inMb.toFixed(0)} | ${wall.toFixed(1)} | ${cpu.toFixed(1)} | ${rss.toFixed(0)} | ${rs[0].summary.duplicates} | ${ix} | ${(cpu / fullCpu).toFixed(2)} |`);
  });
}
console.log(`\n${runs} runs each (alternated), medians; peak RSS: the largest.`);
fs.rmSync(dir, { recursive: true, force: true });
