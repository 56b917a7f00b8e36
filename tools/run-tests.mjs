// `npm test`: the uvu suites (TypeScript, through tsx) against the built addon, then the core's C++ tests
// under ASan+UBSan (tools/core-tests.mjs; NEARDUP_SKIP_CORE_TESTS=1 skips them). Ends with one line
// "N passed, N failed" for the whole run.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const pattern = process.argv[2] ?? '\\.test\\.ts$';

// Progress lines depend on timing (off a terminal, auto writes a JSON line every 10 s): the suites run without
// them unless a test asks (test/batch-logs.test.ts sets --progress and NEARDUP_PROGRESS itself).
const env = { ...process.env, NEARDUP_PROGRESS: process.env.NEARDUP_PROGRESS ?? 'none' };

function tee(cmd, args) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
    child.on('close', (code) => resolve({ code, out }));
  });
}

const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0, failed = 0;
const uvu = await tee(process.execPath, ['--expose-gc', '--import', 'tsx', 'node_modules/uvu/bin.js', 'test', pattern, '-i', 'fixtures', '-i', 'reference', '-i', 'helpers', '-i', 'support']);
const u = strip(uvu.out);
const total = Number(/Total:\s+(\d+)/.exec(u)?.[1] ?? 0);
const ok = Number(/Passed:\s+(\d+)/.exec(u)?.[1] ?? 0);
const skipped = Number(/Skipped:\s+(\d+)/.exec(u)?.[1] ?? 0);
passed += ok;
failed += total - ok - skipped;
if (uvu.code !== 0 && failed === 0) failed = 1;
if (total === 0) { console.error('uvu ran no test'); failed += 1; }

if (process.env.NEARDUP_SKIP_CORE_TESTS !== '1') {
  const core = await tee(process.execPath, [path.join('tools', 'core-tests.mjs')]);
  const m = /: (\d+) passed, (\d+) failed$/m.exec(core.out);
  passed += Number(m?.[1] ?? 0);
  failed += Number(m?.[2] ?? 0);
  if (core.code !== 0 && !m) failed += 1;
}
console.log(`\ntests: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
