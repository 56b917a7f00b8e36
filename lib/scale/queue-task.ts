// One BullMQ job of `neardup worker` (lib/scale/queue.ts), run in a child process that BullMQ forks and reuses (a
// sandboxed processor): a barrier (a stage's parent job: its children's reports), a dedup stage task, a part
// of a chunk-similarity build, or a part of a sharded passage-index build. The child holds no Redis connection;
// it exits when the worker that forked it is gone, so that a killed worker's task is not finished by an orphan
// (BullMQ gives it to another worker; the outputs are atomic and idempotent, and what the task left
// half-written is swept by the next run).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Job } from 'bullmq';
import { NeardupError } from '../util/errors';
import { STAGES, runStage, type StageName, type StageReport } from './stages';

export interface TaskData {
  work: string;
  stage: StageName;
  shard: number;
}

/** A part of a prepared chunk-similarity build (lib/chunks/chunks.ts stages.part): its pairs file goes to `out`. */
export interface SimilarPartData {
  kind: 'similar-part';
  index: string;
  part: number;
  parts: number;
  out: string;
  memory?: number;
  tmp?: string;
}

/** A part of a planned sharded passage-index build (lib/scale/passages-stages.ts): WORK/part-PART. */
export interface PassagesPartData {
  kind: 'passages-part';
  work: string;
  part: number;
}

/** A key range of a planned sharded passage-index build: WORK/lists-RANGE.pst. */
export interface PassagesListsData {
  kind: 'passages-lists';
  work: string;
  range: number;
}

if (process.send !== undefined) process.on('disconnect', () => process.exit(1));

/**
 * For the fault tests only: NEARDUP_TEST_PAUSE=STAGE:MS makes the first run of each task of STAGE write
 * WORK/paused-STAGE-SHARD (holding the worker's pid and this process's) and wait MS before working, so that a
 * test can kill the worker in the middle of the task.
 */
async function testPause(work: string, stage: string, shard: number): Promise<void> {
  const m = /^([\w-]+):(\d+)$/.exec(process.env.NEARDUP_TEST_PAUSE ?? '');
  if (!m || m[1] !== stage) return;
  const marker = path.join(work, `paused-${stage}-${shard}`);
  try {
    fs.writeFileSync(marker, `${process.env.NEARDUP_WORKER_PID ?? process.pid} ${process.pid}`, { flag: 'wx' });
  } catch {
    return;  // a retry
  }
  await new Promise((r) => setTimeout(r, Number(m[2])));
}

// ---- what a job may ask (anyone who can write to the workers' Redis can add jobs: nothing is taken as given) ----

function refuse(why: string): never {
  throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `refused job: ${why}`);
}

/** An existing folder named by an absolute path without '..' (its links resolved). */
function jobFolder(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '' || v.includes('\0')) refuse(`${what} must be a folder's absolute path`);
  if (!path.isAbsolute(v)) refuse(`${what} '${v}' is not an absolute path`);
  if (v.split(/[\\/]/).includes('..')) refuse(`${what} '${v}' contains '..'`);
  let real: string;
  try {
    real = fs.realpathSync(v);
    if (!fs.statSync(real).isDirectory()) refuse(`${what} '${v}' is not a folder`);
  } catch (e) {
    if (e instanceof NeardupError) throw e;
    refuse(`${what} '${v}' cannot be opened: ${(e as Error).message}`);
  }
  return real;
}

/**
 * A file the job writes, inside `folder` (the job's work folder, links resolved): no '..', no absolute path
 * elsewhere, no symbolic link (the file itself or a folder on the way) leading out. Returns its path.
 */
function fileInside(folder: string, v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '' || v.includes('\0')) refuse(`${what} must be a file name`);
  if (v.split(/[\\/]/).includes('..')) refuse(`${what} '${v}' contains '..'`);
  const abs = path.resolve(folder, v);
  let real: string;
  try {
    const st = fs.lstatSync(abs);
    if (st.isSymbolicLink()) refuse(`${what} '${v}' is a symbolic link`);
    real = fs.realpathSync(abs);
  } catch (e) {
    if (e instanceof NeardupError) throw e;
    try {
      real = path.join(fs.realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      refuse(`${what} '${v}': its folder does not exist`);
    }
  }
  const rel = path.relative(folder, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) refuse(`${what} '${v}' is outside the job's folder '${folder}'`);
  return real;
}

