// Puts the Zstandard C sources that the native build compiles into native/third_party/zstd (ignored by git:
// nothing is copied into the repository). They come from the devDependency zstd-napi (exact version pinned in
// package.json), whose deps/zstd is upstream's lib/ unmodified; HACKING.md says why zstd is compiled into our
// addon rather than used as a runtime dependency.
//
// Copied: LICENSE, the .c files of native/sources.gypi's neardup_zstd_sources, and every header reachable from
// them and from lib/zstd.h, lib/zstd_errors.h through `#include "..."` lines. Files of the folder outside that
// set are removed. Before copying, it checks that node_modules holds the pinned zstd-napi, that its zstd.h is
// ZSTD_VERSION and that its LICENSE is the reviewed one (LICENSE_SHA256).
//
// Without node_modules/zstd-napi (an installed tarball, which ships the copied folder) it only checks that the
// folder is complete. Run by every build: binding.gyp (so `npm ci`, `npm run build`, prebuilds and the tarball's
// source-build fallback), native/CMakeLists.txt, tools/cross-compile.sh. Prints nothing on stdout (binding.gyp
// reads its stdout); one line on stderr when it changed files. Exit status 1 with a message on any problem.
//
//   node tools/zstd-sources.mjs
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ZSTD_VERSION = '1.5.7';
const LICENSE_SHA256 = '7055266497633c9025b777c78eb7235af13922117480ed5c674677adc381c9d8';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const folder = 'native/third_party/zstd';
const dest = path.join(root, folder);

function fail(message) {
  process.stderr.write(`zstd-sources: ${message}\n`);
  process.exit(1);
}
const read = (file) => fs.readFileSync(file);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

// The files of the copy, relative to its folder (forward slashes), found in `dir`: the compiled .c files,
// the public headers, and the headers they include (transitively). Includes that name no file of `dir`
// (upstream's optional parts, e.g. ../legacy/) are skipped: the compiler reports any that a build needs.
function closure(dir, compiled) {
  const required = [...compiled, 'lib/zstd.h', 'lib/zstd_errors.h'];
  if (!fs.existsSync(path.join(dir, 'LICENSE'))) return { missing: 'LICENSE' };
  const seen = new Set(['LICENSE']);
  const stack = [...required];
  while (stack.length > 0) {
    const file = stack.pop();
    if (seen.has(file)) continue;
    if (!fs.existsSync(path.join(dir, file))) {
      if (required.includes(file)) return { missing: file };
      continue;
    }
    seen.add(file);
    for (const m of fs.readFileSync(path.join(dir, file), 'latin1').matchAll(/^[ \t]*#[ \t]*include[ \t]*"([^"]+)"/gm)) {
      const inc = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]));
      if (!seen.has(inc) && inc.startsWith('lib/')) stack.push(inc);
    }
  }
  return { files: [...seen].sort() };
}

function zstdVersion(dir) {
  const h = fs.readFileSync(path.join(dir, 'lib', 'zstd.h'), 'utf8');
  const part = (name) => new RegExp(`#define ZSTD_VERSION_${name}\\s+(\\d+)`).exec(h)?.[1];
  return `${part('MAJOR')}.${part('MINOR')}.${part('RELEASE')}`;
}

function notice(napiVersion) {
  return `# zstd (generated, not in git)

Zstandard ${ZSTD_VERSION} (Meta Platforms, Inc. and affiliates; BSD license: \`LICENSE\`), unmodified: the files of
upstream's \`lib/\` that neardup compiles, copied by \`tools/zstd-sources.mjs\` from the npm package
zstd-napi ${napiVersion} (\`deps/zstd\`). Do not edit: the build copies them again. HACKING.md says how neardup
builds and updates it.
`;
}

const compiled = readJson(path.join(root, 'native', 'sources.gypi')).variables.neardup_zstd_sources.map((p) => {
  if (!p.startsWith(`${folder}/`)) fail(`native/sources.gypi: ${p} is not under ${folder}/`);
  return p.slice(folder.length + 1);
});

const napiDir = path.join(root, 'node_modules', 'zstd-napi');
if (!fs.existsSync(path.join(napiDir, 'package.json'))) {
  // An installed tarball (or a clone before `npm install`): the copy must already be complete.
  const c = fs.existsSync(dest) ? closure(dest, compiled) : { missing: '' };
  if (c.missing !== undefined || !fs.existsSync(path.join(dest, 'README.md'))) {
    fail(`${folder} is ${fs.existsSync(dest) ? `incomplete (${c.missing || 'README.md'} is missing)` : 'missing'} and ` +
      'node_modules/zstd-napi (a devDependency) is not installed to copy it from: run `npm install` in the repository');
  }
  if (zstdVersion(dest) !== ZSTD_VERSION) fail(`${folder} holds zstd ${zstdVersion(dest)}, expected ${ZSTD_VERSION}`);
  process.exit(0);
}

const pin = readJson(path.join(root, 'package.json')).devDependencies?.['zstd-napi'];
const napiVersion = readJson(path.join(napiDir, 'package.json')).version;
if (!/^\d+\.\d+\.\d+$/.test(pin ?? '')) fail(`package.json must pin zstd-napi to an exact version in devDependencies (has ${pin})`);
if (napiVersion !== pin) fail(`node_modules has zstd-napi ${napiVersion}, package.json pins ${pin}: run \`npm install\``);
const src = path.join(napiDir, 'deps', 'zstd');
const version = zstdVersion(src);
if (version !== ZSTD_VERSION) {
  fail(`zstd-napi ${napiVersion} carries zstd ${version}, this script expects ${ZSTD_VERSION}: read upstream's release ` +
    'notes, then update ZSTD_VERSION in tools/zstd-sources.mjs (HACKING.md: updating zstd)');
}
const licenseHash = createHash('sha256').update(read(path.join(src, 'LICENSE'))).digest('hex');
if (licenseHash !== LICENSE_SHA256) {
  fail(`zstd-napi ${napiVersion}'s deps/zstd/LICENSE changed (sha256 ${licenseHash}): review it, then update LICENSE_SHA256`);
}
const c = closure(src, compiled);
if (c.missing !== undefined) fail(`zstd-napi ${napiVersion} has no deps/zstd/${c.missing}`);

// Write only what differs, each file through a temporary name and a rename (a concurrent build never reads a
// half-written file); then remove what is no longer part of the copy.
let changed = 0;
const put = (rel, bytes) => {
  const file = path.join(dest, rel);
  if (fs.existsSync(file) && read(file).equals(bytes)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
  changed++;
};
for (const rel of c.files) put(rel, read(path.join(src, rel)));
put('README.md', Buffer.from(notice(napiVersion)));
const keep = new Set([...c.files, 'README.md']);
const prune = (dir) => {
  for (const e of fs.readdirSync(path.join(dest, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) {
      prune(rel);
      if (fs.readdirSync(path.join(dest, rel)).length === 0) fs.rmdirSync(path.join(dest, rel));
    } else if (!keep.has(rel)) {
      fs.rmSync(path.join(dest, rel));
      changed++;
    }
  }
};
prune('');
if (changed > 0) {
  process.stderr.write(`zstd-sources: ${folder}: ${changed} files written or removed (zstd ${version} from zstd-napi ${napiVersion}, ${keep.size} files)\n`);
}
