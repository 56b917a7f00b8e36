// Runs the CLI from source (through tsx) in a given folder, for tests.
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
const TSX = pathToFileURL(require.resolve('tsx')).href;

export function cli(cwd: string, args: string[], input?: string | Buffer): { code: number; stdout: Buffer; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, input, maxBuffer: 1 << 28 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.toString() };
}
