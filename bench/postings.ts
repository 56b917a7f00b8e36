// Posting store benchmark: `neardup dupi index` and `neardup dupi extract` on the whole SpamAssassin corpus
// (test/fixtures/corpora/spamassassin.jsonl.gz, one file per message, as dupi's measurements in
// test/fixtures/vectors/dupi/full/measure were made), and the bounded-memory build (--memory) on the same
// corpus. Each step runs the compiled CLI (dist/, `npx tsc -p .` first) under /usr/bin/time -v: user+sys CPU,
// max RSS, wall; medians of 3 runs. dupi itself cannot be built here (no Go toolchain on this machine), so
// its figures are the recorded ones (same corpus, same layout, 2-vCPU VM); the ratio column divides them.
// The extract output is checked against dupi's recorded extract -b and the SHA-256 of its extract.
// Then `neardup passages` (no peer has these outputs: absolute figures) on the corpus's JSONL: index,
// extract (passages merged, with their texts), pairs, and query with the first 100 messages.
//   node --import tsx bench/postings.ts [--runs 3]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3) || 3;
if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npx tsc -p . first`);

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-postings-')));
const lines = zlib.gunzipSync(fs.readFileSync(path.join(root, 'test/fixtures/corpora/spamassassin.jsonl.gz'))).toString('utf8').trim().split('\n');
fs.mkdirSync(path.join(dir, 'corpus'));
let inputBytes = 0;
for (const l of lines) {
  const e = JSON.parse(l) as { id: string; text: string };
  const data = Buffer.from(e.text, 'utf8');
  inputBytes += data.length;
  fs.writeFileSync(path.join(dir, 'corpus', e.id.replace(/\//g, '-') + '.txt'), data);
}

interface Measure { cpu: number; user: number; sys: number; rssKiB: number; wall: number; stdout: Buffer }
function timed(args: string[]): Measure {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, MAIN, ...args], { cwd: dir, maxBuffer: 1 << 30 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const err = r.stderr.toString();
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')} failed: ${err}`);
  const num = (re: RegExp) => Number(re.exec(err)![1]);
  const user = num(/User time \(seconds\): ([\d.]+)/), sys = num(/System time \(seconds\): ([\d.]+)/);
  return { cpu: user + sys, user, sys, rssKiB: num(/Maximum resident set size \(kbytes\): (\d+)/), wall, stdout: r.stdout };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirSize = (d: string): number => fs.readdirSync(d, { withFileTypes: true })
  .reduce((s, e) => s + (e.isDirectory() ? dirSize(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0);

const baseline = timed(['--version']);  // Node start-up, included in every figure below
const index: Measure[] = [], indexMem: Measure[] = [], extract: Measure[] = [];
let size = 0, sizeMem = 0;
for (let i = 0; i < runs; i++) {
  fs.rmSync(path.join(dir, 'idx'), { recursive: true, force: true });
  fs.rmSync(path.join(dir, 'idx-m'), { recursive: true, force: true });
  // alternate the two builds within a run
  index.push(timed(['dupi', '-r', 'idx', 'index', 'corpus']));
  indexMem.push(timed(['dupi', '-r', 'idx-m', 'index', '-memory', '8M', 'corpus']));
  size = dirSize(path.join(dir, 'idx'));
  sizeMem = dirSize(path.join(dir, 'idx-m'));
}
for (let i = 0; i < runs; i++) extract.push(timed(['dupi', '-r', 'idx', 'extract']));

// correctness on the whole corpus: dupi's recorded outputs
const V = path.join(root, 'test/fixtures/vectors/dupi/full/n4');
const b = timed(['dupi', '-r', 'idx', 'extract', '-b']).stdout.toString();
const bSame = b === fs.readFileSync(path.join(V, 'extract-b.txt'), 'utf8');
const full = extract[0].stdout.toString().split(dir + '/').join('');
const shaSame = createHash('sha256').update(full).digest('hex') === fs.readFileSync(path.join(V, 'extract.txt.sha256'), 'utf8').trim().split(/\s+/)[0];
const memSame = timed(['dupi', '-r', 'idx-m', 'extract', '-b']).stdout.toString() === b;

// neardup passages on the JSONL itself
const jsonl = path.join(root, 'test/fixtures/corpora/spamassassin.jsonl.gz');
fs.writeFileSync(path.join(dir, 'q.jsonl'), lines.slice(0, 100).join('\n') + '\n');
const pIndex: Measure[] = [], pExtract: Measure[] = [], pPairs: Measure[] = [], pQuery: Measure[] = [];
let pSize = 0;
for (let i = 0; i < runs; i++) {
  fs.rmSync(path.join(dir, 'pix'), { recursive: true, force: true });
  pIndex.push(timed(['passages', 'index', '-o', 'pix', '--id-field', 'id', jsonl]));
  pSize = dirSize(path.join(dir, 'pix', 'postings'));
}
for (let i = 0; i < runs; i++) {
  pExtract.push(timed(['passages', 'extract', 'pix']));
  pPairs.push(timed(['passages', 'pairs', 'pix', '--min-shared', '2']));
  pQuery.push(timed(['passages', 'query', 'pix', '--id-field', 'id', 'q.jsonl']));
}
const nLines = (m: Measure) => m.stdout.toString().split('\n').filter(Boolean).length;
const pOut = { extract: nLines(pExtract[0]), pairs: nLines(pPairs[0]), query: pQuery[0].stdout.length };

const row = (name: string, ms: Measure[], dupiCpu: number, dupiRss: number) => {
  const cpu = median(ms.map((m) => m.cpu)), rss = median(ms.map((m) => m.rssKiB));
  return `| ${name} | ${median(ms.map((m) => m.user)).toFixed(2)} / ${median(ms.map((m) => m.sys)).toFixed(2)} | ${cpu.toFixed(2)} | ` +
    `${(rss / 1024).toFixed(1)} MiB | ${median(ms.map((m) => m.wall)).toFixed(2)} s | ${dupiCpu ? (dupiCpu / cpu).toFixed(1) + 'x' : ''} | ` +
    `${dupiRss ? (rss / dupiRss).toFixed(2) : ''} |`;
};
console.log(`SpamAssassin: ${lines.length} files, ${inputBytes} bytes; ${runs} runs; ${os.cpus()[0].model}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}; Node ${process.version}`);
console.log(`node start-up alone: ${baseline.cpu.toFixed(2)} s CPU, ${(baseline.rssKiB / 1024).toFixed(1)} MiB`);
console.log('| step | user / sys s | CPU s | max RSS | wall | dupi CPU / neardup CPU | neardup RSS / dupi RSS |');
console.log('|---|---|---|---|---|---|---|');
console.log(row('dupi index corpus', index, 2.91, 339548));
console.log(row('dupi index -memory 8M corpus', indexMem, 2.91, 339548));
console.log(row('dupi extract (sigma 2)', extract, 1.39, 17000));
console.log(`index size: ${size} B = ${(100 * size / inputBytes).toFixed(2)} % of input (dupi: 11,740,512 B = 36.08 %); with -memory 8M: ${sizeMem} B`);
console.log(row('passages index (JSONL gz)', pIndex, 0, 0));
console.log(row('passages extract (sigma 2)', pExtract, 0, 0));
console.log(row('passages pairs --min-shared 2', pPairs, 0, 0));
console.log(row('passages query (100 messages)', pQuery, 0, 0));
console.log(`passages: postings ${pSize} B = ${(100 * pSize / inputBytes).toFixed(2)} % of input (plus the texts); extract ${pOut.extract} passages, pairs ${pOut.pairs} pairs, query ${pOut.query} B of output`);
console.log(`extract -b equals dupi's: ${bSame}; extract SHA-256 equals dupi's: ${shaSame}; -memory 8M index gives the same extract -b: ${memSame}`);
fs.rmSync(dir, { recursive: true, force: true });
