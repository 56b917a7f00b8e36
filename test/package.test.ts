// The package as shipped: the prebuild loads with PREBUILDS_ONLY=1 from a packed tarball, and the ESM and
// CommonJS entry points expose the same API.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const platformDir = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);

function ensureDist() {
  if (!fs.existsSync(path.join(root, 'dist', 'index.js'))) execFileSync(npm, ['run', 'build:ts'], { cwd: root, stdio: 'ignore' });
}

test('CommonJS and ESM entry points export the same names', () => {
  ensureDist();
  const script = `
    const cjs = require(${JSON.stringify(path.join(root, 'dist', 'index.js'))});
    import(${JSON.stringify('file://' + path.join(root, 'dist', 'index.mjs'))}).then((esm) => {
      const a = Object.keys(cjs).sort(), b = Object.keys(esm).filter((k) => k !== 'default').sort();
      const r = esm.shingleHashesSync(['hello'], { unit: 'word', n: 1, hash: 'murmur3_32' });
      console.log(JSON.stringify({ a, b, h: r.hashes[0], same: esm.NeardupError === cjs.NeardupError }));
    });`;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  assert.equal(out.a, out.b);
  assert.ok(out.a.includes('shingleHashes'));
  assert.is(out.h, 613153351);
  assert.ok(out.same, 'one NeardupError class for both module systems');
});

test('the prebuild loads as shipped (npm pack, PREBUILDS_ONLY=1)', () => {
  ensureDist();
  if (!fs.existsSync(platformDir) || fs.readdirSync(platformDir).length === 0) {
    const r = spawnSync(npm, ['run', 'prebuild'], { cwd: root, encoding: 'utf8' });
    assert.is(r.status, 0, `npm run prebuild failed:\n${r.stdout}\n${r.stderr}`);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pack-'));
  try {
    const name = execFileSync(npm, ['pack', '--ignore-scripts', '--silent', '--pack-destination', tmp], { cwd: root, encoding: 'utf8' })
      .trim().split('\n').pop()!;
    execFileSync('tar', ['-xzf', path.join(tmp, name), '-C', tmp]);
    const pkg = path.join(tmp, 'package');
    assert.ok(fs.existsSync(path.join(pkg, 'prebuilds')), 'the tarball ships prebuilds/');
    assert.not.ok(fs.existsSync(path.join(pkg, 'build')), 'the tarball does not ship build/');
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
    const script = `
      const where = require('node-gyp-build').resolve(${JSON.stringify(pkg)});
      const nd = require(${JSON.stringify(pkg)});
      const r = nd.shingleHashesSync(['hello'], { unit: 'word', n: 1, hash: 'murmur3_32' });
      console.log(JSON.stringify({ where, h: r.hashes[0], simd: nd.runtimeInfo().simd }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], {
      encoding: 'utf8', env: { ...process.env, PREBUILDS_ONLY: '1' },
    }));
    assert.ok(out.where.startsWith(path.join(pkg, 'prebuilds')), `loaded ${out.where}`);
    assert.is(out.h, 613153351);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test.run();
