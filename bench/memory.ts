// Peak RSS and CPU of the commands, before/after side by side (bench/RESULTS-memory.md, docs/memory.md).
//
//   node --import tsx bench/memory.ts [--old DIR] [--rounds 3] [--big-tokens 130000000] [--skip-big | --only-big]
//
// DIR: an older checkout holding dist/ and build/Release/neardup.node (e.g. a worktree of main built with
// `npx tsc -p .` and `npx node-gyp rebuild`, or copies of both); its rows run alternately with this one's.
// Rows:
//   * `neardup onion -q` and `neardup paragraphs` on the SpamAssassin corpus as vertical text (41 MB,
//     test/support/vertical.ts), stdout to /dev/null; the outputs of both builds are compared byte for byte.
//   * the seen-sets on a generated vertical corpus of --big-tokens random tokens (2^20-word vocabulary,
//     paragraphs of 40-60 tokens, 10 paragraphs a document: nearly every 7-gram is new, so the exact set
//     holds about one key a token): `neardup paragraphs --seen exact` vs `--seen approx` (fp 0.01).
// Each run: /usr/bin/time -f '%e %U %S %M' (wall, user+sys CPU of the child, peak RSS); min of the rounds
// (one round for the big corpus).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSpam, toVertical } from '../test/support/vertical';

const argv = process.argv.slice(2);
const arg = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const OLD = arg('old');
const ROUNDS = Number(arg('rounds') ?? 3);
const BIG_TOKENS = Number(arg('big-tokens') ?? 130_000_000);
const SKIP_BIG = argv.includes('--skip-big');
const ONLY_BIG = argv.includes('--only-big');
const NEW = path.join(__dirname, '..');

interface Sample { wall: number; cpu: number; rssMB: number; seen?: string }

function timeCommand(cmd: string[], out: string): Sample {
  const fmt = path.join(os.tmpdir(), `neardup-memory-time-${process.pid}`);
  const fd = fs.openSync(out, 'w');
  const r = spawnSync('/usr/bin/time', ['-o', fmt, '-f', '%e %U %S %M', ...cmd], { stdio: ['ignore', fd, 'pipe'] });
  fs.closeSync(fd);
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [e, u, s, m] = fs.readFileSync(fmt, 'utf8').trim().split('\n').pop()!.split(/\s+/).map(Number);
  fs.rmSync(fmt, { force: true });
  // paragraphs' summary line (the last JSON line on stderr): the seen-set's size and bytes
  const json = String(r.stderr).split('\n').filter((l) => l.startsWith('{')).pop();
  const sum = json ? (JSON.parse(json) as { seen_size?: number; seen_bytes?: number }) : {};
  const seen = sum.seen_size !== undefined ? `${(sum.seen_size / 1e6).toFixed(1)} M keys in ${((sum.seen_bytes ?? 0) / 1048576).toFixed(0)} MB` : undefined;
  return { wall: e, cpu: u + s, rssMB: m / 1024, seen };
}

const min = (xs: Sample[], k: keyof Sample) => Math.min(...xs.map((x) => x[k]));
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Random vertical text: `tokens` tokens, written in 4 MiB pieces (xorshift32, fixed seed). */
function writeBigVertical(file: string, tokens: number): void {
  const fd = fs.openSync(file, 'w');
  const buf = Buffer.allocUnsafe(4 << 20);
  let at = 0;
  let x = 0x9e3779b9 | 0;
  const rand = () => {  // xorshift32
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return x >>> 0;
  };
  const put = (s: string) => {
    if (at + s.length + 1 > buf.length) {
      fs.writeSync(fd, buf, 0, at);
      at = 0;
    }
    at += buf.write(s, at, 'latin1');
    buf[at++] = 0x0a;
  };
  let done = 0, doc = 0;
  while (done < tokens) {
    put(`<doc id="d${doc++}">`);
    for (let p = 0; p < 10 && done < tokens; p++) {
      put('<p>');
      const len = 40 + (rand() % 21);
      for (let i = 0; i < len && done < tokens; i++, done++) put((rand() & 0xfffff).toString(36));
      put('</p>');
    }
    put('</doc>');
  }
  fs.writeSync(fd, buf, 0, at);
  fs.closeSync(fd);
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-memory-'));
  const builds = OLD ? [['old', OLD], ['new', NEW]] : [['new', NEW]];
  const rows: string[] = [];
  try {
    const vert = path.join(dir, 'spam.vert');
    fs.writeFileSync(vert, toVertical(loadSpam()));
    const jobs: { name: string; args: (file: string) => string[]; file: string; builds: string[][]; rounds?: number }[] = [
      { name: '`onion -q`, 41 MB vertical text', args: (f) => ['onion', '-q', f], file: vert, builds },
      { name: '`paragraphs` (exact), 41 MB vertical text', args: (f) => ['paragraphs', '--progress', 'none', f], file: vert, builds },
      { name: '`paragraphs --seen approx`, 41 MB vertical text', args: (f) => ['paragraphs', '--progress', 'none', '--seen', 'approx', f], file: vert, builds },
    ];
    if (ONLY_BIG) jobs.length = 0;
    if (!SKIP_BIG) {
      const big = path.join(dir, 'big.vert');
      writeBigVertical(big, BIG_TOKENS);
      const mb = (fs.statSync(big).size / 1048576).toFixed(0);
      for (const seen of ['exact', 'approx'])
        jobs.push({ name: `\`paragraphs --seen ${seen}\`, ${mb} MB random vertical text (${BIG_TOKENS / 1e6} M tokens)`, args: (f) => ['paragraphs', '--progress', 'none', '--seen', seen, f], file: big, builds, rounds: 1 });
    }
    for (const job of jobs) {
      const samples = new Map<string, Sample[]>(job.builds.map(([b]) => [b, []]));
      const outs = new Map<string, string>();
      for (let r = 0; r < (job.rounds ?? ROUNDS); r++)
        for (const [b, root] of job.builds) {
          const out = path.join(dir, `out-${b}`);
          outs.set(b, out);
          samples.get(b)!.push(timeCommand([process.execPath, path.join(root, 'dist', 'cli', 'main.js'), ...job.args(job.file)], out));
        }
      const same = job.builds.length === 2 ? (Buffer.compare(fs.readFileSync(outs.get('old')!), fs.readFileSync(outs.get('new')!)) === 0 ? 'identical' : 'DIFFERENT') : '–';
      const cell = (b: string) => { const s = samples.get(b)!; return `${min(s, 'rssMB').toFixed(0)} MB, ${min(s, 'cpu').toFixed(2)} CPU-s${s[0].seen ? ` (seen-set: ${s[0].seen})` : ''}`; };
      rows.push(`| ${job.name} | ${OLD ? cell('old') : '–'} | ${cell('new')} | ${same} | ${load()} |`);
      console.error(rows[rows.length - 1]);
    }
    console.log('| job | before (peak RSS, CPU) | after (peak RSS, CPU) | outputs | load (1/5/15 min) |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
