// The dedup stages on BullMQ (Redis): `neardup worker --redis URL` serves stage tasks, `neardup dedup --work
// DIR --redis URL` submits them stage by stage, each stage as a flow (a barrier parent over its shard tasks, so
// the next stage starts only when every shard of this one has completed) and waits; `neardup similar build
// --parts P --redis URL` submits the parts of a chunk-similarity build the same way (one task per range of the
// chunk-id space, as Kasprzak et al. distribute it). Tasks are retried (attempts, and BullMQ's stalled-job
// recovery when a worker dies: its lock expires and another worker takes the task again); outputs are atomic
// and idempotent, so a rerun of a task is harmless. bullmq is an optional dependency: only this mode loads it.
import { progressMode } from '../util/progress-mode';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../util/errors';
import { getThreads } from '../native/runtime';
import { loadPlan, stageGraph, type StageReport } from './stages';
import type { PassagesListsData, PassagesPartData, SimilarPartData, TaskData } from './queue-task';
import type { PassagesListsReport, PassagesPartReport } from './passages-stages';

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

export interface WorkerOptions {
  queue: string;
  concurrency: number;
  /** ms a task's lock lasts without renewal; a dead worker's task is taken again after about this long. */
  lockDuration: number;
}

/** Serves stage tasks until SIGINT/SIGTERM. */
export async function serveWorker(url: string, o: WorkerOptions): Promise<void> {
  const { Worker } = await bullmq();
  // Each task runs in a child process that BullMQ forks and keeps (a sandboxed processor: queue-task.ts), not in
  // this one: with a live BullMQ worker and its Redis connections in the process, V8 collected the old
  // generation three to four times as often under the stages' buffer traffic (measured: 35 full collections
  // against 10 for the same stages run locally), which cost the workers 10-20 % more CPU than the local run.
  // The child holds no connection; it dies with this process (its task is then taken again elsewhere).
  process.env.NEARDUP_WORKER_PID = String(process.pid);
  process.env.NEARDUP_THREADS = String(getThreads());  // the child's native pool: this worker's --threads
  const js = path.join(__dirname, 'queue-task.js');
  const processor = fs.existsSync(js) ? js : path.join(__dirname, 'queue-task.ts');  // from source (tsx): the child inherits --import tsx
  const worker = new Worker(o.queue, processor, {
    connection: redisConnection(url), concurrency: o.concurrency, lockDuration: o.lockDuration,
    stalledInterval: Math.max(500, Math.floor(o.lockDuration / 2)), maxStalledCount: 3, useWorkerThreads: false,
  });
  let fatal: (e: Error) => void = () => undefined;
  // Redis away: its clients retry with a growing delay (up to 20 s) and report each failed attempt; the log
  // says once what the worker waits for, then a line a minute while it still waits, and when it is back.
  let waiting: { since: number; said: number } | undefined;
  worker.on('error', (e) => {
    if (/could not load/i.test(e.message)) {  // a missing client package: retrying cannot help
      process.stderr.write(`neardup worker: ${e.message}\n`);
      fatal(e);
      return;
    }
    const now = Date.now();
    if (!isConnectionError(e)) process.stderr.write(`neardup worker: ${e.message}\n`);
    else if (!waiting) {
      waiting = { since: now, said: now };
      process.stderr.write(`neardup worker: waiting for Redis at ${url} (${e.message}); retrying with a growing delay, up to 20 s\n`);
    } else if (now - waiting.said >= 60_000) {
      waiting.said = now;
      process.stderr.write(`neardup worker: still waiting for Redis at ${url} after ${Math.round((now - waiting.since) / 1000)} s (${e.message})\n`);
    }
  });
  worker.on('ready', () => {
    if (!waiting) return;
    process.stderr.write(`neardup worker: Redis at ${url} is back after ${Math.round((Date.now() - waiting.since) / 1000)} s\n`);
    waiting = undefined;
  });
  worker.on('failed', (job, e) => process.stderr.write(`neardup worker: ${job?.name} ${JSON.stringify(job?.data)} failed: ${e.message}\n`));
  // a start and an end line per task (not the barriers), JSON like the progress lines, unless --progress none
  if (progressMode() !== 'none') {
    const started = new Map<string, number>();
    const line = (job: { id?: string; name: string; data: unknown }, event: string, extra: Record<string, unknown> = {}) => {
      if (job.name === 'barrier') return;
      const d = (job.data ?? {}) as { stage?: unknown; kind?: unknown };
      const task = typeof d.stage === 'string' ? d.stage : typeof d.kind === 'string' ? d.kind : job.name;
      process.stderr.write(JSON.stringify({ progress: 'worker', event, task, job: job.id ?? null, data: job.data, ...extra }) + '\n');
    };
    worker.on('active', (job) => {
      started.set(String(job.id), Date.now());
      line(job, 'start');
    });
    worker.on('completed', (job, result: unknown) => {
      const t0 = started.get(String(job.id));
      started.delete(String(job.id));
      const cpu = result !== null && typeof result === 'object' ? (result as { cpuSeconds?: number }).cpuSeconds : undefined;
      line(job, 'end', {
        seconds: t0 === undefined ? null : +((Date.now() - t0) / 1000).toFixed(3),
        cpu_seconds: typeof cpu === 'number' ? +cpu.toFixed(3) : null,
      });
    });
  }
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
    // closing waits for pending commands; with Redis away that is forever: then force the connections shut
    const closing = worker.close();
    if (waiting) {
      await Promise.race([closing, new Promise((r) => setTimeout(r, 1000).unref())]);
      void worker.disconnect().catch(() => undefined);
    } else await closing;
  }
}

