// The input layer's cost: the reader alone (readDocuments: JSONL plain / gzip / zstd, Parquet) and the CLI end to
// end (`neardup minhash`, `neardup dedup --fast`, `neardup dedup`), 1 vs 2 threads, as child processes under
// `/usr/bin/time` (wall, user+sys CPU seconds, max RSS) and `taskset`; with --baseline DIR, the same commands
// of another build (e.g. a checkout of main, its dist/cli/main.js) alternated with this one.
//   node --import tsx bench/ingest.ts --corpus FILE [--runs N] [--reader-runs N] [--baseline DIR] [--parquet-mb M] [--skip-e2e]
//                                    [--skip-reader] [--verified]  (also the default, verified dedup end to end)
// Copies are made in /tmp/neardup-bench: the corpus in zstd (the zstd tool), and of a --parquet-mb prefix gzip
// (the gzip tool) and Parquet (snappy, hyparquet-writer). Prints markdown tables.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync, execFileSync } from 'node:child_process';
import { machine, median } from './corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def?: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };

/** The reader alone, in a plain node process (no tsx): every document of argv[1] into packed UTF-8; prints counts. */
const CHILD_READ = `
const { readDocuments } = require(${JSON.stringify(path.join(__dirname, '..', 'dist', 'io', 'input.js'))});
(async () => {
  let documents = 0, bytes = 0, text = 0;
  for await (const b of readDocuments([process.argv[1]], { onBadLine: 'skip' })) {
    documents += b.count; bytes += b.bytes; text += b.packed.offsets[b.count];
  }
  process.stdout.write(JSON.stringify({ documents, bytes, text }) + '\\n');
})().catch((e) => { console.error(e); process.exit(1); });`;

main();

interface Run { wall: number; cpu: number; rssMb: number; mainCpu?: number }

