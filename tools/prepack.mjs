// `prepack` (npm pack, npm publish): compiles the TypeScript and builds the prebuilds the tarball carries, so
// that installing the tarball needs no compiler:
//   prebuilds/<platform>-<arch>/*.glibc.node   prebuildify with this machine's toolchain (npm run build:prebuilds)
//   prebuilds/linux-x64/*.musl.node            Zig's musl toolchain (tools/prebuild-musl.sh), on linux-x64 hosts
// Prebuilds left from an earlier pack are removed first, so a tarball never carries a stale binary.
// NEARDUP_PREBUILD_MUSL=0 skips the musl prebuild (musl systems then build from source at install).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(what, cmd, args) {
  console.error(`prepack: ${what}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32' });
  if (r.status !== 0) {
    console.error(`prepack: ${what} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
    process.exit(1);
  }
}

run('TypeScript (npm run build:ts)', npm, ['run', '--silent', 'build:ts']);
fs.rmSync(path.join(root, 'prebuilds'), { recursive: true, force: true });
run(`prebuild for ${process.platform}-${process.arch} (npm run build:prebuilds)`, npm, ['run', '--silent', 'build:prebuilds']);
if (process.platform === 'linux' && process.arch === 'x64') {
  if (process.env.NEARDUP_PREBUILD_MUSL === '0') console.error('prepack: NEARDUP_PREBUILD_MUSL=0: no musl prebuild');
  else run('musl prebuild (tools/prebuild-musl.sh)', 'bash', [path.join('tools', 'prebuild-musl.sh')]);
}
for (const dir of fs.readdirSync(path.join(root, 'prebuilds'))) {
  for (const f of fs.readdirSync(path.join(root, 'prebuilds', dir))) {
    console.error(`prepack: prebuilds/${dir}/${f} (${fs.statSync(path.join(root, 'prebuilds', dir, f)).size} bytes)`);
  }
}