/** An error of a Redis client's connection (refused, reset, unreachable, timed out), which a retry can mend. */
function isConnectionError(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return (code !== undefined && /^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE)$/.test(code)) ||
    /ECONNREFUSED|ECONNRESET|Connection is closed|connect ETIMEDOUT/.test(e.message);
}

/**
 * The submitter's clients and its watch over the connection. The clients report each failed reconnection as an
 * error (at growing intervals while Redis is away): an outage runs from the first error until Redis answers a
 * PING again; one longer than waitMs makes `guard` reject with ERR_NEARDUP_IO naming Redis (the outputs written so far are kept, and
 * rerunning the command submits the tasks again: they are idempotent).
 */
async function submitter(url: string, queue: string, waitMs: number) {
  const { FlowProducer, QueueEvents } = await bullmq();
  const connection = redisConnection(url);
  const events = new QueueEvents(queue, { connection });
  const flow = new FlowProducer({ connection });
  let lost: Error | undefined;
  let since = 0, probing = false;
  let giveUp: (e: Error) => void = () => undefined;
  const gaveUp = new Promise<never>((_, reject) => { giveUp = reject; });
  gaveUp.catch(() => undefined);
  // The outage ends when Redis answers again, not when the errors pause: the clients retry with a growing
  // delay (up to 20 s), so a pause between errors says nothing. A read (GET of a key nothing writes) on the
  // producer's connection waits in its offline queue until Redis is back (or fails after the client's
  // retries: then it is sent again).
  let closed = false;
  const probe = () => {
    if (probing || closed) return;
    probing = true;
    flow.getBackend().client.then((c) => c.get('neardup:probe'))
      .then(() => { lost = undefined; }, () => undefined)
      .finally(() => { probing = false; });
  };
  const onError = (e: Error) => {
    if (!lost) since = Date.now();
    lost = e;
    probe();
  };
  const clock = setInterval(() => {
    if (!lost) return;
    const now = Date.now();
    if (now - since <= waitMs) probe();
    else {
      giveUp(new NeardupError('ERR_NEARDUP_IO', `lost the connection to Redis at ${url} for ${Math.round((now - since) / 1000)} s ` +
        `(${lost.message}); the outputs written so far are kept: rerun the same command to submit the tasks again`));
    }
  }, 250);
  events.on('error', onError);
  flow.on('error', onError);
  return {
    url, events, flow,
    guard: <T>(p: Promise<T>): Promise<T> => Promise.race([p, gaveUp]),
    async close(): Promise<void> {
      clearInterval(clock);
      closed = true;
      // closing waits for pending commands; a Redis that is gone would hold it forever
      // (and its clients would go on reconnecting, keeping the process alive): then force them shut
      const closing = Promise.allSettled([events.close(), flow.close()]);
      if (lost) {
        await Promise.race([closing, new Promise((r) => setTimeout(r, 1000).unref())]);
        void Promise.allSettled([events.disconnect(), flow.disconnect()]);
      } else await closing;
    },
  };
}

/** Runs the tasks as one flow (a barrier parent over them) and waits for all; returns their results. */
async function runFlow<T>(sub: Awaited<ReturnType<typeof submitter>>, queue: string, what: string, barrier: object,
                          tasks: object[]): Promise<T[]> {
  const tree = await sub.guard(sub.flow.add({
    name: 'barrier', queueName: queue, data: barrier,
    children: tasks.map((data) => ({
      name: 'task', queueName: queue, data,
      opts: { attempts: 3, backoff: { type: 'fixed', delay: 200 }, failParentOnFailure: true },
    })),
  }));
  if (process.stderr.isTTY) process.stderr.write(`neardup: ${what}: ${tasks.length} task(s) submitted\n`);
  const watch = watchFlow(tree.job, sub.url, what);
  try {
    return await sub.guard(Promise.race([tree.job.waitUntilFinished(sub.events), watch.gone])) as T[];
  } catch (e) {
    if (e instanceof NeardupError) throw e;
    // the barrier's own failure names only the child's job id: report the tasks' errors (shard, file)
    const reasons = await sub.flow.getFlow({ id: tree.job.id!, queueName: queue })
      .then((t) => (t.children ?? []).map((c) => c.job.failedReason).filter((r) => r)).catch(() => []);
    throw new NeardupError('ERR_NEARDUP_IO', `${what} failed: ${reasons.length ? reasons.join('; ') : (e as Error).message}`);
  } finally {
    watch.stop();
  }
}

