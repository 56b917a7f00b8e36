// Loads test/fixtures/corpora/spamassassin.jsonl.gz (or a JSONL[.gz] named by NEARDUP_BENCH_CORPUS) as texts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

export const corpusPath =
  process.env.NEARDUP_BENCH_CORPUS ?? path.join(__dirname, '..', 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz');

export function loadTexts(file = corpusPath): string[] {
  let raw = fs.readFileSync(file);
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = zlib.gunzipSync(raw);
  return raw.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l).text as string);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Runs fn `runs` times after one warm-up; returns the median wall time and the median process CPU time (s). */
export async function timeCpu(fn: () => Promise<unknown> | unknown, runs = 5): Promise<{ wall: number; cpu: number }> {
  await fn();
  const walls: number[] = [], cpus: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await fn();
    walls.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1e6);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

/** Runs fn `runs` times after one warm-up; returns the median wall time in seconds. */
export async function timeIt(fn: () => Promise<unknown> | unknown, runs = 5): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return median(times);
}

export function machine(): string {
  const os = require('node:os') as typeof import('node:os');
  const { execSync } = require('node:child_process') as typeof import('node:child_process');
  let commit = 'unknown';
  try { commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  return `${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model} x${os.cpus().length}, Node ${process.version}, commit ${commit}`;
}

/** sfc32: a small seeded 32-bit generator (the same sequence for a seed on every run and machine). */
export function sfc32(seed: number) {
  let a = seed >>> 0, b = 0x9e3779b9, c = 0x243f6a88, d = 0xb7e15162;
  return () => {
    // sfc32
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
}
