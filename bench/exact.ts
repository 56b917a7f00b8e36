// neardup exact against the anchors users write today, in one run, alternated, medians:
//   - the hashing loop alone (ExactDedup.add on packed batches already in memory, one thread, taskset -c 0)
//   - `neardup exact CORPUS --flags F` and `--kept F` (1 and 2 threads)
//   - `awk '!seen[$0]++'` (whole lines, not the text field), `LC_ALL=C sort -u` (whole lines, not in order)
//   - a Python script: json.loads each line, an md5 set of the text, the kept lines written (what pipelines do)
//   node --import tsx bench/exact.ts [--mb 1000] [--runs 3] [--dup 0.3]
// The corpus (generated here, cached in /tmp/neardup-bench): lines {"id", "text"} of ~2 KB of random words,
// a --dup fraction of them exact copies of an earlier line. Prints markdown tables.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { machine, median } from './corpus';
import { rng } from '../test/reference/random';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const MB = Number(opt('mb', '1000')), RUNS = Number(opt('runs', '3')), DUP = Number(opt('dup', '0.3'));
const dir = path.join(os.tmpdir(), 'neardup-bench');
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

function makeCorpus(file: string): void {
  const r = rng(11);
  const vocab = Array.from({ length: 5000 }, (_, i) => (i * 2654435761 >>> 0).toString(36).slice(0, 3 + (i % 7)));
  const fd = fs.openSync(`${file}.part`, 'w');
  const kept: string[] = [];  // a reservoir of earlier texts to copy
  let bytes = 0, i = 0;
  while (bytes < MB * 1e6) {
    let text: string;
    if (kept.length > 0 && r() < DUP) text = kept[Math.floor(r() * kept.length)];
    else {
      const w: string[] = [];
      for (let k = 0; k < 330; k++) w.push(vocab[Math.floor(r() * vocab.length)]);
      text = w.join(' ');
      if (kept.length < 20000) kept.push(text); else kept[Math.floor(r() * kept.length)] = text;
    }
    const line = JSON.stringify({ id: i++, text }) + '\n';
    fs.writeSync(fd, line);
    bytes += line.length;
  }
  fs.closeSync(fd);
  fs.renameSync(`${file}.part`, file);
}

