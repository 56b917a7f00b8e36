// `neardup dedup --work DIR [--shards N] [--redis URL]`: dedup as sharded stages (lib/scale/stages.ts), run in
// this process one after the other, or submitted to BullMQ workers (lib/scale/queue.ts). Same outputs and the
// same summary as the single-process run (docs/scale.md). The plan of a dedup command line and the run itself
// are in lib/cli/commands/dedup.ts (buildPlan, runStagedDedup).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../util/errors';
import { UsageError, intOption } from '../util/options';
import { OutputFile, isInside, realPath } from '../io/files';
import { keptDirName } from '../io/kept';
import { sniffFile } from '../io/input';
import { resolveDedupOptions } from '../minhash/dedup';
import { cjkJson, normalizeJson } from '../minhash/dedup-index';
import { acquireLock } from '../io/locks';
import { version } from '../util/version';
import {
  loadPlan, planPath, readClusters, runStage, stageGraph, writePlan, type LoadedPlan, type StagePlan, type StageReport,
} from './stages';

export const STAGED_OPTIONS = {
  work: { type: 'string' }, shards: { type: 'string' }, 'band-shards': { type: 'string' }, redis: { type: 'string' },
  queue: { type: 'string' }, 'redis-wait': { type: 'string' },
} as const;

export const STAGED_USAGE = `  --work DIR                run as sharded stages in DIR (docs/scale.md): the same outputs as one run (every
                            output option; stdin is copied to DIR/stdin.input first; not with --index); DIR
                            is locked while the run lasts, and no output may be inside DIR
  --shards N                input-file shards of the signatures and filter stages (default 1)
  --band-shards M           band ranges of the buckets stage (default: N, at most the bands)
  --redis URL               submit the stages to 'neardup worker' processes through BullMQ on this Redis
                            (redis://host:port) and wait (needs --work on a folder the workers share)
  --queue NAME              the BullMQ queue (default neardup)
  --redis-wait SECONDS      how long a lost Redis may stay away before the run fails (default 30; then
                            rerun the same command: the stages start again, their outputs are idempotent)`;

/** The file the stages read standard input from: spooled into the work folder (stages run anywhere, read it again). */
export const STDIN_SPOOL = 'stdin.input';

/** The names of the work folder's own files (plan, lock, stage files, the spooled stdin, test markers). */
const WORK_FILE = /^(plan\.json|LOCK|clusters\.rep|stdin\.input|sig-\d+\.[\w-]+|bkt-\d+\.(pairs|cand-\d+)|vfy-\d+\.pairs|(kept|removed)-\d+\.part|paused-.*|\..*\.neardup-tmp-.*)$/;

/** The staged run's output files, as dedup names them (option, file); --kept-dir: one per input. */
export function stagedOutputs(values: Record<string, unknown>, positionals: string[]): { option: string; file: string }[] {
  const outputs = (['kept', 'removed', 'flags', 'clusters', 'pairs', 'removed-ids'] as const)
    .filter((o) => values[o] !== undefined).map((o) => ({ option: `--${o}`, file: String(values[o]) }));
  const keptDir = values['kept-dir'];
  if (keptDir !== undefined) {
    for (const f of positionals) if (f !== '-') outputs.push({ option: '--kept-dir', file: keptDirName(String(keptDir), f, sniffFile(f).format) });
  }
  return outputs;
}

/**
 * Refuses what would make the stages overwrite their own files or the user's: an output inside the work folder
 * (or a link into it: plan.json, a stage file, any other name), an input that is a stage file (a later stage would replace it),
 * and '-' as an output (the stage tasks write the outputs, on any machine: give a file).
 */
export function checkWorkFolder(work: string, outputs: { option: string; file: string }[], inputs: string[]): void {
  const w = realPath(work);
  for (const o of outputs) {
    if (o.file === '-') throw new UsageError(`${o.option} -: a staged run (--work) writes its outputs from its stage tasks; give a file, not standard output`);
    const r = realPath(o.file);
    // anything inside the folder: its stages' files (plan.json, sig-*, ...) and what a later run writes there
    if (isInside(w, r)) {
      const own = path.dirname(r) === w && WORK_FILE.test(path.basename(r));
      throw new UsageError(`${o.option} '${o.file}' is ${r === w ? 'the work folder' : own ? `a file of the work folder '${work}' (its stages write ${path.basename(r)})`
        : `inside the work folder '${work}' (the stages own that folder)`}: write the output elsewhere`);
    }
  }
  for (const f of inputs) {
    if (f === '-') continue;
    const r = realPath(f);
    if (path.dirname(r) === w && WORK_FILE.test(path.basename(r)) && path.basename(r) !== STDIN_SPOOL)
      throw new UsageError(`the input '${f}' is a file of the work folder '${work}' (its stages write ${path.basename(r)}): move it out of the work folder`);
  }
}

/**
 * Takes the work folder's lock (an advisory lock on WORK/LOCK, released by the system when the process dies): the
 * runs that write plan.json or run every stage (`dedup --work`, `dedup-stage plan`, `dedup-stage run`) hold it, so
 * two of them never share a folder at once; a second one is refused while the first runs (two that start at the
 * same instant run one after the other). Stage tasks do not take it: the tasks of one run run side by side.
 */
export function lockWork(work: string): () => void {
  fs.mkdirSync(work, { recursive: true });
  return acquireLock(work, (file) => `the work folder '${work}' is in use by another run (it holds ${file}); wait for it or give another --work`);
}

