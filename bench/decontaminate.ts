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
const results: string[] = [];
const row = (name: string, r: Run, contaminated: number) => {
  const line = `| ${name} | ${r.wall.toFixed(2)} | ${r.cpu.toFixed(2)} | ${(corpusMB / r.cpu).toFixed(1)} | ${(corpusMB / r.wall).toFixed(1)} | ${r.rssMB.toFixed(0)} | ${contaminated} |`;
  results.push(line);
  console.log(line);
};
const py = timed(['python3', pyFile, benchFile, corpusFile, path.join(dir, 'py-report.jsonl')]);
const pyDirty = Number(py.last);
row('Python set of 13-gram tuples (1 core)', py, pyDirty);
const cases: [string, string[], number, boolean][] = [
  ['neardup --min-tokens 13 (n-grams only, as the script), 1 core', ['--min-tokens', '13'], 1, true],
  ['neardup defaults (short rows/documents too), 1 core', [], 1, true],
  ['neardup --approx, 1 core', ['--approx'], 1, true],
  ['neardup --min-tokens 13, 2 cores', ['--min-tokens', '13'], 2, false],
  ['neardup defaults, 2 cores', [], 2, false],
];
const summaries: Record<string, unknown>[] = [];
for (const [name, extra, threads, oneCore] of cases) {
  const r = neardup(extra, threads, oneCore);
  const s = JSON.parse(r.last) as Record<string, unknown>;
  summaries.push(s);
  row(name, r, s.contaminated as number);
}
console.log(`\nratios: neardup 1 core (--min-tokens 13) vs Python: CPU ${(py.cpu / neardup(['--min-tokens', '13'], 1, true).cpu).toFixed(1)}x`);
console.log(`index keys (defaults): ${summaries[1].index_keys}, index bytes ${summaries[1].index_bytes}; approx fp_bound ${summaries[2].fp_bound}, index bytes ${summaries[2].index_bytes}`);
console.log(`load after: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
if (!process.env.DECON_BENCH_DIR) fs.rmSync(dir, { recursive: true, force: true });