function jobInt(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(`${what} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return v;
}

function onlyKeys(d: Record<string, unknown>, keys: string[], kind: string): void {
  for (const k of Object.keys(d)) if (!keys.includes(k)) refuse(`unknown field '${k}' in a ${kind} job`);
}

/** The job's payload, checked as the CLI checks its command line (throws a refusal naming what is wrong). */
/** The work folder of a passages job: an absolute folder holding a sharded build's plan (what it may write in). */
function passagesWork(v: unknown): string {
  const work = jobFolder(v, 'work');
  if (!fs.existsSync(fileInside(work, 'passages-plan.json', 'the plan'))) refuse(`the work folder '${work}' holds no passages-plan.json`);
  return work;
}

export function checkJob(name: unknown, data: unknown): TaskData | SimilarPartData | PassagesPartData | PassagesListsData | 'barrier' {
  if (name === 'barrier') return 'barrier';
  if (name !== 'task') refuse(`unknown job name ${JSON.stringify(name)}`);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) refuse('the job data is not an object');
  const d = data as Record<string, unknown>;
  switch (d.kind) {
    case undefined: {
      onlyKeys(d, ['work', 'stage', 'shard'], 'dedup stage');
      const work = jobFolder(d.work, 'work');
      if (!(STAGES as readonly unknown[]).includes(d.stage)) refuse(`unknown dedup stage ${JSON.stringify(d.stage)} (${STAGES.join(', ')})`);
      const shard = jobInt(d.shard, 'shard', 0, 1 << 20);
      if (!fs.existsSync(fileInside(work, 'plan.json', 'the plan'))) refuse(`the work folder '${work}' holds no plan.json`);
      return { work, stage: d.stage as StageName, shard };
    }
    case 'similar-part': {
      onlyKeys(d, ['kind', 'index', 'part', 'parts', 'out', 'memory', 'tmp'], 'similar-part');
      const index = jobFolder(d.index, 'index');
      const part = jobInt(d.part, 'part', 0, 4095);
      const parts = jobInt(d.parts, 'parts', part + 1, 4096);
      const out = fileInside(index, d.out, 'out');
      // the name the submitter gives: no other file of the index (MANIFEST, the table, ...) can be replaced
      if (path.dirname(out) !== index || path.basename(out) !== `pairs-${part}.ckp`)
        refuse(`out '${String(d.out)}' must be '${path.join(index, `pairs-${part}.ckp`)}' (part ${part}'s pairs file)`);
      const memory = d.memory === undefined ? undefined : jobInt(d.memory, 'memory', 0, Number.MAX_SAFE_INTEGER);
      const tmp = d.tmp === undefined ? undefined : jobFolder(d.tmp, 'tmp');
      return { kind: 'similar-part', index, part, parts, out, ...(memory !== undefined ? { memory } : {}), ...(tmp !== undefined ? { tmp } : {}) };
    }
    case 'passages-part': {
      onlyKeys(d, ['kind', 'work', 'part'], 'passages-part');
      const work = passagesWork(d.work);
      return { kind: 'passages-part', work, part: jobInt(d.part, 'part', 0, 1 << 20) };
    }
    case 'passages-lists': {
      onlyKeys(d, ['kind', 'work', 'range'], 'passages-lists');
      const work = passagesWork(d.work);
      return { kind: 'passages-lists', work, range: jobInt(d.range, 'range', 0, 1 << 20) };
    }
    default:
      refuse(`unknown job kind ${JSON.stringify(d.kind)}`);
  }
}

/** A task, with the CPU seconds of this child process during it (the native pool's included) when its report lacks them. */
export default async function task(job: Job): Promise<unknown> {
  const c0 = process.cpuUsage();
  const r = await runTask(job);
  if (r !== null && typeof r === 'object' && !Array.isArray(r) && (r as { cpuSeconds?: number }).cpuSeconds === undefined) {
    const c = process.cpuUsage(c0);
    return { ...r, cpuSeconds: (c.user + c.system) / 1e6 };
  }
  return r;
}

async function runTask(job: Job): Promise<unknown> {
  const checked = checkJob(job.name, job.data);
  if (checked === 'barrier') return Object.values(await job.getChildrenValues());
  if ((checked as SimilarPartData).kind === 'similar-part') {
    const p = checked as SimilarPartData;
    await testPause(p.index, 'similar-part', p.part);
    const { stages } = await import('../chunks/chunks.js');
    const t0 = Date.now();
    const out = await stages.part(p.index, p.part, { parts: p.parts, out: p.out, memory: p.memory, tmp: p.tmp });
    return { stage: 'similar-part', shard: `${p.part}/${p.parts}`, out, seconds: (Date.now() - t0) / 1000 };
  }
  if ((checked as PassagesPartData).kind === 'passages-part') {
    const p = checked as PassagesPartData;
    await testPause(p.work, 'passages-part', p.part);
    const { runPassagesPart } = await import('./passages-stages.js');
    return runPassagesPart(p.work, p.part);
  }
  if ((checked as PassagesListsData).kind === 'passages-lists') {
    const p = checked as PassagesListsData;
    await testPause(p.work, 'passages-lists', p.range);
    const { runPassagesLists } = await import('./passages-stages.js');
    return runPassagesLists(p.work, p.range);
  }
  const d = checked as TaskData;
  await testPause(d.work, d.stage, d.shard);
  return runStage(d.work, d.stage, d.shard) satisfies Promise<StageReport>;
}
