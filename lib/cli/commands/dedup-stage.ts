// neardup dedup-stage: one task of the sharded dedup (docs/scale.md), for any scheduler (Slurm job arrays,
// Kubernetes indexed jobs, BullMQ workers, a shell loop).
import * as path from 'node:path';
import { UsageError, parse, type Command } from '../common';
import { checkFiles } from '../../io/files';
import { DEDUP_OPTIONS, buildPlan } from './dedup';
import { checkKeptDirInputs } from '../../io/kept';
import { STAGED_OPTIONS, checkWorkFolder, lockWork, runStagesLocally, spoolStdin, stagedOutputs, stagedSummary } from '../../scale/staged';
import { STAGES, loadPlan, runStage, stageShards, writePlan, type StageName } from '../../scale/stages';

/** --shard I/N (0-based I) checked against the plan's count. */
export function parseShard(v: unknown, expected: number, stage: string): number {
  if (v === undefined) {
    if (expected === 1) return 0;
    throw new UsageError(`stage ${stage} needs --shard I/${expected}`);
  }
  const m = /^(\d+)\/(\d+)$/.exec(String(v));
  if (!m) throw new UsageError(`--shard must be I/N (0 <= I < N), got '${String(v)}'`);
  const i = Number(m[1]), n = Number(m[2]);
  if (n !== expected) throw new UsageError(`--shard ${String(v)}: the plan has ${expected} ${stage} shards`);
  if (i >= n) throw new UsageError(`--shard ${String(v)}: I must be below N`);
  return i;
}

export const dedupStageCommand: Command = {
  name: 'dedup-stage',
  usage: `Usage: neardup dedup-stage plan --work DIR [--shards N] [--band-shards M] [dedup options] FILE...
       neardup dedup-stage signatures|buckets|verify|filter --work DIR --shard I/N
       neardup dedup-stage clusters|kept --work DIR
       neardup dedup-stage run --work DIR

Runs neardup dedup as stages that read and write files in DIR (local or a shared file system); each task
is idempotent (outputs are written to a temporary name and renamed) and may run on any machine:

  plan         writes DIR/plan.json: inputs, options and outputs (dedup's options: --flags, --clusters,
               --pairs, --kept, --kept-dir, --id-field, --removed-ids, --verify, --fast, --threshold, ...;
               '-' reads standard input into DIR/stdin.input); refused while another plan or run holds DIR
  signatures   input-file shard I of N -> band keys by band range, validity, where each text is (--verify
               exact; the texts of gzip, zstd and Parquet inputs are copied, plain JSONL is read again)
  buckets      band range I of M, from every signatures shard -> candidate pairs, cut by input-file shard
  verify       the candidate pairs of input-file shard I of N (their first line), from every band range
               -> the reported pairs (verified: texts read in place, from the inputs' lines or the copies;
               an input changed since the signatures stage is an error)
  clusters     every verify shard's pairs -> each line's representative; writes --flags/--clusters/--pairs
  filter       input-file shard I of N -> its kept lines (--kept-dir files, or a part of --kept)
  kept         the filter parts -> --kept
  run          every task above in order, in this process (holding DIR's lock); prints dedup's JSON summary

The outputs equal those of 'neardup dedup' with the same options, for any N and M. Every stage prints a JSON
line: the stage, its shard, the bytes of stage files it read and wrote, its seconds and CPU seconds.

Options:
  --work DIR                the work folder (plan.json and the stage files)
  --shard I/N               the task's shard (0-based I; N must match the plan: --shards for signatures,
                            verify and filter, --band-shards for buckets)
  --shards N                plan: input-file shards (default 1)
  --band-shards M           plan: band ranges (default N, at most the number of bands)
  -h, --help                this help`,
  async run(args) {
    const stage = args[0];
    if (stage === undefined || stage === '-h' || stage === '--help') {
      // a missing sub-command is a usage error: the usage goes to stderr
      (stage === undefined ? process.stderr : process.stdout).write(this.usage + '\n');
      return stage === undefined ? 2 : 0;
    }
    if (stage === 'plan') {
      const { values, positionals } = parse(args.slice(1), { ...DEDUP_OPTIONS, ...STAGED_OPTIONS, shard: { type: 'string' } });
      if (values.work === undefined) throw new UsageError('plan needs --work DIR');
      const work = path.resolve(String(values.work));
      if ((values.kept !== undefined || values['kept-dir'] !== undefined) && positionals.includes('-'))
        throw new UsageError('--kept and --kept-dir need file inputs (they are read twice), not stdin');
      if (values.kept !== undefined && values['kept-dir'] !== undefined) throw new UsageError('give --kept or --kept-dir, not both');
      if (values['kept-dir'] !== undefined) checkKeptDirInputs(positionals);
      const outputs = stagedOutputs(values, positionals);
      checkFiles({ inputs: positionals, outputs, stdout: true });
      checkWorkFolder(work, outputs, positionals);
      const release = lockWork(work);
      try {
        const plan = buildPlan(values, await spoolStdin(work, positionals));
        await writePlan(work, plan);
        process.stdout.write(JSON.stringify({ stage: 'plan', work, files: plan.files.length, shards: plan.shards, band_shards: plan.bandShards }) + '\n');
      } finally {
        release();
      }
      return 0;
    }
    const { values, positionals } = parse(args.slice(1), { work: { type: 'string' }, shard: { type: 'string' } }, false);
    void positionals;
    if (values.work === undefined) throw new UsageError(`${stage} needs --work DIR`);
    const work = path.resolve(String(values.work));
    if (stage === 'run') {
      const start = Date.now();
      const release = lockWork(work);
      try {
        const reports = await runStagesLocally(work);
        process.stdout.write(JSON.stringify(stagedSummary(loadPlan(work), (Date.now() - start) / 1000, reports)) + '\n');
      } finally {
        release();
      }
      return 0;
    }
    if (!(STAGES as readonly string[]).includes(stage))
      throw new UsageError(`unknown stage '${stage}': plan, ${STAGES.join(', ')} or run`);
    const lp = loadPlan(work);
    const count = stageShards(lp.plan, stage as StageName);
    const shard = parseShard(values.shard, count, stage);
    const r = await runStage(work, stage as StageName, shard);
    process.stdout.write(JSON.stringify({ stage: r.stage, shard: r.shard, read_bytes: r.readBytes, written_bytes: r.writtenBytes, seconds: +r.seconds.toFixed(3), cpu_seconds: +(r.cpuSeconds ?? 0).toFixed(3) }) + '\n');
    return 0;
  },
};
