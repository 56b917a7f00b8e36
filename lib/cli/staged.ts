// `neardup dedup --work DIR [--shards N] [--redis URL]`: dedup as sharded stages (lib/cli/stages.ts), run in
// this process one after the other, or submitted to BullMQ workers (lib/cli/queue.ts). Same outputs and the
// same summary as the single-process run (docs/scale.md).
import * as path from 'node:path';
import { dedupOptionsFrom } from './commands/dedup';
import { UsageError, intOption } from './common';
import { resolveDedupOptions } from '../dedup';
import { version } from '../version';
import {
  loadPlan, readClusters, runStage, stageGraph, writePlan, type LoadedPlan, type StagePlan, type StageReport,
} from './stages';

export const STAGED_OPTIONS = {
  work: { type: 'string' }, shards: { type: 'string' }, 'band-shards': { type: 'string' }, redis: { type: 'string' },
  queue: { type: 'string' }, 'redis-wait': { type: 'string' },
} as const;

export const STAGED_USAGE = `  --work DIR                run as sharded stages in DIR (docs/scale.md): the same outputs as one run
  --shards N                input-file shards of the signatures and filter stages (default 1)
  --band-shards M           band ranges of the buckets stage (default: N, at most the bands)
  --redis URL               submit the stages to 'neardup worker' processes through BullMQ on this Redis
                            (redis://host:port) and wait (needs --work on a folder the workers share)
  --queue NAME              the BullMQ queue (default neardup)
  --redis-wait SECONDS      how long a lost Redis may stay away before the run fails (default 30; then
                            rerun the same command: the stages start again, their outputs are idempotent)`;

/** The plan of a dedup command line (dedup's options, inputs and outputs). */
export function buildPlan(values: Record<string, unknown>, positionals: string[]): StagePlan {
  if (positionals.length === 0 || positionals.includes('-')) throw new UsageError('--work: the stages read file inputs, not stdin');
  if (values['id-field'] !== undefined || values['removed-ids'] !== undefined)
    throw new UsageError('--work/--redis: --id-field and --removed-ids are not supported by the staged run yet');
  const o = dedupOptionsFrom(values);
  const shards = values.shards === undefined ? 1 : intOption('shards', values.shards, 1, 1, 1 << 20);
  const res = resolveDedupOptions({ ...o.shingle, profile: o.profile, numPerm: o.numPerm, seed: o.seed, threshold: o.threshold, b: o.b, r: o.r, verify: o.verify, banding: o.banding as never, minRecall: o.minRecall });
  const bandShards = Math.min(res.b, values['band-shards'] === undefined ? shards : intOption('band-shards', values['band-shards'], 1, 1, 1 << 20));
  const abs = (v: unknown) => (v === undefined ? undefined : path.resolve(String(v)));
  const options: StagePlan['options'] = {
    ...o.shingle, profile: o.profile, numPerm: o.numPerm, threshold: o.threshold, b: o.b, r: o.r, verify: o.verify,
    clustering: o.clustering, banding: o.banding as never, minRecall: o.minRecall, memory: o.memory, tmp: path.resolve(o.tmp),
    ...(o.seed !== undefined ? { seed: String(o.seed) } : {}),
  };
  for (const k of Object.keys(options) as (keyof typeof options)[]) if (options[k] === undefined) delete options[k];
  const outputs: StagePlan['outputs'] = { flags: abs(values.flags), clusters: abs(values.clusters), pairs: abs(values.pairs), kept: abs(values.kept), keptDir: abs(values['kept-dir']) };
  for (const k of Object.keys(outputs) as (keyof typeof outputs)[]) if (outputs[k] === undefined) delete outputs[k];
  return { version: 1, neardup: version, files: positionals.map((f) => path.resolve(f)), shards, bandShards, options, input: o.input, outputs };
}

/** dedup's JSON summary for a finished staged run. */
export function stagedSummary(lp: LoadedPlan, seconds: number, reports: StageReport[]): Record<string, unknown> {
  const { summary: s } = readClusters(lp);
  const res = resolveDedupOptions({ ...lp.plan.options, seed: lp.plan.options.seed === undefined ? undefined : BigInt(lp.plan.options.seed) });
  const st = res.settings, sh = st.shingle;
  const pairsKnown = st.verify !== 'none' || lp.plan.outputs.pairs !== undefined;
  return {
    documents: s.documents, bad_lines: s.bad_lines, kept: s.documents - s.duplicates, duplicates: s.duplicates, clusters: s.clusters,
    candidate_pairs: pairsKnown ? s.candidate_pairs : null, reported_pairs: pairsKnown ? s.reported_pairs : null,
    version, profile: st.profile, threshold: st.threshold, num_perm: res.numPerm, b: res.b, r: res.r, seed: st.seed, banding: st.banding,
    shingle: {
      unit: sh.unit, n: sh.n, split: sh.split, lowercase: sh.lowercase, strip_punctuation: sh.stripPunctuation,
      fold_whitespace: sh.foldWhitespace, short: sh.short,
    },
    verify: st.verify, clustering: st.clustering, input_bytes: s.input_bytes, seconds: +seconds.toFixed(3),
    mb_per_s: +(s.input_bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
    peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1), spilled_bytes: s.spilled_bytes, runs: s.runs,
    shards: lp.plan.shards, band_shards: lp.plan.bandShards,
    stages: reports.map((r) => ({ stage: r.stage, shard: r.shard, read_bytes: r.readBytes, written_bytes: r.writtenBytes, seconds: +r.seconds.toFixed(3), cpu_seconds: +(r.cpuSeconds ?? 0).toFixed(3) })),
  };
}

/** Every stage task in order, in this process. */
export async function runStagesLocally(work: string): Promise<StageReport[]> {
  const lp = loadPlan(work);
  const reports: StageReport[] = [];
  for (const { stage, shards } of stageGraph(lp.plan)) for (let i = 0; i < shards; i++) reports.push(await runStage(work, stage, i));
  return reports;
}

export async function runStagedDedup(values: Record<string, unknown>, positionals: string[]): Promise<number> {
  if (values.work === undefined) throw new UsageError('--redis needs --work DIR (a folder every worker can read and write)');
  const start = Date.now();
  const work = path.resolve(String(values.work));
  const plan = buildPlan(values, positionals);
  await writePlan(work, plan);
  let reports: StageReport[];
  if (values.redis !== undefined) {
    const { submitDedup } = await import('./queue.js');
    const wait = values['redis-wait'] === undefined ? 30 : intOption('redis-wait', values['redis-wait'], 30, 1, 86_400);
    reports = await submitDedup(String(values.redis), work, values.queue === undefined ? 'neardup' : String(values.queue), wait * 1000);
  } else {
    reports = await runStagesLocally(work);
  }
  const summary = stagedSummary(loadPlan(work), (Date.now() - start) / 1000, reports);
  process.stdout.write(JSON.stringify(summary) + '\n');
  return 0;
}