function timed(cmd: string[], threads: number): Run & { stdout: string; stderr: string } {
  const cpus = threads === 1 ? '0' : '0,1';
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', 'taskset', '-c', cpus, ...cmd], {
    env: { ...process.env, NEARDUP_THREADS: String(threads) }, encoding: 'utf8', maxBuffer: 1 << 28,
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`${cmd.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  const main = /MAINTHREAD ([\d.]+)/.exec(r.stderr);
  return { wall: +m[1], cpu: +m[2] + +m[3], rssMb: +m[4] / 1024, mainCpu: main ? +main[1] : undefined, stdout: r.stdout, stderr: r.stderr };
}

function row(label: string, threads: number, mb: number, rs: Run[], withMain = false): string {
  const wall = median(rs.map((r) => r.wall)), cpu = median(rs.map((r) => r.cpu)), rss = Math.max(...rs.map((r) => r.rssMb));
  const main = withMain ? ` ${median(rs.map((r) => r.mainCpu ?? NaN)).toFixed(2)} |` : '';
  return `| ${label} | ${threads} | ${mb.toFixed(0)} | ${wall.toFixed(2)} | ${(mb / wall).toFixed(1)} | ${cpu.toFixed(2)} | ${(mb / cpu).toFixed(1)} |${main} ${rss.toFixed(0)} | ${rs.length} |`;
}

function main(): void {
  const corpus = opt('corpus');
  if (!corpus) {
    console.error('usage: bench/ingest.ts --corpus FILE [--runs N] [--baseline DIR] [--parquet-mb M] [--skip-e2e]');
    process.exit(2);
  }
  const runs = Number(opt('runs', '3'));
  const readerRuns = Number(opt('reader-runs', String(runs)));
  const baseline = opt('baseline');
  const dir = path.join(os.tmpdir(), 'neardup-bench');
  fs.mkdirSync(dir, { recursive: true });
  const base = path.basename(corpus);
  const zst = path.join(dir, `${base}.zst`);
  if (!fs.existsSync(zst)) execFileSync('sh', ['-c', `zstd -3 -q -c '${corpus}' > '${zst}.part' && mv '${zst}.part' '${zst}'`]);
  // gzip and Parquet of a prefix (gzip -6 of a GB takes minutes on a loaded machine; the figures are per MB)
  const pqMb = Number(opt('parquet-mb', '200'));
  const pq = path.join(dir, `${base}.${pqMb}mb.parquet`);
  const pqJsonl = path.join(dir, `${base}.${pqMb}mb.jsonl`);
  const gz = `${pqJsonl}.gz`;
  if (!fs.existsSync(pq)) makeParquet(corpus, pqMb, pq, pqJsonl);
  if (!fs.existsSync(gz)) execFileSync('sh', ['-c', `gzip -6 -c '${pqJsonl}' > '${gz}.part' && mv '${gz}.part' '${gz}'`]);
  const mbOf = (f: string) => fs.statSync(f).size / 1e6;
  const plainMb = mbOf(corpus);
  const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

  console.log(`# neardup input layer: ${machine()}, load average ${load()} at the start\n`);
  console.log(`Corpus: ${corpus} (${plainMb.toFixed(0)} MB). MB = uncompressed JSONL MB (Parquet: the JSONL it was made from).\n`);
  console.log('## The reader alone (readDocuments, every document parsed into packed UTF-8; no engine)\n');
  console.log('| input | threads | MB | wall s | MB/s | CPU s | MB/CPU-s | peak RSS MB | runs |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const inputs: [string, string, number][] = [
    ['JSONL plain', corpus, plainMb], ['JSONL zstd -3', zst, plainMb],
    [`JSONL plain, ${pqMb} MB prefix`, pqJsonl, mbOf(pqJsonl)], [`JSONL gzip -6, same ${pqMb} MB`, gz, mbOf(pqJsonl)],
    [`Parquet snappy, same ${pqMb} MB`, pq, mbOf(pqJsonl)],
  ];
  for (const [label, file, mb] of argv.includes('--skip-reader') ? [] : inputs) {
    for (const threads of [1, 2]) {
      const rs: Run[] = [];
      for (let k = 0; k < readerRuns; k++) rs.push(timed([process.execPath, '-e', CHILD_READ, file], threads));
      console.log(row(label, threads, mb, rs));
    }
  }
  if (argv.includes('--skip-e2e')) return;

  console.log(`\n## End to end (CLI), ${baseline ? 'this build vs the baseline, alternated' : 'this build'}\n`);
  console.log('JS-thread CPU s: the CPU time of the main (JavaScript) thread alone (bench/main-thread-cpu.cjs); the rest ran on');
  console.log('the native and libuv pools. It bounds the speed on any number of cores: MB / JS-thread CPU s.\n');
  console.log('| command | build | threads | MB | wall s | MB/s | CPU s | MB/CPU-s | JS-thread CPU s | peak RSS MB | runs |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const builds: [string, string][] = [['this', path.join(__dirname, '..', 'dist', 'cli', 'main.js')]];
  if (baseline) builds.push(['baseline', path.join(baseline, 'dist', 'cli', 'main.js')]);
  const out = path.join(dir, 'ingest-out.bin');
  const commands: [string, string[]][] = [
    ['minhash -o FILE', ['minhash', corpus, '-o', out]],
    ['dedup --fast', ['dedup', corpus, '--fast', '--flags', out, '--tmp', dir]],
    ['dedup --fast, zstd input', ['dedup', zst, '--fast', '--flags', out, '--tmp', dir]],
  ];
  if (argv.includes('--verified')) commands.push(['dedup (defaults, verified)', ['dedup', corpus, '--flags', out, '--tmp', dir]]);
  for (const [label, args] of commands) {
    for (const threads of [1, 2]) {
      const rs = new Map<string, Run[]>(builds.map(([b]) => [b, []]));
      for (let k = 0; k < runs; k++) {
        for (const [b, main] of builds) {
          if (b === 'baseline' && label.includes('zstd')) continue;  // the old reader has no zstd
          rs.get(b)!.push(timed([process.execPath, '--require', path.join(__dirname, 'main-thread-cpu.cjs'), main, ...args], threads));
        }
      }
      for (const [b] of builds) if (rs.get(b)!.length) console.log(row(`${label} | ${b}`, threads, plainMb, rs.get(b)!, true));
    }
  }
  console.log(`\nLoad average at the end: ${load()}`);
}

/** A Parquet (snappy) file of the first `mb` MB of lines of a JSONL corpus (its text and id), and that prefix as JSONL. */
function makeParquet(corpus: string, mb: number, out: string, jsonlOut: string): void {
  const fd = fs.openSync(corpus, 'r');
  const buf = Buffer.alloc(mb * 1e6);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  fs.closeSync(fd);
  const text = buf.subarray(0, buf.lastIndexOf(0x0a, n - 1) + 1);
  fs.writeFileSync(jsonlOut, text);
  const script = `
    import * as fs from 'node:fs';
    import { parquetWriteBuffer } from 'hyparquet-writer';
    const lines = fs.readFileSync(${JSON.stringify(jsonlOut)}, 'utf8').trim().split('\\n').map((l) => JSON.parse(l));
    const ab = parquetWriteBuffer({ columnData: [
      { name: 'id', data: lines.map((o, i) => BigInt(o.id ?? i)), type: 'INT64' },
      { name: 'text', data: lines.map((o) => o.text), type: 'STRING' },
    ], rowGroupSize: 10000 });
    fs.writeFileSync(${JSON.stringify(out)}, new Uint8Array(ab));`;
  execFileSync(process.execPath, ['--max-old-space-size=16000', '--input-type=module', '-e', script], { cwd: path.join(__dirname, '..'), stdio: 'inherit' });
}
