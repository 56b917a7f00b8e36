// `neardup code` benchmark (docs/code.md): (1) tokenising speed per language family on one core: the
// project's own node_modules as real code (its .js files, .ts/.d.ts files, the .c/.h files of zstd's sources
// in zstd-napi, node-gyp's gyp .py files), codeTokens on the calling thread, timed natively; (2) a scale
// run: the .js files of node_modules copied COPIES times into one tree, each copy of each file with small
// edits (a line deleted, a line doubled, an identifier renamed, all at random places), then `neardup code`
// over the tree (GNU time: wall, CPU, peak RSS; files/s) with the defaults, and over the first ALL copies with
// --max-files 0 (no fingerprint dropped as boilerplate: every pair of copies reported); (3) when DOLOS_LIB
// names the folder of the Dolos library installed OUTSIDE the project (npm install @dodona/dolos-lib in a
// temporary folder; bench/code-dolos.mjs drives it), Dolos and neardup side by side on small sets of those files.
//   DOLOS_LIB=/tmp/x/node_modules/@dodona/dolos-lib node --import tsx bench/code.ts [COPIES] [ALL]
//   (defaults: 105 copies, about 130,000 files; ALL 10)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { type CodeLanguage } from '../lib/index';
import { native } from '../lib/native/addon';

const root = path.join(__dirname, '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const copies = Number(process.argv[2] ?? 105);
const allCopies = Number(process.argv[3] ?? 10);
const dolos = process.env.DOLOS_LIB;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bench-code-'));

let seed = 12345;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};

function files(dir: string, test: (name: string) => boolean, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) files(p, test, out);
    else if (e.isFile() && test(e.name)) out.push(p);
  }
  return out;
}

const nm = path.join(root, 'node_modules');
const sets: [CodeLanguage, string[]][] = [
  ['javascript', files(nm, (n) => n.endsWith('.js'))],
  ['typescript', files(nm, (n) => n.endsWith('.ts'))],
  ['c', files(nm, (n) => n.endsWith('.c') || n.endsWith('.h'))],
  ['python', files(nm, (n) => n.endsWith('.py'))],
];

console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log('\n## Tokenising, one core (the core lexer on the calling thread, timed natively, mean of 3 rounds)\n');
console.log('| language | files | MB | tokens | MB/s | tokens/s (M) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [lang, list] of sets) {
  let bytes = 0, tokens = 0, secs = 0;
  for (let round = 0; round < 3; round++) {
    for (const f of list) {
      const b = fs.readFileSync(f);
      const toks = native.codeTokens(b, lang);
      secs += toks.seconds;
      if (round === 0) {
        bytes += b.length;
        tokens += toks.kind.length;
      }
    }
  }
  secs /= 3;
  console.log(`| ${lang} | ${list.length} | ${(bytes / 1e6).toFixed(1)} | ${tokens} | ${(bytes / 1e6 / secs).toFixed(1)} | ${(tokens / 1e6 / secs).toFixed(1)} |`);
}

// the scale tree: copies of every .js file with small edits
const js = sets[0][1];
const sources = js.map((f) => fs.readFileSync(f, 'utf8'));
const tree = path.join(work, 'tree');
let made = 0, treeBytes = 0;
for (let c = 0; c < copies; c++) {
  const d = path.join(tree, `copy${String(c).padStart(3, '0')}`);
  for (let i = 0; i < js.length; i++) {
    const lines = sources[i].split('\n');
    if (c > 0 && lines.length > 3) {
      lines.splice(Math.floor(rand() * lines.length), 1);
      const at = Math.floor(rand() * lines.length);
      lines.splice(at, 0, lines[at]);
      const r = Math.floor(rand() * lines.length);
      lines[r] = lines[r].replace(/\b[a-z]\w*/, (w) => w + '_' + c);
    }
    const p = path.join(d, path.relative(nm, js[i]));
    fs.mkdirSync(path.dirname(p), { recursive: true });
    const text = lines.join('\n');
    fs.writeFileSync(p, text);
    made++;
    treeBytes += Buffer.byteLength(text);
  }
}
console.log(`\n## Scale: ${made} files (${copies} copies of ${js.length} .js files with small edits), ${(treeBytes / 1e6).toFixed(0)} MB\n`);

