// Runs the CLI from source (through tsx) in a given folder, for tests.
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { TSX_FLAGS } from './support/tsx';

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');

export function cli(cwd: string, args: string[], input?: string | Buffer): { code: number; stdout: Buffer; stderr: string } {
  const r = spawnSync(process.execPath, [...TSX_FLAGS, MAIN, ...args], { cwd, input, maxBuffer: 1 << 28 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr.toString() };
}
