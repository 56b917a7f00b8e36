// End-to-end `neardup dedup` (JSONL -> flags) throughput and peak RSS, run as child processes of the built
// CLI (dist/cli/main.js) under `/usr/bin/time` (wall, user+sys CPU, max RSS) and `taskset`.
//   node --import tsx bench/dedup.ts [--runs N] [--big FILE] [--big-gb G] [--doubri-mb M] [--skip-big]
//                                    [--defaults-only] [--noisy FILE] [--dist DIR]
// --defaults-only: the defaults vs --fast vs the old defaults on the generated noisy corpus
// (bench/dedup-noisy-corpus.ts, default /tmp/neardup-bench/dedup-noisy-1g.jsonl), on 1 and 2 threads, through
// the CLI and through the library call on packed input (bench/dedup-engine.ts: the engine without JSONL
// parsing; the corpus is packed once, next to it), alternated, --runs times (medians). --dist DIR measures
// another build (its dist/ folder) with the same script, for A/B runs.
// The big corpus (default /tmp/neardup-bench/dedup-1g.jsonl) is generated from the SpamAssassin texts by
// bench/dedup-corpus.ts when missing; doubri-v1 on it runs on a prefix of --doubri-mb MB (doubri-v1 signs at
// ~6 MB per CPU-second, so the whole GB would take minutes). Prints markdown tables.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { corpusPath, machine, median } from './corpus';
import { generateCorpus } from './dedup-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const runs = Number(opt('runs', '3'));
const dir = path.join(os.tmpdir(), 'neardup-bench');
const big = opt('big', path.join(dir, 'dedup-1g.jsonl'));
const bigGb = Number(opt('big-gb', '1'));
const doubriMb = Number(opt('doubri-mb', '200'));
const DIST = path.resolve(opt('dist', path.join(__dirname, '..', 'dist')));
const MAIN = path.join(DIST, 'cli', 'main.js');

interface Run { wall: number; cpu: number; rssMb: number; mb: number; summary: Record<string, unknown> }

function once(file: string, threads: number, extra: string[]): Run {
  const flags = path.join(dir, 'flags.txt');
  const cpus = threads === 1 ? '0' : '0,1';
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', 'taskset', '-c', cpus, process.execPath, MAIN, 'dedup', file, '--flags', flags, ...extra], {
    env: { ...process.env, NEARDUP_THREADS: String(threads) }, encoding: 'utf8', maxBuffer: 1 << 26,
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`dedup failed: ${r.stderr}`);
  const summary = JSON.parse(r.stdout) as Record<string, unknown>;
  return { wall: +m[1], cpu: +m[2] + +m[3], rssMb: +m[4] / 1024, mb: (summary.input_bytes as number) / 1e6, summary };
}

function measure(label: string, file: string, threads: number, extra: string[], n: number): string {
  const rs = Array.from({ length: n }, () => once(file, threads, extra));
  const wall = median(rs.map((r) => r.wall)), cpu = median(rs.map((r) => r.cpu)), rss = Math.max(...rs.map((r) => r.rssMb));
  const s = rs[0].summary;
  const row = `| ${label} | ${threads} | ${(s.documents as number).toLocaleString('en')} | ${rs[0].mb.toFixed(0)} | ${wall.toFixed(2)} | ` +
    `${(rs[0].mb / wall).toFixed(1)} | ${cpu.toFixed(2)} | ${(rs[0].mb / cpu).toFixed(1)} | ${rss.toFixed(0)} | ${s.duplicates} | ${n} |`;
  console.log(row);
  return row;
}

function prefix(file: string, mb: number): string {
  const out = path.join(dir, `${path.basename(file)}.${mb}mb.jsonl`);
  if (fs.existsSync(out)) return out;
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(mb * 1e6);
  const n = fs.readSync(fd, buf, 0, buf.length, 0);
  fs.closeSync(fd);
  fs.writeFileSync(out, buf.subarray(0, buf.lastIndexOf(0x0a, n - 1) + 1));
  return out;
}

const SETTINGS: [string, string[]][] = [
  ['defaults (verified)', []],
  ['--fast', ['--fast']],
  ['old defaults (--keep-case --fast --clustering components)', ['--keep-case', '--fast', '--clustering', 'components']],
];

