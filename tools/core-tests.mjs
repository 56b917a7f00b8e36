// Builds native/core alone with CMake under AddressSanitizer + UndefinedBehaviorSanitizer and runs its C++
// tests (native/tests/*_test.cc). Prints the tests' own "N passed, N failed" lines. Exit status 1 on failure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'build-core', process.env.NEARDUP_CORE_BUILD ?? 'asan');
const run = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts });
  return r;
};
if (spawnSync('cmake', ['--version']).status !== 0) {
  console.error('core tests: cmake is not installed (apt-get install cmake)');
  process.exit(1);
}
const sanitize = process.env.NEARDUP_SANITIZE === '0' ? 'OFF' : 'ON';
let r = run('cmake', ['-S', 'native', '-B', dir, '-DCMAKE_BUILD_TYPE=RelWithDebInfo', `-DNEARDUP_SANITIZE=${sanitize}`]);
if (r.status !== 0) { process.stderr.write(r.stdout + r.stderr); process.exit(1); }
r = run('cmake', ['--build', dir, '-j', String(Math.max(1, (await import('node:os')).availableParallelism()))]);
if (r.status !== 0) { process.stderr.write(r.stdout + r.stderr); process.exit(1); }
r = run('ctest', ['--test-dir', dir, '-V', '-j', String(Math.max(1, (await import('node:os')).availableParallelism()))], { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1' } });
const out = r.stdout + r.stderr;
let passed = 0, failed = 0;
for (const m of out.matchAll(/([\w-]+): (\d+) passed, (\d+) failed$/gm)) {
  passed += Number(m[2]);
  failed += Number(m[3]);
}
if (r.status !== 0) {
  process.stderr.write(out);
  if (failed === 0) failed = 1;
}
console.log(`core (C++, sanitize=${sanitize}): ${passed} passed, ${failed} failed`);

// libFuzzer targets, when clang is installed: a short run of each (NEARDUP_FUZZ_RUNS executions, default
// 3000) from its committed seeds (native/fuzz/seeds/<target>), new inputs kept in a temporary folder.
// NEARDUP_SKIP_FUZZ=1 skips this. The long run is in HACKING.md.
let fuzzFailed = 0;
const clang = ['clang++-14', 'clang++'].find((c) => spawnSync(c, ['--version']).status === 0);
if (clang && process.env.NEARDUP_SKIP_FUZZ !== '1') {
  const fdir = path.join(root, 'build-core', 'fuzz');
  r = run('cmake', ['-S', 'native', '-B', fdir, '-DCMAKE_BUILD_TYPE=RelWithDebInfo', '-DNEARDUP_FUZZ=ON', '-DNEARDUP_SANITIZE=ON'],
    { env: { ...process.env, CXX: clang, CC: clang.replace('clang++', 'clang') } });  // CC: zstd is C
  if (r.status === 0) r = run('cmake', ['--build', fdir, '-j', String(Math.max(1, (await import('node:os')).availableParallelism()))]);
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    fuzzFailed = 1;
  } else {
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const runs = process.env.NEARDUP_FUZZ_RUNS ?? '3000';
    const targets = readdirSync(path.join(root, 'native', 'fuzz')).filter((f) => f.endsWith('_fuzz.cc')).map((f) => f.slice(0, -3));
    let fuzzPassed = 0;
    for (const t of targets) {
      const corpus = mkdtempSync(path.join((await import('node:os')).tmpdir(), `neardup-${t}-`));
      const seeds = path.join(root, 'native', 'fuzz', 'seeds', t);
      const args = [`-runs=${runs}`, '-seed=1', `-artifact_prefix=${corpus}/`, corpus, ...(existsSync(seeds) ? [seeds] : [])];
      const f = run(path.join(fdir, t), args, { timeout: 600_000 });
      const done = /^#(\d+)\s+DONE/m.exec(f.stderr);
      if (f.status === 0 && done) {
        fuzzPassed++;
      } else {
        fuzzFailed++;
        process.stderr.write(`fuzz target ${t} failed (status ${f.status}):\n${f.stderr.slice(-6000)}\n`);
      }
      rmSync(corpus, { recursive: true, force: true });
    }
    console.log(`fuzz (libFuzzer, ${clang}, ${runs} runs each): ${fuzzPassed} passed, ${fuzzFailed} failed`);
  }
} else if (!clang) {
  console.log('fuzz (libFuzzer): skipped, clang is not installed');
}
process.exit(failed === 0 && fuzzFailed === 0 && existsSync(dir) ? 0 : 1);