/**
 * Asks Redis every few seconds whether the barrier job is still there. A Redis that restarts without its data
 * (no persistence, a new pod) comes back empty within `--redis-wait`: the connection is fine, but the stage's
 * jobs and their events are gone and no completion will ever arrive. `gone` rejects then, naming Redis.
 */
function watchFlow(job: import('bullmq').Job, url: string, what: string): { gone: Promise<never>; stop(): void } {
  let fail: (e: Error) => void = () => undefined;
  const gone = new Promise<never>((_, reject) => { fail = reject; });
  gone.catch(() => undefined);
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;  // a question sent while Redis is away waits for it to come back
    asking = true;
    job.getState().then((state) => {
      asking = false;
      if (state !== 'unknown') return;
      fail(new NeardupError('ERR_NEARDUP_IO', `Redis at ${url} no longer holds the tasks of ${what} (it restarted without its data, ` +
        'or they were removed); the outputs written so far are kept: rerun the same command to submit the tasks again'));
    }, () => { asking = false; });
  }, 2000);
  timer.unref();
  return { gone, stop: () => clearInterval(timer) };
}

/** Submits the plan in `work` stage by stage and waits; returns every task's report. */
export async function submitDedup(url: string, work: string, queue: string, waitMs = 30_000): Promise<StageReport[]> {
  const sub = await submitter(url, queue, waitMs);
  const reports: StageReport[] = [];
  try {
    await sub.guard(sub.events.waitUntilReady());
    const plan = loadPlan(work).plan;
    for (const { stage, shards } of stageGraph(plan)) {
      const tasks = Array.from({ length: shards }, (_, shard) => ({ work, stage, shard } satisfies TaskData));
      const result = await runFlow<StageReport>(sub, queue, `stage ${stage}`, { work, stage }, tasks);
      result.sort((a, b) => Number(a.shard.split('/')[0]) - Number(b.shard.split('/')[0]));
      reports.push(...result);
    }
  } finally {
    await sub.close();
  }
  return reports;
}

/**
 * Submits the parts of a prepared chunk-similarity build in `index` (stages.prepare done) and waits; returns
 * the pairs files, in part order, for stages.finish.
 */
export async function submitSimilarParts(url: string, index: string, parts: number, o: { memory?: number; tmp?: string },
                                         queue: string, waitMs = 30_000): Promise<string[]> {
  const sub = await submitter(url, queue, waitMs);
  try {
    await sub.guard(sub.events.waitUntilReady());
    const tasks = Array.from({ length: parts }, (_, part) => ({
      kind: 'similar-part', index, part, parts, out: path.join(index, `pairs-${part}.ckp`),
      ...(o.memory !== undefined ? { memory: o.memory } : {}), ...(o.tmp !== undefined ? { tmp: o.tmp } : {}),
    } satisfies SimilarPartData));
    await runFlow(sub, queue, 'similar parts', { index, kind: 'similar-parts' }, tasks);
    return tasks.map((t) => t.out);
  } finally {
    await sub.close();
  }
}

/**
 * Submits the tasks of a planned sharded passage-index build in `work` (passages-stages.ts) and waits: its
 * parts, then (keyRanges > 0) its key ranges, each stage a flow behind a barrier.
 */
export async function submitPassagesTasks(url: string, work: string, shards: number, keyRanges: number, queue: string,
                                          waitMs = 30_000): Promise<Array<PassagesPartReport | PassagesListsReport>> {
  const sub = await submitter(url, queue, waitMs);
  try {
    await sub.guard(sub.events.waitUntilReady());
    const parts = Array.from({ length: shards }, (_, part) => ({ kind: 'passages-part', work, part } satisfies PassagesPartData));
    const reports: Array<PassagesPartReport | PassagesListsReport> = await runFlow<PassagesPartReport>(sub, queue, 'passages parts', { work, kind: 'passages-parts' }, parts);
    if (keyRanges > 0) {
      const lists = Array.from({ length: keyRanges }, (_, range) => ({ kind: 'passages-lists', work, range } satisfies PassagesListsData));
      reports.push(...await runFlow<PassagesListsReport>(sub, queue, 'passages key ranges', { work, kind: 'passages-lists' }, lists));
    }
    return reports;
  } finally {
    await sub.close();
  }
}
