// One BullMQ job of `neardup worker` (lib/cli/queue.ts), run in a child process that BullMQ forks and reuses (a
// sandboxed processor): a barrier (a stage's parent job: its children's reports), a dedup stage task, a part
// of a chunk-similarity build, or a part of a sharded passage-index build. The child holds no Redis connection;
// it exits when the worker that forked it is gone, so that a killed worker's task is not finished by an orphan
// (BullMQ gives it to another worker; the outputs are atomic and idempotent, and what the task left
// half-written is swept by the next run).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Job } from 'bullmq';
import { runStage, type StageName, type StageReport } from './stages';

export interface TaskData {
  work: string;
  stage: StageName;
  shard: number;
}

/** A part of a prepared chunk-similarity build (lib/chunks.ts stages.part): its pairs file goes to `out`. */
export interface SimilarPartData {
  kind: 'similar-part';
  index: string;
  part: number;
  parts: number;
  out: string;
  memory?: number;
  tmp?: string;
}

/** A part of a planned sharded passage-index build (lib/cli/passages-stages.ts): WORK/part-PART. */
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

export default async function task(job: Job): Promise<unknown> {
  if (job.name === 'barrier') return Object.values(await job.getChildrenValues());
  if ((job.data as SimilarPartData).kind === 'similar-part') {
    const p = job.data as SimilarPartData;
    await testPause(p.index, 'similar-part', p.part);
    const { stages } = await import('../chunks.js');
    const t0 = Date.now();
    const out = await stages.part(p.index, p.part, { parts: p.parts, out: p.out, memory: p.memory, tmp: p.tmp });
    return { stage: 'similar-part', shard: `${p.part}/${p.parts}`, out, seconds: (Date.now() - t0) / 1000 };
  }
  if ((job.data as PassagesPartData).kind === 'passages-part') {
    const p = job.data as PassagesPartData;
    await testPause(p.work, 'passages-part', p.part);
    const { runPassagesPart } = await import('./passages-stages.js');
    return runPassagesPart(p.work, p.part);
  }
  if ((job.data as PassagesListsData).kind === 'passages-lists') {
    const p = job.data as PassagesListsData;
    await testPause(p.work, 'passages-lists', p.range);
    const { runPassagesLists } = await import('./passages-stages.js');
    return runPassagesLists(p.work, p.range);
  }
  const d = job.data as TaskData;
  await testPause(d.work, d.stage, d.shard);
  return runStage(d.work, d.stage, d.shard) satisfies Promise<StageReport>;
}
