// Paragraph dedup benchmark: `neardup onion` (exact vs approx seen-set) on the SpamAssassin corpus as
// vertical text and on a 5x larger input (4 perturbed copies added, so most of their n-grams are new).
// Measures wall time, CPU time and peak RSS of the CLI process (GNU time), plus the seen-set size.
//   node --import tsx bench/paragraphs.ts
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadSpam, toVertical } from '../test/support/vertical';

const root = path.join(__dirname, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-par-'));
const docs = loadSpam();
const base = toVertical(docs);
const f1 = path.join(dir, 'spam.vert');
fs.writeFileSync(f1, base);
const copies = [base];
for (let c = 1; c <= 4; c++) {
  const mutated = docs.map((d) => ({ id: d.id, text: d.text.replace(/\S+/g, (w, at: number) => (at % 4 === c - 1 ? `${w}~${c}` : w)) }));
  copies.push(toVertical(mutated, c));
}
const f5 = path.join(dir, 'spam5.vert');
fs.writeFileSync(f5, copies.join(''));

function run(file: string, seen: string, threads: string) {
  // One core (taskset -c 0) for per-core figures on a shared machine.
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', 'taskset', '-c', '0', process.execPath, cli, 'onion', '-V', '--seen', seen, file], {
    env: { ...process.env, NEARDUP_THREADS: threads }, maxBuffer: 1 << 20, stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = r.stderr.toString().trim().split('\n');
  const [wall, user, sys, rss] = lines[lines.length - 1].split(' ').map(Number);
  const stats = JSON.parse(lines[lines.length - 2]);
  return { wall, cpu: user + sys, rssMB: rss / 1024, stats };
}

const rows: string[] = [];
const med = <T>(a: T[], key: (x: T) => number) => [...a].sort((x, y) => key(x) - key(y))[a.length >> 1];
for (const [name, file] of [['SpamAssassin vertical', f1], ['5x larger', f5]] as const) {
  const mb = fs.statSync(file).size / 1e6;
  const threads = '1';
  // Alternate exact and approx runs (the machine is shared and noisy); medians of CPU time.
  const all: Record<string, ReturnType<typeof run>[]> = { exact: [], approx: [] };
  for (let i = 0; i < 3; i++) for (const seen of ['exact', 'approx']) all[seen].push(run(file, seen, threads));
  const res: Record<string, ReturnType<typeof run>> = {};
  for (const seen of ['exact', 'approx']) {
    const m = { ...med(all[seen], (x) => x.cpu), wall: med(all[seen], (x) => x.wall).wall, rssMB: med(all[seen], (x) => x.rssMB).rssMB };
    res[seen] = m;
    rows.push(`| ${name} (${mb.toFixed(0)} MB, ${(m.stats.tokens / 1e6).toFixed(1)} M tokens) | ${seen} | ${m.wall.toFixed(2)} | ${m.cpu.toFixed(2)} | ${(mb / m.cpu).toFixed(1)} | ${m.rssMB.toFixed(0)} | ${(m.stats.seenBytes / 1048576).toFixed(2)} | ${(m.stats.seenSize / 1e6).toFixed(2)} M | ${m.stats.seenStages ?? ''} | ${m.stats.duplicateParagraphs} |`);
    console.log(rows[rows.length - 1]);
  }
  console.log(`  ratio approx/exact: CPU ${(res.approx.cpu / res.exact.cpu).toFixed(2)}, wall ${(res.approx.wall / res.exact.wall).toFixed(2)}, seen-set memory ${(res.approx.stats.seenBytes / res.exact.stats.seenBytes).toFixed(3)}, peak RSS ${(res.approx.rssMB / res.exact.rssMB).toFixed(2)}, dup paragraphs ${(res.approx.stats.duplicateParagraphs / res.exact.stats.duplicateParagraphs).toFixed(4)}`);
}
fs.rmSync(dir, { recursive: true, force: true });