/** Copies standard input to WORK/stdin.input (atomically) when '-' is an input; returns the inputs with it in place of '-'. */
export async function spoolStdin(work: string, positionals: string[]): Promise<string[]> {
  if (!positionals.includes('-')) return positionals;
  const spool = path.join(work, STDIN_SPOOL);
  const out = OutputFile.open(spool);
  try {
    for await (const chunk of process.stdin) await out.write(chunk as Buffer);
    await out.commit();
  } finally {
    out.abort();
  }
  return positionals.map((f) => (f === '-' ? spool : f));
}

/** dedup's JSON summary for a finished staged run. */
export function stagedSummary(lp: LoadedPlan, seconds: number, reports: StageReport[]): Record<string, unknown> {
  const { summary: s } = readClusters(lp);
  const stages = reports.map((r) => ({ stage: r.stage, shard: r.shard, read_bytes: r.readBytes, written_bytes: r.writtenBytes, seconds: +r.seconds.toFixed(3), cpu_seconds: +(r.cpuSeconds ?? 0).toFixed(3) }));
  if (lp.plan.exact) {  // neardup exact's plan
    return {
      documents: s.documents, bad_lines: s.bad_lines, kept: s.documents - (s.dropped ?? s.duplicates), duplicates: s.duplicates, distinct: s.documents - s.duplicates,
      drop_all: lp.plan.dropAll === true, dropped: s.dropped ?? s.duplicates, version, exact: lp.plan.exact, input_bytes: s.input_bytes, seconds: +seconds.toFixed(3),
      mb_per_s: +(s.input_bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2), peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1),
      spilled_bytes: s.spilled_bytes, runs: s.runs, shards: lp.plan.shards, stages,
    };
  }
  const res = resolveDedupOptions({ ...lp.plan.options, seed: lp.plan.options.seed === undefined ? undefined : BigInt(lp.plan.options.seed) });
  const st = res.settings, sh = st.shingle;
  // the single run's rule (commands/dedup.ts): counts only where that run enumerates the pairs
  const pairsKnown = lp.plan.outputs.pairs !== undefined || (st.verify !== 'none' && (st.verify === 'estimate' || st.clustering === 'components'));
  return {
    documents: s.documents, bad_lines: s.bad_lines, kept: s.documents - (s.dropped ?? s.duplicates), duplicates: s.duplicates, clusters: s.clusters,
    drop_all: lp.plan.dropAll === true, dropped: s.dropped ?? s.duplicates,
    candidate_pairs: pairsKnown ? s.candidate_pairs : null, reported_pairs: pairsKnown ? s.reported_pairs : null,
    version, profile: st.profile, threshold: st.threshold, num_perm: res.numPerm, b: res.b, r: res.r, seed: st.seed, banding: st.banding,
    shingle: {
      unit: sh.unit, n: sh.n, split: sh.split, lowercase: sh.lowercase, strip_punctuation: sh.stripPunctuation,
      fold_whitespace: sh.foldWhitespace, short: sh.short, ...normalizeJson(sh.normalize), ...cjkJson(sh.split, sh.cjk),
    },
    verify: st.verify, clustering: st.clustering, input_bytes: s.input_bytes, seconds: +seconds.toFixed(3),
    mb_per_s: +(s.input_bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
    peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1), spilled_bytes: s.spilled_bytes, runs: s.runs,
    shards: lp.plan.shards, band_shards: lp.plan.bandShards,
    stages,
  };
}

/** Every stage task in order, in this process. */
export async function runStagesLocally(work: string): Promise<StageReport[]> {
  const lp = loadPlan(work);
  const reports: StageReport[] = [];
  for (const { stage, shards } of stageGraph(lp.plan)) for (let i = 0; i < shards; i++) reports.push(await runStage(work, stage, i));
  return reports;
}

/**
 * A staged run from a command line (dedup's or exact's --work): the work folder checked and locked, the plan
 * made from the inputs (standard input spooled into the folder first) and written, its stages run in this
 * process or submitted to BullMQ workers (--redis, --queue, --redis-wait), and the plan found unchanged at the
 * end. Returns the plan as run, every task's report and the seconds taken.
 */
export async function runStagedPlan(values: Record<string, unknown>, positionals: string[], makePlan: (files: string[]) => StagePlan):
  Promise<{ lp: LoadedPlan; reports: StageReport[]; seconds: number }> {
  if (values.work === undefined) throw new UsageError('--redis needs --work DIR (a folder every worker can read and write)');
  const start = Date.now();
  const work = path.resolve(String(values.work));
  checkWorkFolder(work, stagedOutputs(values, positionals), positionals);
  const release = lockWork(work);
  try {
    await writePlan(work, makePlan(await spoolStdin(work, positionals)));
    const id = loadPlan(work).id;
    let reports: StageReport[];
    if (values.redis !== undefined) {
      const { submitDedup } = await import('./queue.js');
      const wait = values['redis-wait'] === undefined ? 30 : intOption('redis-wait', values['redis-wait'], 30, 1, 86_400);
      reports = await submitDedup(String(values.redis), work, values.queue === undefined ? 'neardup' : String(values.queue), wait * 1000);
    } else {
      reports = await runStagesLocally(work);
    }
    const lp = loadPlan(work);
    if (lp.id !== id) throw new NeardupError('ERR_NEARDUP_IO', `'${planPath(work)}' was replaced during the run (by a process that did not take ${path.join(work, 'LOCK')}); rerun`, { file: planPath(work) });
    return { lp, reports, seconds: (Date.now() - start) / 1000 };
  } finally {
    release();
  }
}