interface Run { wall: number; cpu: number; rssMb: number }
function timed(cmd: string[], cpus: string, env: Record<string, string> = {}): Run {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', 'taskset', '-c', cpus, ...cmd], {
    env: { ...process.env, NEARDUP_PROGRESS: 'none', ...env }, encoding: 'utf8', maxBuffer: 1 << 26,
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${cmd.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  return { wall: +m[1], cpu: +m[2] + +m[3], rssMb: +m[4] / 1024 };
}

const PY = `
import sys, json, hashlib
seen = set()
with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'wb') as out:
    for line in f:
        h = hashlib.md5(json.loads(line)['text'].encode('utf-8')).digest()
        if h not in seen:
            seen.add(h)
            out.write(line)
`;

// the hashing loop alone: the corpus's texts packed once, then ExactDedup.add over them (one thread)
const HASH_CHILD = `
const fs = require('fs');
const { ExactDedup } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'exact', 'exact.js'))});
const { readDocuments } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'io', 'input.js'))});
(async () => {
  const batches = [];
  let bytes = 0;
  for await (const b of readDocuments([process.argv[1]], {})) { batches.push(b.packed); bytes += b.packed.offsets[b.count]; }
  const best = {};
  for (const norm of ['none', 'lowercase', 'words']) {
    let min = Infinity;
    for (let k = 0; k < 3; k++) {
      const d = new ExactDedup(norm === 'none' ? {} : norm === 'lowercase' ? { lowercase: true } : { unit: 'word', lowercase: true });
      const t0 = process.hrtime.bigint();
      for (const p of batches) await d.add(p);
      await d.finish();
      min = Math.min(min, Number(process.hrtime.bigint() - t0) / 1e9);
      d.close();
    }
    best[norm] = min;
  }
  process.stdout.write(JSON.stringify({ bytes, best }) + '\\n');
})();`;

function main(): void {
  fs.mkdirSync(dir, { recursive: true });
  const corpus = path.join(dir, `exact-${MB}mb-dup${DUP}.jsonl`);
  if (!fs.existsSync(corpus)) makeCorpus(corpus);
  const mb = fs.statSync(corpus).size / 1e6;
  const out = path.join(dir, 'exact-out');
  console.log(`# neardup exact and its anchors: ${machine()}, load average ${load()} at the start\n`);
  console.log(`Corpus: ${corpus} (${mb.toFixed(0)} MB, ~2 KB texts, ${DUP * 100}% exact copies of earlier lines). Medians of ${RUNS} runs, alternated; MB = JSONL MB.\n`);

  const h = spawnSync('taskset', ['-c', '0', process.execPath, '-e', HASH_CHILD, corpus], { env: { ...process.env, NEARDUP_THREADS: '1' }, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (h.status !== 0) throw new Error(h.stderr);
  const hr = JSON.parse(h.stdout) as { bytes: number; best: Record<string, number> };
  console.log('## The hashing loop alone (ExactDedup.add over packed texts in memory, 1 thread, taskset -c 0, best of 3)\n');
  console.log('| normalisation | text MB | seconds | GB/s per core |');
  console.log('|---|---:|---:|---:|');
  for (const [k, s] of Object.entries(hr.best)) console.log(`| ${k} | ${(hr.bytes / 1e6).toFixed(0)} | ${s.toFixed(3)} | ${(hr.bytes / 1e9 / s).toFixed(2)} |`);
  console.log(`\nload average after: ${load()}\n`);

  const jobs: { label: string; cpus: string; cmd: string[]; env?: Record<string, string> }[] = [
    { label: 'neardup exact --flags (1 thread)', cpus: '0', cmd: [process.execPath, MAIN, 'exact', corpus, '--flags', `${out}.flags`], env: { NEARDUP_THREADS: '1' } },
    { label: 'neardup exact --kept (1 thread)', cpus: '0', cmd: [process.execPath, MAIN, 'exact', corpus, '--kept', `${out}.jsonl`], env: { NEARDUP_THREADS: '1' } },
    { label: 'neardup exact --kept (2 threads)', cpus: '0,1', cmd: [process.execPath, MAIN, 'exact', corpus, '--kept', `${out}.jsonl`], env: { NEARDUP_THREADS: '2' } },
    { label: "awk '!seen[$0]++' (whole lines)", cpus: '0', cmd: ['sh', '-c', `awk '!seen[$0]++' '${corpus}' > '${out}.awk'`] },
    { label: 'LC_ALL=C sort -u (whole lines, sorted)', cpus: '0', cmd: ['sh', '-c', `LC_ALL=C sort -u -S 2G -T '${dir}' '${corpus}' > '${out}.sort'`] },
    { label: 'Python: json.loads + md5 set, kept lines written', cpus: '0', cmd: ['python3', '-c', PY, corpus, `${out}.py`] },
  ];
  const results = jobs.map(() => [] as Run[]);
  for (let k = 0; k < RUNS; k++) jobs.forEach((j, i) => results[i].push(timed(j.cmd, j.cpus, j.env)));
  // neardup's kept lines = Python's; the whole-line tools keep every line (the ids differ): said below
  const count = (f: string) => {  // lines, read in chunks (a file of over 512 MB is no string)
    const fd = fs.openSync(f, 'r'), buf = Buffer.allocUnsafe(1 << 24);
    let n = 0;
    for (let got; (got = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) for (let i = buf.indexOf(10); i >= 0 && i < got; i = buf.indexOf(10, i + 1)) n++;
    fs.closeSync(fd);
    return n;
  };
  const keptBy = { neardup: count(`${out}.jsonl`), python: count(`${out}.py`), awk: count(`${out}.awk`), sort: count(`${out}.sort`) };
  if (keptBy.neardup !== keptBy.python) throw new Error(`neardup kept ${keptBy.neardup} lines, Python ${keptBy.python}`);
  console.log('## Whole commands (wall, user+sys CPU, peak RSS; /usr/bin/time under taskset)\n');
  console.log('| command | cores | wall s | MB/s | CPU s | MB/CPU-s | peak RSS MB | vs Python (CPU) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  const py = median(results[5].map((r) => r.cpu));
  jobs.forEach((j, i) => {
    const w = median(results[i].map((r) => r.wall)), c = median(results[i].map((r) => r.cpu)), rss = Math.max(...results[i].map((r) => r.rssMb));
    console.log(`| ${j.label} | ${j.cpus.split(',').length} | ${w.toFixed(2)} | ${(mb / w).toFixed(0)} | ${c.toFixed(2)} | ${(mb / c).toFixed(0)} | ${rss.toFixed(0)} | ${(py / c).toFixed(1)}x |`);
  });
  console.log(`\nLines kept: neardup ${keptBy.neardup}, Python ${keptBy.python} (equal); awk ${keptBy.awk} and sort -u ${keptBy.sort} compare whole lines, ids included, so they keep every line: they are the speed anchors users start from, not the same job.`);
  console.log(`\nload average after: ${load()}`);
  for (const f of ['flags', 'jsonl', 'awk', 'sort', 'py']) fs.rmSync(`${out}.${f}`, { force: true });
}

main();