fs.mkdirSync(dir, { recursive: true });
if (argv.includes('--defaults-only')) {
  const noisy = opt('noisy', path.join(dir, 'dedup-noisy-1g.jsonl'));
  if (!fs.existsSync(noisy)) {
    console.error(`generating ${noisy} (${bigGb} GB)...`);
    (require('./dedup-noisy-corpus') as typeof import('./dedup-noisy-corpus')).generateNoisyCorpus(noisy, bigGb * 1e9);
  }
  const packed = path.join(dir, `${path.basename(noisy)}.packed`);
  if (!fs.existsSync(packed)) {
    console.error(`packing ${noisy} -> ${packed}...`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'dedup-engine.ts'), 'pack', noisy, packed], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('packing failed');
  }
  const engineOnce = (setting: string, threads: number): Run => {
    const cpus = threads === 1 ? '0' : '0,1';
    const r = spawnSync('taskset', ['-c', cpus, process.execPath, '--import', 'tsx', path.join(__dirname, 'dedup-engine.ts'), 'run', packed, setting, dir, DIST], {
      env: { ...process.env, NEARDUP_THREADS: String(threads) }, encoding: 'utf8', maxBuffer: 1 << 26,
    });
    if (r.status !== 0) throw new Error(`dedup-engine failed: ${r.stderr}`);
    const j = JSON.parse(r.stdout) as Record<string, number>;
    return {
      wall: j.wall, cpu: j.cpu, rssMb: j.peakRssMb - j.inputRssMb, mb: j.bytes / 1e6,
      summary: { documents: j.documents, duplicates: j.duplicates, spilled_bytes: j.spilledBytes },
    };
  };
  const ENGINE: [string, string][] = [['defaults (verified)', 'defaults'], ['--fast', 'fast'], ['old defaults', 'old']];
  const cliRows = new Map<string, Run[]>(), engineRows = new Map<string, Run[]>();
  const push = (m: Map<string, Run[]>, k: string, r: Run) => m.set(k, [...(m.get(k) ?? []), r]);
  for (let k = 0; k < runs; k++) {
    for (const threads of [1, 2]) {
      SETTINGS.forEach(([label, extra]) => push(cliRows, `${label}|${threads}`, once(noisy, threads, ['--tmp', dir, ...extra])));
      ENGINE.forEach(([label, setting]) => push(engineRows, `${label}|${threads}`, engineOnce(setting, threads)));
    }
  }
  console.log(`# neardup dedup defaults vs --fast vs old defaults: ${machine()}, build ${DIST}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
  const table = (title: string, rows: Map<string, Run[]>, rssNote: string) => {
    console.log(`\n${title}\n`);
    console.log(`| workload | threads | docs | MB | wall s | MB/s | CPU s | CPU-s per GB | MB per CPU-s | ${rssNote} | duplicates | spilled MB | runs |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const [key, rs] of rows) {
      const [label, threads] = key.split('|');
      const s = rs[0].summary;
      const wall = median(rs.map((r) => r.wall)), cpu = median(rs.map((r) => r.cpu)), rss = Math.max(...rs.map((r) => r.rssMb));
      console.log(`| ${label} | ${threads} | ${(s.documents as number).toLocaleString('en')} | ${rs[0].mb.toFixed(0)} | ${wall.toFixed(2)} | ` +
        `${(rs[0].mb / wall).toFixed(1)} | ${cpu.toFixed(2)} | ${(cpu / rs[0].mb * 1000).toFixed(2)} | ${(rs[0].mb / cpu).toFixed(1)} | ${rss.toFixed(0)} | ` +
        `${s.duplicates} | ${((s.spilled_bytes as number) / 1e6).toFixed(0)} | ${rs.length} |`);
    }
  };
  table('CLI (`neardup dedup FILE --flags F --tmp DIR`, JSONL parsed on the JS thread)', cliRows, 'peak RSS MB');
  table('Library call on packed input (`dedup(packed, options)`: the engine, no JSONL parsing)', engineRows, 'RSS MB above the loaded input');
  process.exit(0);
}
console.log(`# neardup dedup bench: ${machine()}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}\n`);
console.log('| workload | threads | docs | MB | wall s | MB/s | CPU s | MB/CPU-s | peak RSS MB | duplicates | runs |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const spam = corpusPath;
measure('spamassassin.jsonl.gz, fast', spam, 1, [], runs);
measure('spamassassin.jsonl.gz, fast', spam, 2, [], runs);
measure('spamassassin.jsonl.gz, fast --verify exact', spam, 2, ['--verify', 'exact'], runs);
measure('spamassassin.jsonl.gz, doubri-v1', spam, 1, ['--profile', 'doubri-v1'], 1);
measure('spamassassin.jsonl.gz, doubri-v1', spam, 2, ['--profile', 'doubri-v1'], 1);
if (!argv.includes('--skip-big')) {
  if (!fs.existsSync(big)) {
    console.error(`generating ${big} (${bigGb} GB)...`);
    generateCorpus(big, bigGb * 1e9);
  }
  const tmp = path.join(dir, 'spill');
  fs.mkdirSync(tmp, { recursive: true });
  measure(`${bigGb} GB generated, fast`, big, 1, [], 1);
  measure(`${bigGb} GB generated, fast`, big, 2, [], 1);
  measure(`${bigGb} GB generated, fast --memory 64M`, big, 2, ['--memory', '64M', '--tmp', tmp], 1);
  const small = prefix(big, doubriMb);
  measure(`${doubriMb} MB prefix, doubri-v1`, small, 2, ['--profile', 'doubri-v1'], 1);
  measure(`${doubriMb} MB prefix, doubri-v1 --memory 64M`, small, 2, ['--profile', 'doubri-v1', '--memory', '64M', '--tmp', tmp], 1);
}
