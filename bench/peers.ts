// neardup against the original tools, side by side in ONE run on ONE machine: the rows of issue 29's table.
// Prints the whole of bench/RESULTS-peers.md (Markdown) on stdout; progress on stderr.
//
//   node --import tsx bench/peers.ts --sources DIR [--rounds N] [--quick] [--only ROWS] > bench/RESULTS-peers.md
//
// Needs dist/ and the addon built (npx tsc -p tsconfig.json; npx node-gyp rebuild).
//
// The originals: each is looked for on PATH first, then where its own build puts it inside a checkout in
// DIR (below). This script builds none of them: get each project's public source, build it with that
// project's own build files (its Makefile, CMakeLists.txt, go build, or nothing for Python), then run this.
// A peer that is not found is named at the top of the output with the places looked at, and its rows are
// left out (never estimated or copied from elsewhere).
//   DIR/onion                 Onion 1.2 (git clone https://github.com/Suwarnan/onion; needs libjudy-dev):
//                             binary DIR/onion/src/onion
//   DIR/simhash-cpp           seomoz simhash-cpp, current master (https://github.com/seomoz/simhash-cpp):
//                             DIR/simhash-cpp/release/bin/simhash-find-all
//   DIR/simhash-cpp-table     the same repository at commit a9b21b0, the last with the Judy table
//                             (Simhash::Table), with its object DIR/simhash-cpp-table/src/simhash.o built; our
//                             driver bench/peers/seomoz-table.cc is compiled against that header and object by hand
//                             (and libJudy) as DIR/simhash-cpp-table/seomoz-table
//   DIR/doubri                doubri at tag v1.0 (https://github.com/swallow-llm/doubri):
//                             DIR/doubri/build/doubri-minhash or DIR/doubri/doubri-minhash
//   DIR/dupi                  go-air/dupi (https://github.com/go-air/dupi): DIR/dupi/dupi or DIR/dupi/bin/dupi
//   DIR/datasketch            datasketch 1.x (https://github.com/ekzhu/datasketch), used from the checkout
//                             (PYTHONPATH) with Debian's python3 and python3-numpy / python3-scipy
//                             (/usr/bin/python3 first, then python3 on PATH); or an installed datasketch
//
// Method: every row runs A (neardup) and B (the original) as separate child processes under /usr/bin/time,
// one warm-up of each (whose outputs are compared: "same output"), then `rounds` timed samples alternating
// A B, B A, A B, ... Figures are medians; the ratio is B / A of the median CPU seconds (user + sys of the
// child, all its threads; > 1 = neardup uses less CPU). Per-core rows run both under `taskset -c 0`.
// Where a row is one part of a job (the SimHash table operations, the MinHash library calls), the CPU time
// is the one the child measured around that part with its own process CPU clock (printed as JSON); peak
// RSS is always the whole child's. /proc/loadavg is read before and after each row.
//
// Rows (ids for --only, comma-separated, a prefix selects several: --only table,pairs):
//   onion            Onion 1.2 `onion -q` vs `neardup onion -q`, 41 MB vertical text (SpamAssassin
//                    as vertical text), whole machine, and onion-core: the same pinned to one core
//   seen             `neardup onion -q --seen approx` vs `neardup onion -q` (exact): the memory of the
//                    approximate seen-set (neardup against itself: no original)
//   table-6-3, table-5-3  seomoz's Judy tables (our driver) vs SimhashIndex: N random fingerprints
//                    (1M), insert all, find_first and find_all for N queries (half stored fingerprints with
//                    0-3 bits flipped, half random), remove all
//   pairs-random, pairs-planted  `simhash-find-all --blocks 5 --distance 3` vs `neardup simhash find-all
//                    --blocks 5 --distance 3`, 1M fingerprints: random, and with planted near-copies
//   dupi-index, dupi-extract  `dupi index` and `dupi extract` vs `neardup dupi ...` on the SpamAssassin
//                    messages as one file each
//   doubri           `doubri-minhash` vs `neardup doubri minhash` (doubri-v1 profile, 800 values)
//   datasketch-word, datasketch-char  datasketch MinHash (128 permutations, MinHash.bulk /
//                    update_batch) vs minhash(texts, { profile: 'datasketch' }), one thread
//   datasketch-lsh   the LSH job: word signatures, then MinHashLSH(threshold 0.8) insert + query of every
//                    document vs the same with LshIndex (datasketch profile); candidate pairs compared
// --quick: small inputs (100k fingerprints, 1,000 messages, ...) and 3 rounds, for trying the script out.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadSpam, toVertical } from '../test/support/vertical';
import { machine, median, sfc32 } from './corpus';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const rounds = Number(arg('rounds') ?? (quick ? 3 : 5));
const sources = path.resolve(arg('sources') ?? path.join(os.tmpdir(), 'peers-src'));
const only = arg('only')?.split(',').map((s) => s.trim()).filter(Boolean);
const wanted = (...ids: string[]) => !only || ids.some((id) => only.some((o) => id.startsWith(o)));
const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const NODE = process.execPath;
const PIN = ['taskset', '-c', '0'];
const N_FP = quick ? 100_000 : 1_000_000;

