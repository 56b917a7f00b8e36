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
r = run('ctest', ['--test-dir', dir, '-V'], { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1' } });
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
process.exit(failed === 0 && existsSync(dir) ? 0 : 1);
