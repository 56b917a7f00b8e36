// Decontamination benchmark: `neardup decontaminate` against the plain Python script users write today (a set
// of 13-gram tuples, text lower-cased, string.punctuation deleted, str.split()), on a generated ~200 MB JSONL
// corpus and a 10,000-row benchmark (question + answer). Corpus MB/s per CPU second on one core
// (`taskset -c 0`, NEARDUP_THREADS=1) and wall MB/s on both cores, peak RSS (GNU time), and the contaminated
// counts of both (they must agree: the generated text has no symbol outside the ASCII letters and the
// punctuation both rules delete).
//   node --import tsx bench/decontaminate.ts [MB]          (default 200)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const root = path.join(__dirname, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const MB = Number(process.argv[2] ?? 200);
const dir = process.env.DECON_BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-decon-'));
fs.mkdirSync(dir, { recursive: true });

// mulberry32
let seed = 12345;
const rnd = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
// A Zipf-like vocabulary of 50,000 made-up words (common words repeat, as in real text).
const consonants = 'bcdfghjklmnprstvwz', vowels = 'aeiou';
const VOCAB = Array.from({ length: 50000 }, (_, i) => {
  let w = '';
  let x = i + 1;
  do {
    w += consonants[x % consonants.length] + vowels[Math.floor(x / 18) % 5];
    x = Math.floor(x / 90);
  } while (x > 0);
  return w;
});
const word = () => VOCAB[Math.floor(VOCAB.length * Math.pow(rnd(), 3))];
const PUNCT = [',', '.', '?', '!', ';', ':'];
const words = (k: number) => Array.from({ length: k }, word);
const render = (ws: string[]) => ws.map((w) => (rnd() < 0.1 ? w.charAt(0).toUpperCase() + w.slice(1) : w) + (rnd() < 0.08 ? PUNCT[Math.floor(rnd() * PUNCT.length)] : '')).join(' ');

const benchFile = path.join(dir, 'bench.jsonl');
const rows: string[][] = [];
{
  const out: string[] = [];
  for (let i = 0; i < 10000; i++) {
    const q = words(15 + Math.floor(rnd() * 45));
    rows.push(q);
    out.push(JSON.stringify({ question: render(q), answer: render(words(1 + Math.floor(rnd() * 5))) }));
  }
  fs.writeFileSync(benchFile, out.join('\n') + '\n');
}
const corpusFile = path.join(dir, 'corpus.jsonl');
let planted = 0, docs = 0;
{
  const fd = fs.openSync(corpusFile, 'w');
  let bytes = 0;
  let buf: string[] = [];
  while (bytes < MB * 1e6) {
    const ws = words(100 + Math.floor(rnd() * 900));
    if (rnd() < 0.01) {  // 1 % of documents carry a piece of a benchmark question
      const q = rows[Math.floor(rnd() * rows.length)];
      const len = Math.min(q.length, 13 + Math.floor(rnd() * 20));
      const at = Math.floor(rnd() * (q.length - len + 1));
      ws.splice(Math.floor(rnd() * ws.length), 0, ...q.slice(at, at + len));
      planted++;
    }
    const line = JSON.stringify({ id: `doc-${docs++}`, text: render(ws) }) + '\n';
    buf.push(line);
    bytes += Buffer.byteLength(line);
    if (buf.length >= 1000) {
      fs.writeSync(fd, buf.join(''));
      buf = [];
    }
  }
  fs.writeSync(fd, buf.join(''));
  fs.closeSync(fd);
}
const corpusMB = fs.statSync(corpusFile).size / 1e6;

const pyFile = path.join(dir, 'decon.py');
fs.writeFileSync(pyFile, `import json, string, sys
N = 13
table = str.maketrans('', '', string.punctuation)
def tokens(s):
    return s.lower().translate(table).split()
grams = set()
with open(sys.argv[1]) as f:
    for line in f:
        row = json.loads(line)
        for field in ('question', 'answer'):
            t = tokens(row[field])
            for i in range(len(t) - N + 1):
                grams.add(tuple(t[i:i + N]))
dirty = 0
with open(sys.argv[2]) as f, open(sys.argv[3], 'w') as out:
    for line in f:
        doc = json.loads(line)
        t = tokens(doc['text'])
        hits = sum(1 for i in range(len(t) - N + 1) if tuple(t[i:i + N]) in grams)
        if hits:
            dirty += 1
            out.write(json.dumps({'id': doc['id'], 'matched': hits, 'ngrams': len(t) - N + 1}) + '\\n')
print(dirty, file=sys.stderr)
`);

