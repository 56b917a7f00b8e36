// The package as shipped: the prebuild loads with PREBUILDS_ONLY=1 from a packed tarball, and the ESM and
// CommonJS entry points expose the same API.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';

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
  // Rebuilt when missing or older than the addon build (a stale prebuild would test yesterday's binary).
  const built = path.join(root, 'build', 'Release', 'neardup.node');
  const stale = !fs.existsSync(platformDir) || fs.readdirSync(platformDir).length === 0 ||
    (fs.existsSync(built) && fs.readdirSync(platformDir).some((f) => fs.statSync(path.join(platformDir, f)).mtimeMs < fs.statSync(built).mtimeMs));
  if (stale) {
    // What `npm run build:prebuilds` (prebuildify --napi --strip --tag-libc) leaves there, without compiling the
    // addon a second time: the same build's binary, stripped, under the name node-gyp-build looks for.
    assert.ok(fs.existsSync(built), 'build the addon first (npx node-gyp rebuild)');
    const libc = process.platform !== 'linux' ? '' : (process.env.LIBC ?? (fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc'));
    fs.rmSync(platformDir, { recursive: true, force: true });
    fs.mkdirSync(platformDir, { recursive: true });
    const dest = path.join(platformDir, `neardup${libc ? `.${libc}` : ''}.node`);
    const strip = spawnSync('strip', ['--strip-all', '-o', `${dest}.tmp`, built]);
    if (strip.status !== 0) fs.copyFileSync(built, `${dest}.tmp`);
    fs.renameSync(`${dest}.tmp`, dest);
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

test('the tarball ships the docs the help text points to, and not the tests, fuzzers or benchmarks', () => {
  ensureDist();
  const json = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts', '--silent'], { cwd: root, encoding: 'utf8' });
  const files: string[] = JSON.parse(json)[0].files.map((f: { path: string }) => f.path);
  const has = (f: string) => files.includes(f);
  // Every docs/*.md named anywhere in lib/ (help text, comments) and every file in docs/.
  const named = new Set<string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else for (const m of fs.readFileSync(p, 'utf8').matchAll(/docs\/[A-Za-z0-9_-]+\.md/g)) named.add(m[0]);
    }
  };
  walk(path.join(root, 'lib'));
  assert.ok(named.size > 0, 'lib/ names some docs');
  for (const f of fs.readdirSync(path.join(root, 'docs'))) if (f.endsWith('.md')) named.add(`docs/${f}`);
  for (const d of named) assert.ok(has(d), `the tarball ships ${d}`);
  for (const f of ['package.json', 'README.md', 'binding.gyp', 'native/sources.gypi', 'dist/index.js', 'dist/index.mjs',
    'dist/cli/main.js', 'native/core/io/os_posix.cc', 'native/core/io/os_win.cc', 'native/binding/addon.cc']) {
    assert.ok(has(f), `the tarball ships ${f}`);
  }
  // Every source the build compiles is shipped (a from-source install builds from the tarball alone).
  const gypi = JSON.parse(fs.readFileSync(path.join(root, 'native', 'sources.gypi'), 'utf8')).variables;
  for (const f of [...gypi.neardup_core_sources, ...gypi.neardup_zstd_sources, ...gypi.neardup_binding_sources]) assert.ok(has(f), `the tarball ships ${f}`);
  // zstd's sources are copied from node_modules/zstd-napi at build time (not in git); the tarball carries the
  // copy, its license and the script binding.gyp runs (which, without node_modules/zstd-napi, only checks it).
  for (const f of ['native/third_party/zstd/LICENSE', 'native/third_party/zstd/README.md', 'tools/zstd-sources.mjs']) {
    assert.ok(has(f), `the tarball ships ${f}`);
  }
  // The Python package (docs/python.md: pip install node_modules/neardup/python), without bytecode or build output.
  for (const f of ['python/pyproject.toml', 'python/README.md', 'python/_build/ndbackend.py', 'python/neardup/__init__.py',
    'python/neardup/formats.py', 'python/neardup/_cli.py']) assert.ok(has(f), `the tarball ships ${f}`);
  const pySources = fs.readdirSync(path.join(root, 'python', 'neardup')).filter((f) => f.endsWith('.py')).map((f) => `python/neardup/${f}`);
  assert.equal(files.filter((f) => f.startsWith('python/neardup/')).sort(), pySources.sort(), 'every module of the Python package');
  assert.equal(files.filter((f) => f.startsWith('python/') && !/\.(py|toml|md)$/.test(f)), [], 'no bytecode or build output under python/');
  const banned = /^(native\/(tests|fuzz|bench)\/|bench\/|test\/|tools\/|build\/|build-core\/|\.cache\/|\.ci\/|node_modules\/)/;
  const shipped = files.filter((f) => banned.test(f) && f !== 'tools/zstd-sources.mjs');
  assert.equal(shipped, [], 'no tests, fuzzers, benchmarks, tools or build output in the tarball');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  for (const k of ['repository', 'homepage', 'bugs']) assert.ok(pkg[k], `package.json has ${k}`);
  assert.not.ok('prebuild' in pkg.scripts, "no 'prebuild' script: npm would run it before every 'npm run build'");
  assert.ok(pkg.scripts.prepack, 'prepack builds the prebuilds the tarball carries');
});

test('every package npm ci installs accepts the oldest Node versions engines allows', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  // semver comes with node-gyp (a devDependency); resolved from there, not a dependency of its own.
  const req = createRequire(require.resolve('node-gyp/package.json'));
  const semver = req('semver');
  const range = new semver.Range(pkg.engines.node);
  const lowest: string[] = range.set.map((set: { semver: { version: string } }[]) => semver.minVersion(new semver.Range(set.map((c) => String(c)).join(' '))).version);
  assert.ok(lowest.includes('18.17.0'), `engines ${pkg.engines.node} starts at 18.17.0 (got ${lowest})`);
  const bad: string[] = [];
  // Optional packages (better-sqlite3 12 and what only it needs: Node 20+) may be skipped where they do not
  // install; only `neardup similar` needs them and says so (lib/chunks/chunks-db.ts, HACKING.md).
  for (const [where, p] of Object.entries<{ engines?: { node?: string }; optional?: boolean }>(lock.packages)) {
    const need = p.engines?.node;
    if (!where || !need || p.optional) continue;
    for (const v of lowest) if (!semver.satisfies(v, need)) bad.push(`${where} needs node ${need}, engines allows ${v}`);
  }
  assert.equal(bad, []);
  const gyp = lock.packages['node_modules/node-gyp'];
  assert.ok(gyp && gyp.engines, 'node-gyp is locked');
});

test.run();
