// Repeated-substring removal benchmark (`neardup substrings`): a generated corpus of about 100 MB (the
// SpamAssassin mails once, then documents of words drawn from their vocabulary by frequency) with planted
// repeats (boilerplate passages of 100-600 bytes, each put into many documents at random places). Measures,
// for the CLI process (GNU time): wall and CPU seconds, peak RSS and RSS per input byte, on one core
// (taskset -c 0, NEARDUP_THREADS=1) and on two; and from the summary the suffix array's construction time
// (one core: libdivsufsort is single-threaded) and the scan's.
//   node --import tsx bench/substrings.ts [MB]        (default 100)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadTexts } from './corpus';

const root = path.join(__dirname, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const targetMB = Number(process.argv[2] ?? 100);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-substr-'));

let seed = 12345;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};

const spam = loadTexts();
// the vocabulary by frequency: a word drawn from the list of all tokens is drawn by its frequency
const tokens: string[] = [];
for (const t of spam.slice(0, 3000)) for (const w of t.split(/\s+/)) if (w && w.length < 20) tokens.push(w);
const words = (bytes: number) => {
  let s = '';
  while (s.length < bytes) s += tokens[Math.floor(rand() * tokens.length)] + (rand() < 0.08 ? '.\n' : ' ');
  return s;
};
const boilerplate = Array.from({ length: 500 }, () => words(100 + Math.floor(rand() * 500)));

// NEARDUP_BENCH_SUBSTR_CORPUS=FILE: the corpus is written there and kept (an existing one is used as it is)
const keep = process.env.NEARDUP_BENCH_SUBSTR_CORPUS;
const file = keep ?? path.join(dir, 'corpus.jsonl');
const reuse = keep !== undefined && fs.existsSync(keep);
const fd = fs.openSync(reuse ? '/dev/null' : file, 'w');
let bytes = 0, docs = 0, plantedBytes = 0;
const firstSeen = new Set<number>();
const put = (text: string) => {
  const line = JSON.stringify({ id: `doc-${docs}`, text }) + '\n';
  if (!reuse) fs.writeSync(fd, line);
  bytes += Buffer.byteLength(text);
  docs++;
};
for (const t of spam) put(t);
while (bytes < targetMB * 1e6) {
  let t = words(500 + Math.floor(rand() * 4000));
  if (rand() < 0.3) {
    const k = Math.floor(rand() * boilerplate.length);
    const at = Math.floor(rand() * t.length);
    t = t.slice(0, at) + boilerplate[k] + t.slice(at);
    if (firstSeen.has(k)) plantedBytes += Buffer.byteLength(boilerplate[k]);
    firstSeen.add(k);
  }
  put(t);
}
fs.closeSync(fd);
const fileMB = fs.statSync(file).size / 1e6;
console.log(`corpus: ${docs} documents, ${(bytes / 1e6).toFixed(1)} MB of text (${fileMB.toFixed(1)} MB of JSONL), planted repeats after their first copy: ${(plantedBytes / 1e6).toFixed(2)} MB`);

function run(cores: 1 | 2) {
  const kept = path.join(dir, 'kept.jsonl');
  const args = ['-f', '%e %U %S %M', ...(cores === 1 ? ['taskset', '-c', '0'] : []), process.execPath, cli, 'substrings', file, '--kept', kept, '--progress', 'none'];
  const r = spawnSync('/usr/bin/time', args, { env: { ...process.env, NEARDUP_THREADS: String(cores) }, maxBuffer: 1 << 24, stdio: ['ignore', 'ignore', 'pipe'] });
  const lines = r.stderr.toString().trim().split('\n');
  if (r.status !== 0) throw new Error(lines.join('\n'));
  const [wall, user, sys, rss] = lines[lines.length - 1].split(' ').map(Number);
  const summary = JSON.parse(lines[lines.length - 2]);
  fs.rmSync(kept, { force: true });
  return { wall, cpu: user + sys, rssMB: (rss * 1024) / 1e6, summary };
}

// the Node process alone (the CLI's --help): what RSS a run has before it holds any input
const base = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, cli, 'substrings', '--help'], { stdio: ['ignore', 'ignore', 'pipe'] });
const baseMB = (Number(base.stderr.toString().trim().split('\n').pop()) * 1024) / 1e6;
console.log(`Node + CLI baseline RSS: ${baseMB.toFixed(0)} MB`);
console.log('| cores | wall s | CPU s | peak RSS MB | RSS / input byte | (RSS - baseline) / input byte | SA build s (1 core) | build CPU s | build MB/s (CPU) | scan s | removed MB | spans | docs changed |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const cores of [1, 2, 1, 2] as const) {
  const m = run(cores);
  const s = m.summary;
  console.log(`| ${cores} | ${m.wall.toFixed(1)} | ${m.cpu.toFixed(1)} | ${m.rssMB.toFixed(0)} | ${(m.rssMB * 1e6 / bytes).toFixed(2)} | ${((m.rssMB - baseMB) * 1e6 / bytes).toFixed(2)} | ${s.build_seconds.toFixed(2)} | ${s.build_cpu_seconds.toFixed(2)} | ${((s.bytes_in + s.documents) / 1e6 / s.build_cpu_seconds).toFixed(1)} | ${s.scan_seconds.toFixed(2)} | ${(s.bytes_removed / 1e6).toFixed(2)} | ${s.spans} | ${s.documents_changed} |`);
}
console.log(`load: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
fs.rmSync(dir, { recursive: true, force: true });