interface Run { wall: number; cpu: number; rssMB: number; last: string }
function timed(cmd: string[], env: Record<string, string> = {}, oneCore = true): Run {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', ...(oneCore ? ['taskset', '-c', '0'] : []), ...cmd], {
    env: { ...process.env, NEARDUP_PROGRESS: 'none', ...env }, maxBuffer: 1 << 26, stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = r.stderr.toString().trim().split('\n');
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed: ${lines.slice(-5).join('\n')}`);
  const [wall, user, sys, rss] = lines[lines.length - 1].split(' ').map(Number);
  return { wall, cpu: user + sys, rssMB: rss / 1024, last: lines[lines.length - 2] };
}
const neardup = (extra: string[], threads: number, oneCore: boolean) => timed([process.execPath, cli, 'decontaminate', '--against', benchFile,
  '--bench-field', 'question', '--bench-field', 'answer', '--report', path.join(dir, 'report.jsonl'), ...extra, corpusFile], { NEARDUP_THREADS: String(threads) }, oneCore);

console.log(`corpus ${corpusMB.toFixed(1)} MB, ${docs} documents, ${planted} planted; benchmark 10000 rows; load ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
// Every case 3 times, interleaved (the machine is shared and noisy); medians (CPU for one core, wall for two).
const RUNS = Number(process.env.DECON_BENCH_RUNS ?? 3);
const cases: [string, () => Run][] = [
  ['Python set of 13-gram tuples, 1 core', () => timed(['python3', pyFile, benchFile, corpusFile, path.join(dir, 'py-report.jsonl')])],
  ['neardup --min-tokens 13 (n-grams only, as the script), 1 core', () => neardup(['--min-tokens', '13'], 1, true)],
  ['neardup defaults (short rows and documents too), 1 core', () => neardup([], 1, true)],
  ['neardup --approx (fp 1e-8), 1 core', () => neardup(['--approx'], 1, true)],
  ['neardup --min-tokens 13, 2 cores', () => neardup(['--min-tokens', '13'], 2, false)],
  ['neardup defaults, 2 cores', () => neardup([], 2, false)],
];
const all: Run[][] = cases.map(() => []);
for (let i = 0; i < RUNS; i++) cases.forEach(([, f], k) => all[k].push(f()));
const med = (a: Run[], key: (r: Run) => number) => [...a].sort((x, y) => key(x) - key(y))[a.length >> 1];
console.log('| run | wall s | CPU s | MB per CPU s | MB per wall s | peak RSS MB | contaminated | index MB |');
console.log('|---|---|---|---|---|---|---|---|');
const medians: Run[] = [];
cases.forEach(([name], k) => {
  const twoCores = name.endsWith('2 cores');
  const r = med(all[k], (x) => (twoCores ? x.wall : x.cpu));
  medians.push(r);
  const py = k === 0;
  const s = py ? undefined : (JSON.parse(r.last) as Record<string, number>);
  const dirty = py ? Number(r.last) : s!.contaminated;
  console.log(`| ${name} | ${r.wall.toFixed(2)} | ${r.cpu.toFixed(2)} | ${(corpusMB / r.cpu).toFixed(1)} | ${(corpusMB / r.wall).toFixed(1)} | ${r.rssMB.toFixed(0)} | ${dirty} | ${py ? '' : (s!.index_bytes / 1e6).toFixed(1)} |`);
});
const [py, ng13, ngDef, ngApprox, ng13x2, ngDefx2] = medians;
console.log(`\nCPU ratio Python / neardup --min-tokens 13 (1 core): ${(py.cpu / ng13.cpu).toFixed(1)}x; defaults: ${(py.cpu / ngDef.cpu).toFixed(1)}x; --approx: ${(py.cpu / ngApprox.cpu).toFixed(1)}x`);
console.log(`wall ratio 1 core / 2 cores: --min-tokens 13 ${(ng13.wall / ng13x2.wall).toFixed(2)}x, defaults ${(ngDef.wall / ngDefx2.wall).toFixed(2)}x; wall Python / neardup 2 cores: ${(py.wall / ng13x2.wall).toFixed(1)}x`);
for (const r of [ng13, ngDef, ngApprox]) {
  const s = JSON.parse(r.last) as Record<string, unknown>;
  console.log(`${s.mode} min_tokens ${s.min_tokens}: index ${s.index_keys} keys, ${s.index_bytes} bytes, index ${s.index_seconds} s, probe ${s.probe_seconds} s (${s.mb_per_s} MB/s), lookups ${s.lookups}${s.fp_bound ? `, fp_bound ${s.fp_bound}, false_lookups_bound ${s.false_lookups_bound}` : ''}`);
}
console.log(`load after: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
if (!process.env.DECON_BENCH_DIR) fs.rmSync(dir, { recursive: true, force: true });