const log = (s: string) => process.stderr.write(`[peers] ${s}\n`);

// ---------------------------------------------------------------------------------------------------
// Finding the originals

interface Found { path?: string; looked: string[]; note?: string }
const missing: { peer: string; why: string }[] = [];
const found: { peer: string; where: string }[] = [];

function onPath(name: string): string | undefined {
  for (const d of (process.env.PATH ?? '').split(':')) {
    const p = path.join(d || '.', name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch { /* not here */ }
  }
  return undefined;
}

function findTool(peer: string, name: string, inSources: string[]): string | undefined {
  const p = onPath(name);
  const looked = [`${name} on PATH`, ...inSources.map((s) => path.join(sources, s))];
  const hit = p ?? inSources.map((s) => path.join(sources, s)).find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  });
  if (hit) found.push({ peer, where: hit });
  else missing.push({ peer, why: `not found (looked at: ${looked.join(', ')})` });
  return hit;
}

const buildDir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-peers-'));

/**
 * Our driver for seomoz's Judy table (bench/peers/seomoz-table.cc), built by hand against the checkout of
 * commit a9b21b0 (this script builds none of the originals' code): `seomoz-table` on PATH or in
 * DIR/simhash-cpp-table.
 */
function seomozTable(): string | undefined {
  return findTool('seomoz simhash-cpp Judy table (our driver bench/peers/seomoz-table.cc)', 'seomoz-table', ['simhash-cpp-table/seomoz-table']);
}

