// SimHash tables, neardup before/after a change (issue 29): the same job, each run its own process on one
// core, alternated (A B, B A, ...), medians. (Against seomoz's Judy tables: bench/peers.ts, rows table-*.)
//   node --import tsx bench/simhash-tables.ts [--before OLD/neardup.node] [--rounds 3] [--n 1000000] [--tables 6,3:5,3]
// --seomoz CMD: any other side printing the same JSON line (omit: neardup only).
// --before: an older neardup.node, run as a third side (before/after of a change in the same run).
// Each side runs `taskset -c 0 <job>`: bench/simhash-tables-job.cjs for neardup (this tree's
// build/Release/neardup.node), the driver for seomoz; both print one JSON line with the CPU seconds of each
// operation and the process's peak RSS. The load average is printed beside every round.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.join(__dirname, '..');
function arg(name: string, dflt?: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const seomoz = arg('--seomoz');
const before = arg('--before');
const rounds = Number(arg('--rounds', '3'));
const n = Number(arg('--n', '1000000'));
const tables = arg('--tables', '6,3:5,3')!.split(':').map((s) => s.split(',').map(Number) as [number, number]);
const after = path.join(root, 'build', 'Release', 'neardup.node');
const job = path.join(__dirname, 'simhash-tables-job.cjs');

type Result = { insert: number; findFirst: number; findAll: number; remove: number; hits: number; matches: number; maxRssKb: number };
const sides: { name: string; cmd: string[] }[] = [{ name: 'neardup', cmd: [process.execPath, job, after] }];
if (before) sides.push({ name: 'before', cmd: [process.execPath, job, path.resolve(before)] });
if (seomoz) sides.push({ name: 'seomoz', cmd: [path.resolve(seomoz)] });
const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

function run(cmd: string[], m: number, k: number): Result {
  const full = [...(hasTaskset ? ['taskset', '-c', '0'] : []), ...cmd, String(m), String(k), String(n)];
  const r = spawnSync(full[0], full.slice(1), { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${full.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ops = ['insert', 'findFirst', 'findAll', 'remove'] as const;

const lines: string[] = [];
const log = (s: string) => {
  console.log(s);
  lines.push(s);
};
log(`# ${new Date().toISOString()} ${os.cpus()[0]?.model ?? ''}, node ${process.version}, n=${n}, rounds=${rounds}, taskset=${hasTaskset}`);
for (const [m, k] of tables) {
  const res: Record<string, Result[]> = Object.fromEntries(sides.map((s) => [s.name, []]));
  const loads: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    loads.push(fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '));
    for (const s of order) {
      const r = run(s.cmd, m, k);
      res[s.name].push(r);
      log(`(${m},${k}) round ${round} ${s.name}: ${ops.map((o) => `${o} ${r[o].toFixed(3)}`).join(', ')} s; ` +
        `hits ${r.hits}, matches ${r.matches}, peak RSS ${(r.maxRssKb / 1024).toFixed(0)} MB`);
    }
  }
  const med = (name: string, key: keyof Result) => median(res[name].map((r) => r[key]));
  log(`\n(${m},${k}), load averages at each round: ${loads.join(' | ')}`);
  log(`| (m,k) | operation | ${sides.map((s) => s.name).join(' | ')}${seomoz ? ' | seomoz / neardup' : ''} |`);
  log(`|---|---|${sides.map(() => '---:').join('|')}|${seomoz ? '---:|' : ''}`);
  for (const o of ops) {
    const cells = sides.map((s) => med(s.name, o).toFixed(3));
    const ratio = seomoz ? ` | ${(med('seomoz', o) / med('neardup', o)).toFixed(1)}x` : '';
    log(`| (${m},${k}) | ${o} CPU-s | ${cells.join(' | ')}${ratio} |`);
  }
  const rss = sides.map((s) => (med(s.name, 'maxRssKb') / 1024).toFixed(0));
  log(`| (${m},${k}) | peak RSS MB (whole job) | ${rss.join(' | ')}${seomoz ? ` | ${(med('seomoz', 'maxRssKb') / med('neardup', 'maxRssKb')).toFixed(2)}x` : ''} |`);
  log(`| (${m},${k}) | hits / matches | ${sides.map((s) => `${med(s.name, 'hits')} / ${med(s.name, 'matches')}`).join(' | ')}${seomoz ? ' | |' : ''} |\n`);
}
fs.mkdirSync(path.join(__dirname, 'out'), { recursive: true });
fs.writeFileSync(path.join(__dirname, 'out', 'simhash-tables.txt'), lines.join('\n') + '\n');
