// Shared by bench/scale.ts (staged dedup) and bench/passages-scale.ts (sharded passage index): the corpus cut
// into 8 files, a private redis-server's port, waiting for a process's line, a process tree's CPU.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { generateNoisyCorpus } from './dedup-noisy-corpus';

/**
 * The first `mb` MB of `corpus` (whole lines) cut into 8 files in `dir`; the corpus is generated
 * (bench/dedup-noisy-corpus.ts, 1000 MB) when it does not exist.
 */
export function cut(corpus: string, mb: number, dir: string): string[] {
  if (!fs.existsSync(corpus)) {
    process.stderr.write(`generating ${corpus} (1000 MB)\n`);
    generateNoisyCorpus(corpus, 1000 * 1e6);
  }
  const data = fs.readFileSync(corpus);
  let end = Math.min(data.length, mb * 1e6);
  while (end < data.length && data[end - 1] !== 0x0a) end++;
  const files: string[] = [];
  let at = 0;
  for (let f = 0; f < 8; f++) {
    let e = Math.min(end, Math.floor((end * (f + 1)) / 8));
    while (e < end && data[e - 1] !== 0x0a) e++;
    const name = path.join(dir, `in${f}.jsonl`);
    fs.writeFileSync(name, data.subarray(at, e));
    files.push(name);
    at = e;
  }
  return files;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
  });
}

export function waitFor(p: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const on = (d: Buffer) => { seen += d; if (re.test(seen)) resolve(); };
    p.stdout?.on('data', on);
    p.stderr?.on('data', on);
    p.once('exit', () => reject(new Error(seen)));
  });
}

/**
 * CPU seconds (user + system) a live process and its descendants have used so far (Linux /proc): a worker
 * runs its tasks in a child process (BullMQ's sandboxed processor). Children that ended count through their
 * parent's cutime and cstime.
 */
export function cpuOf(pid: number): number {
  let f: string[];
  try {
    f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  } catch {
    return 0;  // ended meanwhile: counted in its parent's cutime/cstime once reaped
  }
  let t = (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;  // utime, stime, cutime, cstime (USER_HZ = 100)
  let kids: string[] = [];
  try {
    kids = fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
  } catch { /* gone */ }
  for (const k of kids) t += cpuOf(Number(k));
  return t;
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
