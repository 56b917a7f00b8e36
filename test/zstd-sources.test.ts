// tools/zstd-sources.mjs: zstd's C sources copied from node_modules/zstd-napi into native/third_party/zstd (not
// in git), run by every build. Each case runs the script in a scratch copy of the few files it reads.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const root = path.join(__dirname, '..');
const napi = path.join(root, 'node_modules', 'zstd-napi');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-zstd-sources-'));
let n = 0;

// A scratch project: package.json, native/sources.gypi, the script, and node_modules/zstd-napi (a link to the
// installed one, or `pkg`); no copied sources yet.
function project(pkg: string | null = napi) {
  const dir = path.join(tmp, `p${n++}`);
  fs.mkdirSync(path.join(dir, 'native'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'tools'));
  fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  fs.copyFileSync(path.join(root, 'native', 'sources.gypi'), path.join(dir, 'native', 'sources.gypi'));
  fs.copyFileSync(path.join(root, 'tools', 'zstd-sources.mjs'), path.join(dir, 'tools', 'zstd-sources.mjs'));
  if (pkg) {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(pkg, path.join(dir, 'node_modules', 'zstd-napi'), 'dir');
  }
  return dir;
}
const run = (dir: string) => spawnSync(process.execPath, [path.join(dir, 'tools', 'zstd-sources.mjs')], { encoding: 'utf8' });
const copy = (dir: string) => path.join(dir, 'native', 'third_party', 'zstd');
function listing(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listing(dir, r));
    else out.push(r);
  }
  return out.sort();
}

test('copies the compiled .c files, their headers and LICENSE from zstd-napi, unmodified; nothing on stdout', () => {
  const dir = project();
  const r = run(dir);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '', 'binding.gyp reads stdout as a list of sources: it must stay empty');
  assert.match(r.stderr, /zstd 1\.5\.7 from zstd-napi 0\.0\.13/);
  const files = listing(copy(dir));
  const gypi = JSON.parse(fs.readFileSync(path.join(root, 'native', 'sources.gypi'), 'utf8')).variables.neardup_zstd_sources;
  for (const f of gypi) assert.ok(files.includes(f.slice('native/third_party/zstd/'.length)), f);
  for (const f of ['LICENSE', 'README.md', 'lib/zstd.h', 'lib/zstd_errors.h', 'lib/common/mem.h', 'lib/compress/zstd_cwksp.h']) {
    assert.ok(files.includes(f), f);
  }
  // Not compiled: the multi-threaded compressor, the thread pool, the assembly decoder, the dictionary builder.
  for (const f of ['lib/compress/zstdmt_compress.c', 'lib/common/pool.c', 'lib/common/threading.c',
    'lib/decompress/huf_decompress_amd64.S', 'lib/zdict.h']) assert.not.ok(files.includes(f), f);
  for (const f of files.filter((f) => f !== 'README.md')) {
    assert.ok(fs.readFileSync(path.join(copy(dir), f)).equals(fs.readFileSync(path.join(napi, 'deps', 'zstd', f))), `${f} is upstream's`);
  }
  // The build's own copy is the same set of files.
  assert.equal(listing(path.join(root, 'native', 'third_party', 'zstd')), files);
});

test('a second run changes nothing; a stray or edited file is put right', () => {
  const dir = project();
  assert.is(run(dir).status, 0);
  const again = run(dir);
  assert.is(again.status, 0);
  assert.is(again.stderr, '', 'no-op when the copy is current');
  fs.writeFileSync(path.join(copy(dir), 'lib', 'stray.c'), 'int x;\n');
  fs.appendFileSync(path.join(copy(dir), 'lib', 'zstd.h'), '/* edited */\n');
  const fixed = run(dir);
  assert.is(fixed.status, 0, fixed.stderr);
  assert.match(fixed.stderr, /2 files written or removed/);
  assert.not.ok(fs.existsSync(path.join(copy(dir), 'lib', 'stray.c')));
  assert.ok(fs.readFileSync(path.join(copy(dir), 'lib', 'zstd.h')).equals(fs.readFileSync(path.join(napi, 'deps', 'zstd', 'lib', 'zstd.h'))));
});

test('without node_modules/zstd-napi (an installed tarball): checks the copy, never writes; a missing file is an error', () => {
  const dir = project();
  assert.is(run(dir).status, 0);
  fs.rmSync(path.join(dir, 'node_modules'), { recursive: true });
  const ok = run(dir);
  assert.is(ok.status, 0, ok.stderr);
  assert.is(ok.stderr + ok.stdout, '');
  fs.rmSync(path.join(copy(dir), 'lib', 'compress', 'zstd_opt.c'));
  const bad = run(dir);
  assert.is(bad.status, 1);
  assert.match(bad.stderr, /native\/third_party\/zstd is incomplete \(lib\/compress\/zstd_opt\.c is missing\)/);
  assert.match(bad.stderr, /npm install/);
  const none = project(null);
  const missing = run(none);
  assert.is(missing.status, 1);
  assert.match(missing.stderr, /native\/third_party\/zstd is missing/);
});

test('refuses another zstd-napi than the pinned one, another zstd version, or a changed license', () => {
  const pinned = project();
  const pkg = JSON.parse(fs.readFileSync(path.join(pinned, 'package.json'), 'utf8'));
  pkg.devDependencies['zstd-napi'] = '0.0.12';
  fs.writeFileSync(path.join(pinned, 'package.json'), JSON.stringify(pkg));
  const r1 = run(pinned);
  assert.is(r1.status, 1);
  assert.match(r1.stderr, /node_modules has zstd-napi 0\.0\.13, package\.json pins 0\.0\.12/);
  assert.not.ok(fs.existsSync(copy(pinned)));

  // A fake zstd-napi 0.0.13 whose zstd.h says 1.5.8, then one whose LICENSE differs.
  const fake = path.join(tmp, 'fake-napi');
  fs.cpSync(napi, fake, { recursive: true, filter: (src) => !/^(node_modules|build)\b/.test(path.relative(napi, src)) });
  const h = path.join(fake, 'deps', 'zstd', 'lib', 'zstd.h');
  fs.writeFileSync(h, fs.readFileSync(h, 'utf8').replace(/#define ZSTD_VERSION_RELEASE\s+7/, '#define ZSTD_VERSION_RELEASE  8'));
  const r2 = run(project(fake));
  assert.is(r2.status, 1);
  assert.match(r2.stderr, /carries zstd 1\.5\.8, this script expects 1\.5\.7/);
  fs.copyFileSync(path.join(napi, 'deps', 'zstd', 'lib', 'zstd.h'), h);
  fs.appendFileSync(path.join(fake, 'deps', 'zstd', 'LICENSE'), '\nOne more clause.\n');
  const r3 = run(project(fake));
  assert.is(r3.status, 1);
  assert.match(r3.stderr, /deps\/zstd\/LICENSE changed/);
});

test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
test.run();
