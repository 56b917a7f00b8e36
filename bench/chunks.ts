// Chunk similarity (neardup similar): a full run and an incremental run of 1,000 changed documents on generated
// archives of essay-like documents (bench/chunks-corpus.ts), at several sizes. Each run is the compiled CLI
// under /usr/bin/time -v (wall, user + sys CPU, max RSS), with the peak anonymous memory (RssAnon, what
// --memory bounds: the index files are mapped, and their pages count in RSS but not here) sampled every
// 50 ms, and the core's own step times (NEARDUP_CHUNKS_TIMING). Prints a Markdown report.
//   npx tsc -p . && node --import tsx bench/chunks.ts [--sizes 100000,300000,1000000] [--data /work/data]
//     [--memory 1G] [--keep] [--k 100]
// Corpora are generated once into the data folder (about 4 KB per document) and kept; indexes are removed
// after each size unless --keep.
import { spawn, execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const sizes = arg('sizes', '100000,300000,1000000').split(',').map(Number);
const data = arg('data', '/work/data');
const memory = arg('memory', '1G');
const k = arg('k', '100');
const keep = process.argv.includes('--keep');
const root = path.join(__dirname, '..');
const cliPath = path.join(root, 'dist', 'cli', 'main.js');

interface Run {
  wall: number; user: number; sys: number; maxRss: number; anonPeak: number; load: [number, number];
  steps: string[]; stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const load0 = os.loadavg()[0];
    const child = spawn('/usr/bin/time', ['-v', 'nice', '-n', '19', process.execPath, cliPath, ...args], {
      env: { ...process.env, NEARDUP_CHUNKS_TIMING: '1', ...env }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    let anonPeak = 0;
    const sample = setInterval(() => {
      // the node process is the grandchild (time -> nice -> node; nice execs node): find it by its parent
      try {
        const kids = execSync(`pgrep -P ${child.pid}`, { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
        for (const pid of kids) {
          const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
          const m = /RssAnon:\s+(\d+) kB/.exec(st);
          if (m) anonPeak = Math.max(anonPeak, Number(m[1]) * 1024);
        }
      } catch { /* gone */ }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(sample);
      if (code !== 0) return reject(new Error(`neardup ${args.join(' ')} failed (${code}):\n${stderr}`));
      const num = (re: RegExp) => Number(re.exec(stderr)?.[1] ?? NaN);
      const wallM = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(stderr)!;
      const wall = Number(wallM[1] ?? 0) * 3600 + Number(wallM[2]) * 60 + Number(wallM[3]);
      resolve({
        wall, user: num(/User time \(seconds\): ([\d.]+)/), sys: num(/System time \(seconds\): ([\d.]+)/),
        maxRss: num(/Maximum resident set size \(kbytes\): (\d+)/) * 1024, anonPeak,
        load: [load0, os.loadavg()[0]], steps: stderr.split('\n').filter((l) => l.startsWith('chunks: ')), stderr,
      });
    });
    child.on('error', reject);
  });
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const s = (x: number) => `${x.toFixed(1)} s`;

function du(dir: string): number {
  let total = 0;
  for (const f of fs.readdirSync(dir)) total += fs.statSync(path.join(dir, f)).size;
  return total;
}

async function main(): Promise<void> {
  const commit = execSync('git rev-parse --short HEAD', { cwd: root, encoding: 'utf8' }).trim();
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`Run of ${new Date().toISOString().slice(0, 10)}, commit ${commit}; ${cpu}, ${os.cpus().length} CPUs; ` +
    `Node ${process.version}; --memory ${memory}, --k ${k}; load average at start ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')}\n`);
  const rows: string[] = [];
  for (const n of sizes) {
    const corpus = path.join(data, `chunks-${n}.jsonl`);
    const update = path.join(data, `chunks-${n}-update.jsonl`);
    if (!fs.existsSync(corpus) || !fs.existsSync(update)) {
      execSync(`nice -n 19 ${process.execPath} --import tsx ${path.join(__dirname, 'chunks-corpus.ts')} ${corpus} ${n} --update ${update} 1000`,
        { cwd: root, stdio: 'inherit' });
    }
    const dir = path.join(data, `chunks-${n}.idx`);
    fs.rmSync(dir, { recursive: true, force: true });
    // --bits 32: the recorded figures (bench/RESULTS-chunks.md) were taken with 32-bit ids, the default then
    const build = await run(['similar', 'build', corpus, '--index', dir, '--memory', memory, '--k', k, '--bits', '32']);
    const size = du(dir);
    const upd = await run(['similar', 'update', update, '--index', dir, '--memory', memory]);
    const summary = /generation 2: (.*)/.exec(upd.stderr)?.[1] ?? '';
    const corpusBytes = fs.statSync(corpus).size;
    console.log(`### ${n.toLocaleString('en-US')} documents (${gib(corpusBytes)} of JSONL)\n`);
    console.log(`full run: ${s(build.wall)} wall, ${s(build.user + build.sys)} CPU (${s(build.user)} user + ${s(build.sys)} sys), ` +
      `max RSS ${mib(build.maxRss)}, peak anonymous ${mib(build.anonPeak)}, load ${build.load[0].toFixed(1)} -> ${build.load[1].toFixed(1)}; index ${gib(size)}`);
    for (const l of build.steps) console.log(`    ${l}`);
    console.log(`update (1,000 changes: ${summary}): ${s(upd.wall)} wall, ${s(upd.user + upd.sys)} CPU, max RSS ${mib(upd.maxRss)}, ` +
      `peak anonymous ${mib(upd.anonPeak)}, load ${upd.load[0].toFixed(1)} -> ${upd.load[1].toFixed(1)}`);
    for (const l of upd.steps) console.log(`    ${l}`);
    console.log('');
    rows.push(`| ${n.toLocaleString('en-US')} | ${s(build.wall)} | ${s(build.user + build.sys)} | ${mib(build.anonPeak)} / ${mib(build.maxRss)} | ${gib(size)} | ` +
      `${s(upd.wall)} | ${s(upd.user + upd.sys)} | ${mib(upd.anonPeak)} | ${((build.load[0] + build.load[1]) / 2).toFixed(1)} |`);
    if (!keep) fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log('| documents | full run wall | full run CPU | peak anon / max RSS | index on disk | update wall | update CPU | update peak anon | load |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

main().catch((e) => { console.error(e); process.exit(1); });