function timed(cmd: string, args: string[], cwd = root): { wall: number; cpu: number; rssMb: number; stdout: string; stderr: string; status: number | null } {
  const tf = path.join(work, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', '-o', tf, cmd, ...args], { cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  const [wall, user, sys, rss] = fs.readFileSync(tf, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { wall, cpu: user + sys, rssMb: rss / 1024, stdout: r.stdout, stderr: r.stderr, status: r.status };
}

console.log('| run | files | wall s | CPU s | files/s | peak RSS MB | pairs | summary |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
const copyDirs = (n: number) => Array.from({ length: Math.min(n, copies) }, (_, c) => path.join(tree, `copy${String(c).padStart(3, '0')}`));
const runs: [string, string[]][] = [
  [`all ${copies} copies, defaults (--max-files 10)`, [tree]],
  [`${Math.min(allCopies, copies)} copies, --max-files 0`, [...copyDirs(allCopies), '--max-files', '0']],
];
for (const [name, args] of runs) {
  const out = path.join(work, 'pairs.jsonl');
  const r = timed(process.execPath, [cli, 'code', ...args, '--out', out, '--progress', 'none']);
  if (r.status !== 0) throw new Error(r.stderr);
  const s = JSON.parse(r.stderr.trim().split('\n').pop()!);
  console.log(`| ${name} | ${s.files} | ${r.wall.toFixed(1)} | ${r.cpu.toFixed(1)} | ${Math.round(s.files / r.wall)} | ${r.rssMb.toFixed(0)} | ${s.pairs} | ` +
    `skipped ${s.skipped_binary + s.skipped_invalid_utf8 + s.skipped_too_large} (binary ${s.skipped_binary}, not UTF-8 ${s.skipped_invalid_utf8}), tokens ${s.tokens}, fingerprints ${s.fingerprints}, boilerplate hashes ${s.boilerplate_hashes}, candidate pairs ${s.candidate_pairs}, regions ${s.regions}, index ${s.index_seconds} s, match ${s.match_seconds} s, write ${s.write_seconds} s |`);
}

// side by side with Dolos on small sets: the first N files of copies 0 and 1 (so that every file has its copy)
if (dolos) {
  console.log('\n## Beside Dolos (same files, half of them the edited copy of the other half; neardup --max-files 0 so that nothing is dropped as boilerplate)\n');
  console.log('Pairs sharing any fingerprint: neardup\'s candidate pairs, Dolos\'s pairs of similarity > 0. Pairs reported: neardup\'s (a shared run of >= 39 tokens); Dolos reports every pair compared. Pairs >= 0.5: neardup min(shared_a, shared_b) >= 0.5, Dolos similarity >= 0.5.\n');
  console.log('| files | tool | wall s | CPU s | peak RSS MB | pairs sharing a fingerprint | pairs reported | pairs >= 0.5 |');
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const n of [100, 400, 1000, 2400]) {
    const pick = [...js.slice(0, n / 2).map((f) => path.join(tree, 'copy000', path.relative(nm, f))), ...js.slice(0, n / 2).map((f) => path.join(tree, 'copy001', path.relative(nm, f)))];
    const list = path.join(work, `list${n}.txt`);
    fs.writeFileSync(list, pick.join('\n') + '\n');
    const a = timed(process.execPath, [cli, 'code', '--files-from', list, '--max-files', '0', '--progress', 'none']);
    if (a.status !== 0) throw new Error(a.stderr);
    const ps = a.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { shared_a: number; shared_b: number });
    const as = JSON.parse(a.stderr.trim().split('\n').pop()!);
    console.log(`| ${n} | neardup code | ${a.wall.toFixed(2)} | ${a.cpu.toFixed(2)} | ${a.rssMb.toFixed(0)} | ${as.candidate_pairs} | ${ps.length} | ${ps.filter((p) => Math.min(p.shared_a, p.shared_b) >= 0.5).length} |`);
    const b = timed(process.execPath, ['--max-old-space-size=16384', path.join(__dirname, 'code-dolos.mjs'), dolos, list, 'javascript']);
    try {
      const o = JSON.parse(b.stdout.trim().split('\n').pop()!);
      console.log(`| ${n} | Dolos | ${b.wall.toFixed(2)} | ${b.cpu.toFixed(2)} | ${b.rssMb.toFixed(0)} | ${o.pairs_with_shared} | ${o.pairs} | ${o.pairs_half} |`);
    } catch {
      console.log(`| ${n} | Dolos | ${b.wall.toFixed(2)} | ${b.cpu.toFixed(2)} | ${b.rssMb.toFixed(0)} | exit ${b.status}: ${b.stderr.trim().split('\n').slice(-2).join(' ').slice(0, 160)} | | |`);
    }
  }
}
fs.rmSync(work, { recursive: true, force: true });
