// Posting store benchmark: `neardup dupi index` and `neardup dupi extract` on the whole SpamAssassin corpus
// (test/fixtures/corpora/spamassassin.jsonl.gz, one file per message, as dupi's measurements in
// test/fixtures/vectors/dupi/full/measure were made), and the bounded-memory build (--memory) on the same
// corpus. Each step runs the compiled CLI (dist/, `npx tsc -p .` first) under /usr/bin/time -v: user+sys CPU,
// max RSS, wall; medians of 3 runs. dupi itself cannot be built here (no Go toolchain on this machine), so
// its figures are the recorded ones (same corpus, same layout, 2-vCPU VM); the ratio column divides them.
// The extract output is checked against dupi's recorded extract -b and the SHA-256 of its extract.
// Then `neardup passages` (no peer has these outputs: absolute figures) on the corpus's JSONL: index,
// extract (passages merged, with their texts), pairs, and query with the first 100 messages.
//   node --import tsx bench/postings.ts [--runs 3] [--baseline DIR] [--dupi-only]
// --baseline DIR: another build (DIR/dist/cli/main.js, e.g. an older commit's) runs the dupi steps too,
// alternating with this one run by run, as `base` rows; --dupi-only skips the `neardup passages` steps.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const argValue = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const runs = Number(argValue('--runs') || 3) || 3;
const BASE = argValue('--baseline') === undefined ? undefined : path.resolve(argValue('--baseline')!, 'dist', 'cli', 'main.js');
const dupiOnly = process.argv.includes('--dupi-only');
for (const m of [MAIN, BASE]) if (m !== undefined && !fs.existsSync(m)) throw new Error(`${m} is missing: run npx tsc -p . first`);

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
// NODE_EXTRA_CA_CERTS makes every Node process parse that certificate file at start-up, before any of its code
// runs (0.06-0.09 s of CPU for a system bundle on the machines of these runs, whose environment sets it). It is not
// part of Node's or neardup's start-up as users have it, so the steps run without it; one row shows its cost.
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;

/**
 * `neardup ARGS` of the build whose CLI is `main`, or with main null, `node ARGS`. Standard output goes to a
 * file, as in dupi's recorded runs (a pipe costs the writer more system time than a file), then is read back.
 */