/** A python3 that imports numpy, scipy and datasketch (from DIR/datasketch if it is there). */
function datasketch(): { python: string; env: NodeJS.ProcessEnv; version: string } | undefined {
  const checkout = path.join(sources, 'datasketch');
  const env = { ...process.env };
  if (fs.existsSync(path.join(checkout, 'datasketch', '__init__.py'))) env.PYTHONPATH = [checkout, env.PYTHONPATH].filter(Boolean).join(':');
  const tried: string[] = [];
  for (const py of ['/usr/bin/python3', onPath('python3')].filter((x): x is string => !!x)) {
    const r = spawnSync(py, ['-c', 'import numpy, scipy, datasketch, importlib.metadata as m\ntry: v = m.version("datasketch")\nexcept Exception: v = "checkout"\nprint(datasketch.__file__, v, numpy.__version__); datasketch.MinHash.bulk'], { env, encoding: 'utf8' });
    if (r.status === 0) {
      const [file, v, np] = r.stdout.trim().split(' ');
      const version = `datasketch ${v} (${path.dirname(file)}), ${py}, numpy ${np}`;
      found.push({ peer: 'datasketch', where: version });
      return { python: py, env, version };
    }
    tried.push(`${py}: ${(r.stderr || String(r.error)).trim().split('\n').pop()}`);
  }
  missing.push({ peer: 'datasketch', why: `no python3 with numpy, scipy and datasketch (PYTHONPATH ${checkout}): ${tried.join('; ')}` });
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Running and timing

interface Sample { wall: number; cpu: number; rssMB: number; parts?: Record<string, number>; stdout?: string }

/** Runs cmd under /usr/bin/time: wall, user+sys CPU, peak RSS; stdout to a file, /dev/null or captured. */
function run(cmd: string[], o: { stdin?: string; stdout?: string | 'capture'; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Sample {
  const fmt = path.join(buildDir, `time-${process.pid}`);
  const cap = o.stdout === 'capture' ? path.join(buildDir, 'stdout') : undefined;
  const out = fs.openSync(cap ?? o.stdout ?? '/dev/null', 'w');
  const input = o.stdin ? fs.openSync(o.stdin, 'r') : 'ignore';
  const r = spawnSync('/usr/bin/time', ['-o', fmt, '-f', '%e %U %S %M', ...cmd], { stdio: [input, out, 'pipe'], env: o.env, cwd: o.cwd, maxBuffer: 1 << 28 });
  fs.closeSync(out);
  if (typeof input === 'number') fs.closeSync(input);
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status}): ${r.stderr?.toString().slice(-2000)}`);
  const [e, u, s, m] = fs.readFileSync(fmt, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  fs.rmSync(fmt, { force: true });
  const sample: Sample = { wall: e, cpu: u + s, rssMB: m / 1024 };
  if (cap) {
    sample.stdout = fs.readFileSync(cap, 'utf8');
    fs.rmSync(cap, { force: true });
  }
  return sample;
}

/** The JSON line a driver printed: its part timings become `parts`, and `cpu` if it gave one. */
function withParts(s: Sample, keys: string[]): Sample {
  const j = JSON.parse(s.stdout!.trim().split('\n').pop()!) as Record<string, number>;
  s.parts = {};
  for (const k of keys) s.parts[k] = Number(j[k]);
  if (j.cpu !== undefined) s.parts.cpu = Number(j.cpu);
  return s;
}

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

interface Row {
  id: string; job: string; a: string; b: string; pinned: boolean;
  as: Sample[]; bs: Sample[]; same: string; loadBefore: string; loadAfter: string;
  /** For multi-part rows: the part names to print as sub-rows (CPU from the child's own clock). */
  parts?: string[]; note?: string;
}
const rows: Row[] = [];

/**
 * One row: a warm-up of each (then `check` compares their outputs), then `rounds` alternating samples.
 * runA/runB get the round number (-1 for the warm-up) so they can keep the warm-up's outputs.
 */
function alternate(r: Omit<Row, 'as' | 'bs' | 'same' | 'loadBefore' | 'loadAfter'>, runA: (i: number) => Sample, runB: (i: number) => Sample, check: () => string): void {
  if (!wanted(r.id)) return;
  const loadBefore = loadavg();
  log(`${r.id}: ${r.job} (load ${loadBefore})`);
  runA(-1);
  runB(-1);
  const same = check();
  const as: Sample[] = [], bs: Sample[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      as.push(runA(i));
      bs.push(runB(i));
    } else {
      bs.push(runB(i));
      as.push(runA(i));
    }
  }
  rows.push({ ...r, as, bs, same, loadBefore, loadAfter: loadavg() });
  const cpu = (s: Sample) => s.parts?.cpu ?? s.cpu;
  log(`  A cpu ${median(as.map(cpu)).toFixed(3)} s, B cpu ${median(bs.map(cpu)).toFixed(3)} s, same output: ${same}`);
}

const sameFiles = (a: string, b: string) => (fs.readFileSync(a).equals(fs.readFileSync(b)) ? 'yes (byte-identical)' : 'NO');

// ---------------------------------------------------------------------------------------------------
// Inputs

const rand64 = (next: () => number) => (BigInt(next()) << 32n) | BigInt(next());
const flip = (next: () => number, v: bigint, bits: number) => {
  for (let f = 0; f < bits; f++) v ^= 1n << BigInt(next() % 64);
  return v;
};

/** Pairs of a find-all output as sorted "a b" lines (a < b), whatever the tool's format. */
function normalPairs(file: string): string[] {
  const out: string[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = line.match(/(\d+)\D+(\d+)/);
    if (!m) continue;
    const [x, y] = [BigInt(m[1]), BigInt(m[2])];
    out.push(x < y ? `${x} ${y}` : `${y} ${x}`);
  }
  return out.sort();
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npx tsc -p tsconfig.json (and npx node-gyp rebuild) first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-peers-'));
  const started = new Date();
  try {
    const onion = wanted('onion', 'onion-core') ? findTool('Onion 1.2', 'onion', ['onion/src/onion']) : undefined;
    const findAll = wanted('pairs-random', 'pairs-planted') ? findTool('seomoz simhash-find-all', 'simhash-find-all', ['simhash-cpp/release/bin/simhash-find-all']) : undefined;
    const table = wanted('table-6-3', 'table-5-3') ? seomozTable() : undefined;
    const doubri = wanted('doubri') ? findTool('doubri 1.0', 'doubri-minhash', ['doubri/build/doubri-minhash', 'doubri/doubri-minhash']) : undefined;
    const dupi = wanted('dupi-index', 'dupi-extract') ? findTool('dupi', 'dupi', ['dupi/dupi', 'dupi/bin/dupi']) : undefined;
    const ds = wanted('datasketch-word', 'datasketch-char', 'datasketch-lsh') ? datasketch() : undefined;

    const docs = loadSpam();

    // --- Onion, and the approximate seen-set
    if (onion || wanted('seen')) {
      const vert = path.join(dir, 'spam.vert');
      fs.writeFileSync(vert, toVertical(quick ? docs.slice(0, 1000) : docs));
      const mb = (fs.statSync(vert).size / 1e6).toFixed(0);
      const oa = path.join(dir, 'onion-a.out'), ob = path.join(dir, 'onion-b.out');
      if (onion) {
        for (const pin of [false, true]) {
          const pre = pin ? PIN : [];
          alternate(
            { id: pin ? 'onion-core' : 'onion', job: `paragraph dedup, ${mb} MB vertical text${pin ? ', one core' : ', whole machine'}`, pinned: pin,
              a: '`neardup onion -q`', b: '`onion -q` (Onion 1.2)' },
            (i) => run([...pre, NODE, CLI, 'onion', '-q', vert], { stdout: i < 0 ? oa : undefined }),
            (i) => run([...pre, onion, '-q', vert], { stdout: i < 0 ? ob : undefined }),
            () => sameFiles(oa, ob),
          );
        }
      }
      const sa = path.join(dir, 'seen-a.out'), sb = path.join(dir, 'seen-b.out');
      alternate(
        { id: 'seen', job: `approximate seen-set vs exact, ${mb} MB vertical text, one core`, pinned: true,
          a: '`neardup onion -q --seen approx`', b: '`neardup onion -q` (exact)',
          note: 'neardup against itself (no original has both); the figure of interest is the peak RSS' },
        (i) => run([...PIN, NODE, CLI, 'onion', '-q', '--seen', 'approx', vert], { stdout: i < 0 ? sa : undefined }),
        (i) => run([...PIN, NODE, CLI, 'onion', '-q', vert], { stdout: i < 0 ? sb : undefined }),
        () => {
          const a = fs.readFileSync(sa), b = fs.readFileSync(sb);
          if (a.equals(b)) return 'yes (byte-identical)';
          let d = 0;
          for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) d++;
          return `no (${d} of ${b.length} output bytes differ: approximate by design)`;
        },
      );
      fs.rmSync(vert, { force: true });
    }

    // --- SimHash tables
    if (table) {
      const next = sfc32(12345);
      const fps = new BigUint64Array(N_FP);
      for (let i = 0; i < N_FP; i++) fps[i] = rand64(next);
      const queries = new BigUint64Array(N_FP);
      for (let i = 0; i < N_FP; i++) queries[i] = i % 2 === 0 ? flip(next, fps[next() % N_FP], next() % 4) : rand64(next);
      const fpFile = path.join(dir, 'fps.u64'), qFile = path.join(dir, 'queries.u64');
      fs.writeFileSync(fpFile, Buffer.from(fps.buffer));
      fs.writeFileSync(qFile, Buffer.from(queries.buffer));
      const keys = ['insert', 'find_first', 'find_all', 'remove', 'hits', 'matches', 'tables'];
      for (const [m, k] of [[6, 3], [5, 3]]) {
        let ja: Sample | undefined, jb: Sample | undefined;
        alternate(
          { id: `table-${m}-${k}`, job: `SimHash tables (${m},${k}), ${N_FP.toLocaleString('en-US')} fingerprints and queries, one core`, pinned: true,
            a: '`SimhashIndex` (bench/peers/simhash-table.cjs)', b: 'seomoz Judy `Simhash::Table` (bench/peers/seomoz-table.cc)',
            parts: ['insert', 'find_first', 'find_all', 'remove'] },
          (i) => {
            const s = withParts(run([...PIN, NODE, path.join(__dirname, 'peers', 'simhash-table.cjs'), String(m), String(k), fpFile, qFile], { stdout: 'capture' }), keys);
            if (i < 0) ja = s;
            return s;
          },
          (i) => {
            const s = withParts(run([...PIN, table, String(m), String(k), fpFile, qFile], { stdout: 'capture' }), keys);
            if (i < 0) jb = s;
            return s;
          },
          () => {
            const a = JSON.parse(ja!.stdout!), b = JSON.parse(jb!.stdout!);
            const ok = a.hits === b.hits && a.matches === b.matches && a.checksum === b.checksum;
            return `${ok ? 'yes' : 'NO'} (${a.tables} / ${b.tables} tables; queries with a hit ${a.hits} / ${b.hits}; find_all matches ${a.matches} / ${b.matches}, checksum ${ok ? 'equal' : 'differs'})`;
          },
        );
      }
    }

    // --- all pairs, command vs command
    if (findAll) {
      for (const planted of [false, true]) {
        const next = sfc32(planted ? 777 : 4242);
        const vals: bigint[] = [];
        if (!planted) for (let i = 0; i < N_FP; i++) vals.push(rand64(next));
        else {
          // 70 % random values, 30 % near-copies of earlier ones (1-3 bits flipped), shuffled in.
          for (let i = 0; i < N_FP; i++) vals.push(i < 0.7 * N_FP || vals.length === 0 ? rand64(next) : flip(next, vals[next() % vals.length], 1 + (next() % 3)));
          for (let i = vals.length - 1; i > 0; i--) {
            const j = next() % (i + 1);
            [vals[i], vals[j]] = [vals[j], vals[i]];
          }
        }
        const input = path.join(dir, 'pairs.txt');
        fs.writeFileSync(input, vals.join('\n') + '\n');
        const pa = path.join(dir, 'pairs-a.out'), pb = path.join(dir, 'pairs-b.out');
        alternate(
          { id: planted ? 'pairs-planted' : 'pairs-random', pinned: true,
            job: `all pairs (5,3), ${N_FP.toLocaleString('en-US')} fingerprints${planted ? ', 30 % planted near-copies' : ', random'}, one core`,
            a: '`neardup simhash find-all --blocks 5 --distance 3`', b: '`simhash-find-all --blocks 5 --distance 3`' },
          (i) => run([...PIN, NODE, CLI, 'simhash', 'find-all', '--blocks', '5', '--distance', '3', input], { stdout: i < 0 ? pa : undefined }),
          (i) => run([...PIN, findAll, '--blocks', '5', '--distance', '3', '--input', input, '--output', '-'], { stdout: i < 0 ? pb : undefined }),
          () => {
            const a = normalPairs(pa), b = normalPairs(pb);
            const ok = a.length === b.length && a.every((x, i) => x === b[i]);
            return `${ok ? 'yes' : 'NO'} (${a.length} / ${b.length} pairs; formats differ: "a b" sorted vs "[a, b]" unordered)`;
          },
        );
      }
    }

    // --- dupi index + extract
    if (dupi) {
      const corpus = path.join(dir, 'dupi-corpus');
      fs.mkdirSync(corpus);
      const some = quick ? docs.slice(0, 1000) : docs;
      some.forEach((d, i) => fs.writeFileSync(path.join(corpus, `${String(i).padStart(5, '0')}.txt`), d.text));
      const bytes = some.reduce((s, d) => s + Buffer.byteLength(d.text), 0);
      const ra = path.join(dir, 'dupi-a'), rb = path.join(dir, 'dupi-b');
      const fresh = (r: string) => fs.rmSync(r, { recursive: true, force: true });
      const what = `${some.length.toLocaleString('en-US')} messages (${(bytes / 1e6).toFixed(1)} MB), one file each, one core`;
      alternate(
        { id: 'dupi-index', job: `dupi index, ${what}`, pinned: true, a: '`neardup dupi -r R index DIR`', b: '`dupi -r R index DIR`' },
        () => { fresh(ra); return run([...PIN, NODE, CLI, 'dupi', '-r', ra, 'index', corpus], { cwd: dir }); },
        () => { fresh(rb); return run([...PIN, dupi, '-r', rb, 'index', corpus], { cwd: dir }); },
        () => 'see dupi extract (which reads these indexes)',
      );
      if (!fs.existsSync(ra)) run([NODE, CLI, 'dupi', '-r', ra, 'index', corpus], { cwd: dir });
      if (!fs.existsSync(rb)) run([dupi, '-r', rb, 'index', corpus], { cwd: dir });
      const ea = path.join(dir, 'extract-a.out'), eb = path.join(dir, 'extract-b.out');
      alternate(
        { id: 'dupi-extract', job: `dupi extract, the index above, one core`, pinned: true, a: '`neardup dupi -r R extract`', b: '`dupi -r R extract`' },
        (i) => run([...PIN, NODE, CLI, 'dupi', '-r', ra, 'extract'], { stdout: i < 0 ? ea : undefined, cwd: dir }),
        (i) => run([...PIN, dupi, '-r', rb, 'extract'], { stdout: i < 0 ? eb : undefined, cwd: dir }),
        () => {
          const a = fs.readFileSync(ea, 'utf8'), b = fs.readFileSync(eb, 'utf8');
          if (a === b) return 'yes (byte-identical)';
          const sa = a.split('\n').sort().join('\n'), sb = b.split('\n').sort().join('\n');
          return sa === sb ? 'yes (same lines, in another order)' : `NO (${a.split('\n').length} / ${b.split('\n').length} lines)`;
        },
      );
      fresh(ra);
      fresh(rb);
      fresh(corpus);
    }

    // --- doubri minhash
    if (doubri) {
      const some = docs.slice(0, quick ? 300 : 1500);
      const jsonl = path.join(dir, 'doubri.jsonl');
      fs.writeFileSync(jsonl, some.map((d) => JSON.stringify(d)).join('\n') + '\n');
      const bytes = some.reduce((s, d) => s + Buffer.byteLength(d.text), 0);
      const ha = path.join(dir, 'a.hash'), hb = path.join(dir, 'b.hash');
      alternate(
        { id: 'doubri', job: `MinHash doubri-v1 (char 5-grams x 800), ${some.length.toLocaleString('en-US')} docs (${(bytes / 1e6).toFixed(1)} MB), one core`, pinned: true,
          a: '`neardup doubri minhash OUT < in.jsonl`', b: '`doubri-minhash OUT < in.jsonl` (doubri 1.0)' },
        () => run([...PIN, NODE, CLI, 'doubri', 'minhash', ha], { stdin: jsonl }),
        () => run([...PIN, doubri, hb], { stdin: jsonl }),
        () => sameFiles(ha, hb),
      );
    }

    // --- datasketch MinHash
    if (ds) {
      for (const unit of ['word', 'char', 'lsh'] as const) {
        const some = docs.slice(0, unit === 'word' ? (quick ? 300 : 3000) : unit === 'char' ? (quick ? 60 : 600) : (quick ? 300 : docs.length));
        const jsonl = path.join(dir, `ds-${unit}.jsonl`);
        fs.writeFileSync(jsonl, some.map((d) => JSON.stringify(d)).join('\n') + '\n');
        const bytes = some.reduce((s, d) => s + Buffer.byteLength(d.text), 0);
        const sa = path.join(dir, `ds-a-${unit}.u32`), sb = path.join(dir, `ds-b-${unit}.u32`);
        alternate(
          { id: `datasketch-${unit}`, pinned: true,
            job: unit === 'lsh'
              ? `datasketch LSH job (word 5-grams x 128, threshold 0.8: signatures, insert all, query all), ${some.length.toLocaleString('en-US')} docs (${(bytes / 1e6).toFixed(2)} MB), one core`
              : `MinHash ${unit} 5-grams x 128, ${some.length.toLocaleString('en-US')} docs (${(bytes / 1e6).toFixed(2)} MB), one core`,
            a: unit === 'lsh' ? "`minhash(texts, { profile: 'datasketch' })` + `LshIndex` insertSync / queryBatch"
              : `\`minhash(texts, { profile: 'datasketch'${unit === 'char' ? ", unit: 'char'" : ''} })\``,
            b: unit === 'lsh' ? '`MinHash.bulk` + `MinHashLSH` insert / query' : '`MinHash.bulk` (update_batch), 128 perm',
            parts: ['cpu'],
            note: unit === 'lsh'
              ? 'CPU of signatures + LSH insert + query (neardup: the calls; datasketch: the loop), from each child\'s own clock; start-up and file reading excluded'
              : 'CPU of the call / of the shingling and hashing loop, from each child\'s own clock; start-up and file reading excluded' },
          () => withParts(run([...PIN, NODE, path.join(__dirname, 'peers', 'minhash-datasketch.cjs'), unit, jsonl, sa], { stdout: 'capture' }), []),
          () => withParts(run([...PIN, ds.python, path.join(__dirname, 'peers', 'datasketch-minhash.py'), unit, jsonl, sb], { stdout: 'capture', env: ds.env }), []),
          () => {
            if (unit === 'lsh') {
              const pa = fs.readFileSync(sa, 'utf8'), pb = fs.readFileSync(sb, 'utf8');
              const n = (t: string) => t.split('\n').filter(Boolean).length;
              return `${pa === pb ? 'yes' : 'NO'} (${n(pa)} / ${n(pb)} candidate pairs)`;
            }
            const a = new Uint32Array(new Uint8Array(fs.readFileSync(sa)).buffer), b = new Uint32Array(new Uint8Array(fs.readFileSync(sb)).buffer);
            if (a.length !== b.length) return `NO (${a.length} / ${b.length} values)`;
            let diff = 0;
            for (let d = 0; d < some.length; d++) {
              for (let j = 0; j < 128; j++) if (a[d * 128 + j] !== b[d * 128 + j]) { diff++; break; }
            }
            return diff === 0 ? `yes (all ${some.length} signatures equal)` : `no (${diff} of ${some.length} signatures differ)`;
          },
        );
      }
    }

    print(started);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(buildDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Markdown

function print(started: Date): void {
  const o: string[] = [];
  const f3 = (x: number) => x.toFixed(3);
  const ratio = (b: number, a: number) => (a > 0 ? `${(b / a).toFixed(b / a >= 10 ? 0 : 1)}×` : '–');
  o.push('# neardup vs the original tools, side by side (one run, one machine)');
  o.push('');
  o.push(`Generated by \`node --import tsx bench/peers.ts --sources DIR${quick ? ' --quick' : ''} --rounds ${rounds}${only ? ` --only ${only.join(',')}` : ''}\` (the method and where`);
  o.push('each original comes from are in the script\'s header). Every row runs A (neardup) and B (the original) as');
  o.push('separate processes on the same input in the same run: one warm-up of each, whose outputs are compared');
  o.push(`("same output"), then ${rounds} samples alternating A B, B A, ... Figures are medians; **ratio = B / A of the`);
  o.push('median CPU seconds** (user + system of the child, all threads; > 1 = neardup uses less CPU). "One core" rows');
  o.push('run both sides under `taskset -c 0`. For the SimHash table operations and the MinHash library calls the');
  o.push('CPU time is the one each child measured around that part with its own process CPU clock (start-up and');
  o.push('input reading excluded); peak RSS is always the whole child process\'s (`/usr/bin/time`). The load average');
  o.push('(`/proc/loadavg`, 1/5/15 min) is read before and after each row: this is a shared 2-vCPU machine on which');
  o.push('other jobs run, so wall times are noisy and the CPU-second ratios are the figures to quote.');
  o.push('');
  o.push('Getting the originals (the script builds none of them and never estimates a row it cannot run): clone each');
  o.push('public repository into DIR and build it with its own build files — `DIR/onion` (github.com/Suwarnan/onion,');
  o.push('Onion 1.2, libjudy-dev), `DIR/simhash-cpp` (github.com/seomoz/simhash-cpp, master: `simhash-find-all`),');
  o.push('`DIR/simhash-cpp-table` (the same repository at commit a9b21b0, the last with the Judy `Simhash::Table`: its');
  o.push('`src/simhash.h` and `src/simhash.o` with our driver `bench/peers/seomoz-table.cc` compiled and linked against them by');
  o.push('hand as `DIR/simhash-cpp-table/seomoz-table`, with -lJudy), `DIR/doubri`');
  o.push('(github.com/swallow-llm/doubri, tag v1.0), `DIR/dupi` (github.com/go-air/dupi), `DIR/datasketch`');
  o.push('(github.com/ekzhu/datasketch, a 1.x version, run from the checkout with Debian\'s python3, python3-numpy and');
  o.push('python3-scipy). Tools already on PATH are used first.');
  o.push('');
  o.push(`## Run of ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC (${machine()})`);
  o.push('');
  o.push('Originals found:');
  for (const f of found) o.push(`- ${f.peer}: ${f.where}`);
  if (!found.length) o.push('- (none)');
  if (missing.length) {
    o.push('');
    o.push('Not run (their rows are missing below, not estimated):');
    for (const m of missing) o.push(`- **${m.peer}**: ${m.why}`);
  }
  o.push('');
  o.push('| job | A: neardup | B: original | A CPU s | B CPU s | **ratio B/A (CPU)** | A wall s | B wall s | A peak RSS MB | B peak RSS MB | same output | load before → after |');
  o.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|');
  const m = (xs: Sample[], g: (s: Sample) => number) => median(xs.map(g));
  for (const r of rows) {
    const load = `${r.loadBefore} → ${r.loadAfter}`;
    const rss = (xs: Sample[]) => m(xs, (s) => s.rssMB).toFixed(0);
    const parts = r.parts ?? [];
    if (parts.length === 1) {
      const k = parts[0];
      const ac = m(r.as, (s) => s.parts![k]), bc = m(r.bs, (s) => s.parts![k]);
      o.push(`| ${r.job} | ${r.a} | ${r.b} | ${f3(ac)} | ${f3(bc)} | **${ratio(bc, ac)}** | ${f3(m(r.as, (s) => s.wall))} | ${f3(m(r.bs, (s) => s.wall))} | ${rss(r.as)} | ${rss(r.bs)} | ${r.same} | ${load} |`);
      continue;
    }
    for (const k of parts) {
      const ac = m(r.as, (s) => s.parts![k]), bc = m(r.bs, (s) => s.parts![k]);
      o.push(`| ${r.job}: ${k} | ${r.a} | ${r.b} | ${f3(ac)} | ${f3(bc)} | **${ratio(bc, ac)}** | | | | | | |`);
    }
    const ac = m(r.as, (s) => s.cpu), bc = m(r.bs, (s) => s.cpu);
    o.push(`| ${r.job}${parts.length ? ': whole job' : ''} | ${r.a} | ${r.b} | ${f3(ac)} | ${f3(bc)} | **${ratio(bc, ac)}** | ${f3(m(r.as, (s) => s.wall))} | ${f3(m(r.bs, (s) => s.wall))} | ${rss(r.as)} | ${rss(r.bs)} | ${r.same} | ${load} |`);
  }
  const notes = rows.filter((r) => r.note);
  if (notes.length) {
    o.push('');
    for (const r of notes) o.push(`- ${r.job}: ${r.note}.`);
  }
  o.push('');
  o.push('All samples (wall s / CPU s / peak RSS MB, in run order per side):');
  for (const r of rows) {
    const s = (xs: Sample[]) => xs.map((x) => `${x.wall.toFixed(2)}/${x.cpu.toFixed(2)}/${x.rssMB.toFixed(0)}`).join(', ');
    o.push(`- ${r.job}: A ${s(r.as)}; B ${s(r.bs)}`);
  }
  o.push('');
  process.stdout.write(o.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
