// The dedup stages on BullMQ (Redis): `neardup worker --redis URL` serves stage tasks, `neardup dedup --work
// DIR --redis URL` submits them stage by stage, each stage as a flow (a barrier parent over its shard tasks,
// so the next stage starts only when every shard of this one has completed) and waits. Tasks are retried
// (attempts, and BullMQ's stalled-job recovery when a worker dies: its lock expires and another worker takes
// the task again); stage outputs are atomic and idempotent, so a rerun of a task is harmless. bullmq is an
// optional dependency: only this mode loads it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../errors';
import { runStage, loadPlan, stageGraph, type StageName, type StageReport } from './stages';

type BullMq = typeof import('bullmq');

async function bullmq(): Promise<BullMq> {
  try {
    return await import('bullmq');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `--redis needs the npm package 'bullmq' (an optional dependency of neardup; npm install bullmq): ${(e as Error).message}`);
  }
}

/** ioredis options from redis://[:password@]host[:port][/db]. */
export function redisConnection(url: string): { host: string; port: number; password?: string; db?: number; maxRetriesPerRequest: null } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `--redis must be a URL like redis://127.0.0.1:6379, got '${url}'`);
  }
  if (u.protocol !== 'redis:') throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', `--redis must be a redis:// URL, got '${url}'`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined;
  return {
    host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : 6379, maxRetriesPerRequest: null,
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}), ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
  };
}

interface TaskData {
  work: string;
  stage: StageName;
  shard: number;
}

export interface WorkerOptions {
  queue: string;
  concurrency: number;
  /** ms a task's lock lasts without renewal; a dead worker's task is taken again after about this long. */
  lockDuration: number;
}

/**
 * For the fault tests only: NEARDUP_TEST_PAUSE=STAGE:MS makes the first run of each task of STAGE write
 * WORK/paused-STAGE-SHARD (holding this worker's pid) and wait MS before working, so that a test can kill
 * the worker in the middle of the task.
 */
async function testPause(d: TaskData): Promise<void> {
  const m = /^(\w+):(\d+)$/.exec(process.env.NEARDUP_TEST_PAUSE ?? '');
  if (!m || m[1] !== d.stage) return;
  const marker = path.join(d.work, `paused-${d.stage}-${d.shard}`);
  try {
    fs.writeFileSync(marker, String(process.pid), { flag: 'wx' });
  } catch {
    return;  // a retry
  }
  await new Promise((r) => setTimeout(r, Number(m[2])));
}

/** Serves stage tasks until SIGINT/SIGTERM. */
export async function serveWorker(url: string, o: WorkerOptions): Promise<void> {
  const { Worker } = await bullmq();
  const worker = new Worker(o.queue, async (job) => {
    if (job.name === 'barrier') return Object.values(await job.getChildrenValues());
    const d = job.data as TaskData;
    await testPause(d);
    return runStage(d.work, d.stage, d.shard);
  }, {
    connection: redisConnection(url), concurrency: o.concurrency, lockDuration: o.lockDuration,
    stalledInterval: Math.max(500, Math.floor(o.lockDuration / 2)), maxStalledCount: 3,
  });
  let fatal: (e: Error) => void = () => undefined;
  worker.on('error', (e) => {
    process.stderr.write(`neardup worker: ${e.message}\n`);
    if (/could not load/i.test(e.message)) fatal(e);  // a missing client package: retrying cannot help
  });
  worker.on('failed', (job, e) => process.stderr.write(`neardup worker: ${job?.name} ${JSON.stringify(job?.data)} failed: ${e.message}\n`));
  try {
    await new Promise<void>((resolve, reject) => {
      fatal = reject;
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      worker.waitUntilReady().then(() => {
        process.stderr.write(`neardup worker: serving queue '${o.queue}' on ${url} (pid ${process.pid})\n`);
      }, reject);
    });
  } finally {
    await worker.close();
  }
}

/**
 * Submits the plan in `work` stage by stage and waits; returns every task's report. A connection to Redis lost
 * for more than `waitMs` (the clients keep reconnecting meanwhile) fails the run with ERR_NEARDUP_IO, naming
 * Redis: the stage outputs already written stay, and rerunning the command submits the stages again.
 */
export async function submitDedup(url: string, work: string, queue: string, waitMs = 30_000): Promise<StageReport[]> {
  const { FlowProducer, QueueEvents } = await bullmq();
  const connection = redisConnection(url);
  const events = new QueueEvents(queue, { connection });
  const flow = new FlowProducer({ connection });
  // The clients report each failed reconnection as an error (every second or two while Redis is away): an
  // outage is a run of errors without a 5 s gap; one longer than waitMs gives up.
  let lost: Error | undefined;
  let since = 0, last = 0;
  let giveUp: (e: Error) => void = () => undefined;
  const gaveUp = new Promise<never>((_, reject) => { giveUp = reject; });
  gaveUp.catch(() => undefined);
  const onError = (e: Error) => {
    const now = Date.now();
    if (!lost || now - last > 5000) since = now;
    lost = e;
    last = now;
  };
  const clock = setInterval(() => {
    if (!lost) return;
    const now = Date.now();
    if (now - last > 5000) lost = undefined;
    else if (now - since > waitMs) {
      giveUp(new NeardupError('ERR_NEARDUP_IO', `lost the connection to Redis at ${url} for ${Math.round((now - since) / 1000)} s ` +
        `(${lost.message}); the stage outputs written so far are kept: rerun the same command to submit the stages again`));
    }
  }, 250);
  events.on('error', onError);
  flow.on('error', onError);
  const reports: StageReport[] = [];
  try {
    await Promise.race([events.waitUntilReady(), gaveUp]);
    const plan = loadPlan(work).plan;
    for (const { stage, shards } of stageGraph(plan)) {
      const tree = await Promise.race([flow.add({
        name: 'barrier', queueName: queue, data: { work, stage },
        children: Array.from({ length: shards }, (_, shard) => ({
          name: 'task', queueName: queue, data: { work, stage, shard } satisfies TaskData,
          opts: { attempts: 3, backoff: { type: 'fixed', delay: 200 }, failParentOnFailure: true },
        })),
      }), gaveUp]);
      if (process.stderr.isTTY) process.stderr.write(`neardup dedup: stage ${stage}: ${shards} task(s) submitted\n`);
      let result: StageReport[];
      try {
        result = await Promise.race([tree.job.waitUntilFinished(events), gaveUp]) as StageReport[];
      } catch (e) {
        if (e instanceof NeardupError) throw e;
        throw new NeardupError('ERR_NEARDUP_IO', `stage ${stage} failed: ${(e as Error).message}`);
      }
      result.sort((a, b) => Number(a.shard.split('/')[0]) - Number(b.shard.split('/')[0]));
      reports.push(...result);
    }
  } finally {
    clearInterval(clock);
    // closing waits for pending commands; a Redis that is gone would hold it forever
    const closing = Promise.allSettled([events.close(), flow.close()]);
    if (lost) await Promise.race([closing, new Promise((r) => setTimeout(r, 1000))]);
    else await closing;
  }
  return reports;
}
