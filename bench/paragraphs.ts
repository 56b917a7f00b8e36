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
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, cli, 'onion', '-V', '--seen', seen, file], {
    env: { ...process.env, NEARDUP_THREADS: threads }, maxBuffer: 1 << 20, stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = r.stderr.toString().trim().split('\n');
  const [wall, user, sys, rss] = lines[lines.length - 1].split(' ').map(Number);
  const stats = JSON.parse(lines[lines.length - 2]);
  return { wall, cpu: user + sys, rssMB: rss / 1024, stats };
}

const rows: string[] = [];
for (const [name, file] of [['SpamAssassin vertical', f1], ['5x larger', f5]] as const) {
  const mb = fs.statSync(file).size / 1e6;
  for (const threads of ['1', '2']) {
    const res: Record<string, ReturnType<typeof run>> = {};
    for (const seen of ['exact', 'approx']) {
      const runs = [run(file, seen, threads), run(file, seen, threads), run(file, seen, threads)];
      runs.sort((a, b) => a.wall - b.wall);
      res[seen] = runs[1];
      const m = runs[1];
      rows.push(`| ${name} (${mb.toFixed(0)} MB, ${(m.stats.tokens / 1e6).toFixed(1)} M tokens) | ${seen} | ${threads} | ${m.wall.toFixed(2)} | ${m.cpu.toFixed(2)} | ${(mb / m.wall).toFixed(1)} | ${m.rssMB.toFixed(0)} | ${(m.stats.seenBytes / 1048576).toFixed(1)} | ${(m.stats.seenSize / 1e6).toFixed(2)} M | ${m.stats.duplicateParagraphs} |`);
      console.log(rows[rows.length - 1]);
    }
    console.log(`  ratio approx/exact: time ${(res.approx.wall / res.exact.wall).toFixed(2)}, seen-set memory ${(res.approx.stats.seenBytes / res.exact.stats.seenBytes).toFixed(3)}, peak RSS ${(res.approx.rssMB / res.exact.rssMB).toFixed(2)}`);
  }
}
fs.rmSync(dir, { recursive: true, force: true });