function timed(args: string[], main: string | null = MAIN, withEnv = env): Measure {
  const outFile = path.join(dir, 'stdout.out');
  const fd = fs.openSync(outFile, 'w');
  const t0 = process.hrtime.bigint();
  let r;
  try {
    r = spawnSync('/usr/bin/time', ['-v', process.execPath, ...(main === null ? [] : [main]), ...args], { cwd: dir, env: withEnv, stdio: ['ignore', fd, 'pipe'], maxBuffer: 1 << 30 });
  } finally {
    fs.closeSync(fd);
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const err = r.stderr.toString();
  if (r.status !== 0) throw new Error(`neardup ${args.join(' ')} failed: ${err}`);
  const num = (re: RegExp) => Number(re.exec(err)![1]);
  const user = num(/User time \(seconds\): ([\d.]+)/), sys = num(/System time \(seconds\): ([\d.]+)/);
  const stdout = fs.readFileSync(outFile);
  fs.rmSync(outFile);
  return { cpu: user + sys, user, sys, rssKiB: num(/Maximum resident set size \(kbytes\): (\d+)/), wall, stdout };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirSize = (d: string): number => fs.readdirSync(d, { withFileTypes: true })
  .reduce((s, e) => s + (e.isDirectory() ? dirSize(path.join(d, e.name)) : fs.statSync(path.join(d, e.name)).size), 0);

const nodeAlone: Measure[] = [], nodeCerts: Measure[] = [];
for (let i = 0; i < runs; i++) {
  nodeAlone.push(timed(['-e', '0'], null));
  if (process.env.NODE_EXTRA_CA_CERTS) nodeCerts.push(timed(['-e', '0'], null, process.env));
}
const index: Measure[] = [], indexMem: Measure[] = [], extract: Measure[] = [], version: Measure[] = [];
const base = { index: [] as Measure[], indexMem: [] as Measure[], extract: [] as Measure[], version: [] as Measure[] };
let size = 0, sizeMem = 0;
for (let i = 0; i < runs; i++) {
  // this build and the baseline alternate, step by step
  version.push(timed(['--version']));  // Node start-up and the CLI's own loading, in every figure below
  if (BASE) base.version.push(timed(['--version'], BASE));
  // the baseline first: the index left for the extracts is this build's
  for (const [m, ix, ixm] of [...(BASE ? [[BASE, base.index, base.indexMem]] : []), [MAIN, index, indexMem]] as [string, Measure[], Measure[]][]) {
    fs.rmSync(path.join(dir, 'idx'), { recursive: true, force: true });
    fs.rmSync(path.join(dir, 'idx-m'), { recursive: true, force: true });
    ix.push(timed(['dupi', '-r', 'idx', 'index', 'corpus'], m));
    ixm.push(timed(['dupi', '-r', 'idx-m', 'index', '-memory', '8M', 'corpus'], m));
  }
  size = dirSize(path.join(dir, 'idx'));
  sizeMem = dirSize(path.join(dir, 'idx-m'));
}
for (let i = 0; i < runs; i++) {
  extract.push(timed(['dupi', '-r', 'idx', 'extract']));
  if (BASE) base.extract.push(timed(['dupi', '-r', 'idx', 'extract'], BASE));
}

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
for (let i = 0; i < (dupiOnly ? 0 : runs); i++) {
  fs.rmSync(path.join(dir, 'pix'), { recursive: true, force: true });
  pIndex.push(timed(['passages', 'index', '-o', 'pix', '--id-field', 'id', jsonl]));
  pSize = dirSize(path.join(dir, 'pix', 'postings'));
}
for (let i = 0; i < (dupiOnly ? 0 : runs); i++) {
  pExtract.push(timed(['passages', 'extract', 'pix']));
  pPairs.push(timed(['passages', 'pairs', 'pix', '--min-shared', '2']));
  pQuery.push(timed(['passages', 'query', 'pix', '--id-field', 'id', 'q.jsonl']));
}
const nLines = (m: Measure) => m.stdout.toString().split('\n').filter(Boolean).length;

const row = (name: string, ms: Measure[], dupiCpu: number, dupiRss: number) => {
  const cpu = median(ms.map((m) => m.cpu)), rss = median(ms.map((m) => m.rssKiB));
  return `| ${name} | ${median(ms.map((m) => m.user)).toFixed(2)} / ${median(ms.map((m) => m.sys)).toFixed(2)} | ${cpu.toFixed(2)} | ` +
    `${(rss / 1024).toFixed(1)} MiB | ${median(ms.map((m) => m.wall)).toFixed(2)} s | ${dupiCpu ? (dupiCpu / cpu).toFixed(1) + 'x' : ''} | ` +
    `${dupiRss ? (rss / dupiRss).toFixed(2) : ''} |`;
};
console.log(`SpamAssassin: ${lines.length} files, ${inputBytes} bytes; ${runs} runs; ${os.cpus()[0].model}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}; Node ${process.version}`);
console.log(`build: ${MAIN}${BASE ? `; base: ${BASE} (alternating with it)` : ''}`);
console.log('| step | user / sys s | CPU s | max RSS | wall | dupi CPU / neardup CPU | neardup RSS / dupi RSS |');
console.log('|---|---|---|---|---|---|---|');
console.log(row('node -e 0 (Node alone)', nodeAlone, 0, 0));
if (nodeCerts.length) console.log(row(`node -e 0 with NODE_EXTRA_CA_CERTS=${process.env.NODE_EXTRA_CA_CERTS} (not in the other rows)`, nodeCerts, 0, 0));
console.log(row('neardup --version (start-up)', version, 0, 0));
if (BASE) console.log(row('base: neardup --version', base.version, 0, 0));
console.log(row('dupi index corpus', index, 2.91, 339548));
if (BASE) console.log(row('base: dupi index corpus', base.index, 2.91, 339548));
console.log(row('dupi index -memory 8M corpus', indexMem, 2.91, 339548));
if (BASE) console.log(row('base: dupi index -memory 8M corpus', base.indexMem, 2.91, 339548));
console.log(row('dupi extract (sigma 2)', extract, 1.39, 17000));
if (BASE) console.log(row('base: dupi extract (sigma 2)', base.extract, 1.39, 17000));
console.log(`index size: ${size} B = ${(100 * size / inputBytes).toFixed(2)} % of input (dupi: 11,740,512 B = 36.08 %); with -memory 8M: ${sizeMem} B`);
if (!dupiOnly) {
  console.log(row('passages index (JSONL gz)', pIndex, 0, 0));
  console.log(row('passages extract (sigma 2)', pExtract, 0, 0));
  console.log(row('passages pairs --min-shared 2', pPairs, 0, 0));
  console.log(row('passages query (100 messages)', pQuery, 0, 0));
  console.log(`passages: postings ${pSize} B = ${(100 * pSize / inputBytes).toFixed(2)} % of input (plus the texts); extract ${nLines(pExtract[0])} passages, ` +
    `pairs ${nLines(pPairs[0])} pairs, query ${pQuery[0].stdout.length} B of output`);
}
console.log(`extract -b equals dupi's: ${bSame}; extract SHA-256 equals dupi's: ${shaSame}; -memory 8M index gives the same extract -b: ${memSame}`);
fs.rmSync(dir, { recursive: true, force: true });
