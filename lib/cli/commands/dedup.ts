// neardup dedup: keeps the first occurrence of each near-duplicate cluster of JSONL lines (MinHash LSH).
import { summaryObject } from '../summary';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { NeardupError, formatBytes } from '../../util/errors';
import { DedupSession, INDEX_REPRESENTATIVE, clusterCounts, droppedDocuments, resolveDedupOptions, MIN_LIMIT_BUDGET, dedupLimits, documentTooLarge, dedupShingleDefaults, tooManyDocuments, tooManyPairs, type DedupClustering, type DedupProfile, type DedupVerify } from '../../minhash/dedup';
import { cjkJson, normalizeJson, readIndexMeta, type DedupIndexMeta } from '../../minhash/dedup-index';
import { LshIndex } from '../../minhash/lsh';
import { lockIndexFile } from '../../io/locks';
import { killAt } from '../../util/test-hooks';
import { version } from '../../util/version';
import { readDocuments, idJson, sniffFile } from '../../io/input';
import { checkKeptDirInputs, checkOutputName, keptDirName, planParquetOutputs } from '../../io/kept';
import { Progress } from '../progress';
import { DocumentLog, writeClusterOutputs } from '../document-outputs';
import { ExactDedup } from '../../exact/exact';
import { documentMemory } from '../limits';
import { OutputFile, checkFiles, isStdout, watchSpillFolders, writeLinesTo, writeNative } from '../../io/files';
import { seedOption } from './minhash';
import { STAGED_OPTIONS, STAGED_USAGE, runStagedPlan, stagedSummary } from '../../scale/staged';
import type { StagePlan } from '../../scale/stages';
import {
  INPUT_OPTIONS, INPUT_USAGE, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, floatOption, inputOptionsFrom, intOption, oneOf,
  idFieldOption, parse, shingleOptionsFrom, type Command,
} from '../common';

export function parseSize(name: string, v: unknown): number {
  if (v === undefined) return 0;
  const m = /^(\d+(?:\.\d+)?)([kKmMgGtT]?)[bB]?$/.exec(String(v));
  if (!m) throw new UsageError(`--${name} must be a size like 512M or 2G, got '${String(v)}'`);
  const mult = { '': 1, k: 1 << 10, m: 1 << 20, g: 1 << 30, t: 2 ** 40 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.floor(Number(m[1]) * mult);
}

/** dedup's command-line options (also those of `dedup-stage plan`). */
export const DEDUP_OPTIONS = {
  ...SHINGLE_OPTIONS, ...INPUT_OPTIONS,
  kept: { type: 'string' }, flags: { type: 'string' }, clusters: { type: 'string' }, pairs: { type: 'string' },
  profile: { type: 'string' }, 'num-perm': { type: 'string' }, seed: { type: 'string' }, threshold: { type: 'string' },
  bands: { type: 'string' }, rows: { type: 'string' }, verify: { type: 'string' }, memory: { type: 'string' },
  tmp: { type: 'string' }, banding: { type: 'string' }, 'min-recall': { type: 'string' },
  fast: { type: 'boolean' }, clustering: { type: 'string' }, shingle: { type: 'string' }, 'keep-case': { type: 'boolean' },
  'kept-dir': { type: 'string' }, 'removed-ids': { type: 'string' }, 'id-field': { type: 'string' },
  removed: { type: 'string' }, 'drop-all': { type: 'boolean' }, annotate: { type: 'boolean' }, 'exact-first': { type: 'boolean' },
} as const;

/**
 * The run's options from dedup's command line (also read by `dedup-stage plan`); `defaults`: the settings of
 * an index the run is against (`--index`), in place of the built-in defaults.
 */
export function dedupOptionsFrom(values: Record<string, unknown>, defaults?: { profile?: DedupProfile; numPerm?: number }) {
  const profile = oneOf('profile', values.profile, ['fast', 'doubri-v1', 'datasketch'] as const, defaults?.profile ?? 'fast') as DedupProfile;
  if (values.fast && values.verify !== undefined && values.verify !== 'none') throw new UsageError('--fast means --verify none');
  const verify = oneOf('verify', values.verify, ['none', 'estimate', 'exact'] as const,
    values.fast || profile === 'doubri-v1' ? 'none' : 'exact') as DedupVerify;
  const clustering = oneOf('clustering', values.clustering, ['kept', 'components'] as const, 'kept') as DedupClustering;
  const banding = oneOf('banding', values.banding, ['auto', 'datasketch', 'recall'] as const, 'auto');
  const minRecall = values['min-recall'] === undefined ? undefined : floatOption('min-recall', values['min-recall'], 0.99, 0.01, 0.999999);
  const numPerm = values['num-perm'] === undefined ? undefined : intOption('num-perm', values['num-perm'], 128, 1, 65536);
  const threshold = values.threshold === undefined ? undefined : floatOption('threshold', values.threshold, 0.8, 0.01, 1);
  if ((values.bands === undefined) !== (values.rows === undefined)) throw new UsageError('give both --bands and --rows');
  if (values.bands !== undefined && threshold !== undefined && verify === 'none')
    throw new UsageError('--threshold with --bands/--rows only makes sense with --verify');
  if (values.bands !== undefined && (values.banding !== undefined || minRecall !== undefined))
    throw new UsageError('--banding/--min-recall choose (b, r): not with --bands/--rows');
  const b = values.bands === undefined ? undefined : intOption('bands', values.bands, 1, 1, 65536);
  const r = values.rows === undefined ? undefined : intOption('rows', values.rows, 1, 1, 65536);
  const seed = seedOption(values.seed, profile, numPerm ?? defaults?.numPerm ?? (profile === 'doubri-v1' ? 800 : 128));
  const memory = parseSize('memory', values.memory);
  const tmp = values.tmp === undefined ? os.tmpdir() : String(values.tmp);
  if (values.shingle !== undefined && values.unit !== undefined) throw new UsageError('give --shingle or --unit, not both');
  if (values['keep-case'] && values.lowercase) throw new UsageError('give --keep-case or --lowercase, not both');
  const shingleValues: Record<string, unknown> = { ...values };
  if (values.shingle !== undefined) shingleValues.unit = values.shingle;
  if (values['keep-case']) shingleValues.lowercase = false;
  const shingle = shingleOptionsFrom(shingleValues, dedupShingleDefaults(profile));
  const input = inputOptionsFrom(values);
  return { profile, verify, clustering, banding, minRecall, numPerm, threshold, b, r, seed, memory, tmp, shingle, input };
}

export const dedupCommand: Command = {
  name: 'dedup',
  usage: `Usage: neardup dedup [options] [FILE...]

Finds near-duplicate lines (MinHash LSH candidates, then each candidate pair checked against the threshold)
and keeps the first line of each group. FILEs are JSONL (plain, gzip or zstd) or Parquet, told by their
first bytes, read in order as one corpus ('-' or no FILE: stdin, JSONL only).

Most used (every option is below):
  --kept FILE           the kept lines (.gz/.zst compressed by name; .parquet for Parquet inputs)
  --removed FILE        the dropped lines
  --flags FILE          1 keep / 0 dropped, a line per input line
  --clusters FILE       for each line, the line it is kept for
  --pairs FILE          the near-duplicate pairs, JSONL
  --id-field NAME       name the documents by this field in every output (--removed-ids FILE: the dropped ids)
  --field NAME          the text field (default text)
  --threshold T         the Jaccard threshold (default 0.8; every reported pair is checked against it)
  --fast                no exact check of the candidates: faster, lower precision and recall
  --memory SIZE         bound the memory (e.g. 4G): spilled to --tmp DIR, same result
  --work DIR --shards N run as sharded stages (Slurm, Kubernetes, BullMQ: docs/scale.md)
Example: neardup dedup crawl-*.jsonl.zst --id-field url --kept kept.jsonl.zst --removed-ids removed.txt

Defaults (the verified answer at --threshold 0.8): char 5-grams of the lower-cased text; (b, r) chosen so
that pairs at the threshold are candidates with probability >= 0.99; exact Jaccard of every candidate pair
(the texts are kept in a temporary file in --tmp, and the shingle sets of the lines in candidate pairs built
from them); a line is dropped only for an earlier kept line it is at or
above the threshold with (doubri's rule). --fast skips the verification (today's speed, lower precision and
recall). --profile doubri-v1 defaults to doubri 1.0 exactly: the text as is, 800 values, 40 x 20 bands, no
verification (its flags equal doubri's).

Prints a JSON summary on stdout: documents, bad_lines, kept, duplicates, clusters, candidate_pairs and
reported_pairs (null when pairs were not enumerated: without --pairs, unless verified by estimate or with
--clustering components), every effective setting (version, profile, threshold,
num_perm, b, r, seed, banding, shingle {unit, n, split, lowercase, strip_punctuation, fold_whitespace,
short, and normalize when not none}, verify, clustering), input_bytes, seconds, mb_per_s, peak_rss_mb, spilled_bytes (every byte written
to temporary files), runs, pair_runs (sorted runs of candidate pairs spilled to --tmp), memory_bytes (--memory;
null without) and memory_limits_bytes (the budget the per-document limits use: --memory, but never below
64 MiB; a smaller --memory is said on stderr), drop_all and dropped (the lines dropped: duplicates, and with
--drop-all their kept lines too), then command, inputs, cpu_seconds (docs/cli.md). Progress on stderr
(--progress: a bar on a terminal, else a JSON line every 10 s). Threads: --threads N or NEARDUP_THREADS
(default: all cores).

Outputs (any of; '-' is standard output, and then the summary goes to stderr; an output that is one of
the inputs, or named for a format it is not written in (--flags x.gz, --pairs x.parquet, --kept x.xz), is
refused; each file appears complete or not at all: temporary file + rename):
  --kept FILE               the kept lines, unchanged (needs file inputs, read twice), compressed when
                            FILE ends in .gz (gzip) or .zst (zstd); bad lines (--on-bad-line skip|empty)
                            are never copied; Parquet inputs: each kept row as a JSON object, or, when
                            FILE ends in .parquet, Parquet with the inputs' schema (one for all of
                            them) and values as stored, snappy pages
  --kept-dir DIR            one kept file per input: DIR/<its base name>, compressed as the input was
                            (a Parquet input: a Parquet file of its schema); two inputs of one name are
                            refused
  --removed FILE            the dropped lines, unchanged (as --kept: file inputs, .gz/.zst/.parquet by
                            name): --kept and --removed together hold every good line once
  --flags FILE              one line per input line: 1 keep, 0 dropped
  --clusters FILE           one line per input line: the 0-based line number of the kept line it is
                            dropped for (its own number when kept); --clustering components: the first
                            line of its connected component. With --id-field: JSONL
                            {"id": ID, "kept": k, "kept_id": ID of line k}
  --pairs FILE              JSONL {"a": i, "b": j[, "a_id": ID, "b_id": ID], "estimate": x[, "exact": y]}
                            for each reported pair (i, j: 0-based lines over all inputs), by i then j;
                            candidate pairs beyond a quarter of --memory are spilled to sorted runs in
                            --tmp and merged (the summary's pair_runs), so any number of pairs is written
  --removed-ids FILE        with --id-field: the id of each dropped line, one JSON value per line
  --annotate                add to each line --kept, --kept-dir and --removed write the members
                            "neardup_cluster" (its --clusters value), "neardup_cluster_size" (the lines
                            of this run in its cluster) and, with --id-field, "neardup_kept_id" (the
                            kept line's id); Parquet outputs get them as columns
  --drop-all                drop every line of a cluster of two or more, its kept line too (only lines
                            with no near-duplicate stay): --kept, --removed, --flags and --removed-ids
                            follow; --clusters and --pairs still name the line each was matched with;
                            the summary's kept and dropped count it (not with --index/--index-out)
  --id-field NAME           the id of each line (a string or an integer; dot path as --field): a bad
                            line when missing or of another type; ids of bad lines are null
  --index-out FILE          after the other outputs: an index of the documents kept so far (those of --index
                            and this run's), for later runs' --index (docs/lsh.md, "Against an index"); it
                            may be the --index file itself, replaced once the run succeeded (not on Windows);
                            locked while the run lasts (a second run writing it meanwhile is refused)
Against earlier runs:
  --index FILE              an index written by --index-out: lines matching an indexed document are dropped
                            for it (as if this run's input followed the indexed runs' inputs). Its settings
                            are this run's: leave options out to take them; options that differ are an
                            error listing the differences. Line numbers (--clusters, --pairs) continue the
                            index's: line i of this input is number D + i, D = the lines the indexed runs
                            read (in the summary: index.documents_before); a line dropped for an indexed
                            document gets that document's number. --clustering components is refused.
                            With --id-field, --index-out keeps each document's id as its key, and
                            later runs (with --id-field) name indexed documents by id: "kept_id" and
                            "a_id" are their ids, "kept" and "a" null. An index written without
                            --id-field keeps line numbers: there the ids of indexed documents are null.
Options:
  --fast                    no verification (same as --verify none): every candidate pair counts
  --exact-first             first drop exact copies of earlier lines (a 128-bit hash of the text, as
                            'neardup exact' does, in the same read): they skip MinHash and take their
                            first copy's cluster, so the result is the same, faster when many lines are
                            copies (not with --pairs, --index, --index-out, --work, --clustering
                            components); the summary's exact_copies counts them
  --profile fast|doubri-v1|datasketch   MinHash profile (default fast); the shingling stays the same
                            (lower-cased char 5-grams) unless given; doubri-v1: see above
  --num-perm K              values per signature (default 128; doubri-v1 800)
  --seed N                  MinHash seed
  --threshold T             Jaccard threshold (default 0.8): chooses (b, r) (see --banding), and is the
                            bar of the verification
  --banding auto|datasketch|recall  how (b, r) follow from the threshold: datasketch's balanced choice,
                            or for recall (every pair >= T is a candidate with probability >=
                            --min-recall, fewest false candidates); auto (default) = recall when
                            verifying, datasketch with --fast (128 values, T 0.8: 16 x 6 / 9 x 13)
  --min-recall P            target of --banding recall (default 0.99)
  --bands B --rows R        explicit banding instead (doubri-v1 default: 40 x 20, as doubri)
  --verify exact|estimate|none  re-check candidate pairs with the exact Jaccard of the shingle sets
                            (default; doubri-v1: none), the full signature (estimate), or not at all
  --clustering kept|components  kept (default): a line is dropped only for an earlier kept line it
                            matches; components: connected components of the matches (chains can join
                            lines below the threshold)
  --memory SIZE             memory budget for band keys (e.g. 512M): beyond it, sorted runs are spilled to
                            --tmp and merged, and signatures are kept in --tmp, not in memory; exact
                            verification holds at most SIZE of shingle sets at once (default 64M); the
                            result is identical (default: band keys and signatures in memory). It also
                            bounds per-document work: a document needing more working memory than SIZE
                            (6 bytes per text byte; datasketch 20, doubri-v1 60, --verify exact 64) or
                            more than SIZE/16 documents stop with an error stating the limit (for
                            these limits SIZE is at least 64M)
  --tmp DIR                 folder for spilled runs, signatures and texts (default: the system
                            temp folder), in a folder DIR/neardup-spill-PID-XXXXXX removed at the end, on
                            error and on Ctrl-C (a killed run's folder is removed by the next run)
  -h, --help                this help
${STAGED_USAGE}
${SHINGLE_USAGE}
  --shingle word|char       same as --unit
  --keep-case               do not lower-case (the default lower-cases, except doubri-v1)
${INPUT_USAGE}`,
  async run(args) {
    const { values, positionals } = parse(args, { ...DEDUP_OPTIONS, ...STAGED_OPTIONS, index: { type: 'string' }, 'index-out': { type: 'string' } });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length === 0) positionals.push('-');
    const indexIn = values.index === undefined ? undefined : String(values.index);
    const indexOut = values['index-out'] === undefined ? undefined : String(values['index-out']);
    const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
    const keptDir = values['kept-dir'] === undefined ? undefined : String(values['kept-dir']);
    const dropAll = Boolean(values['drop-all']);
    if ((values.kept !== undefined || keptDir !== undefined || values.removed !== undefined) && positionals.includes('-'))
      throw new UsageError(`${values.removed !== undefined && values.kept === undefined && keptDir === undefined ? '--removed needs' : '--kept, --kept-dir and --removed need'} file inputs (they are read twice), not stdin`);
    if (values.annotate && values.kept === undefined && keptDir === undefined && values.removed === undefined)
      throw new UsageError('--annotate adds members to the documents --kept, --kept-dir and --removed write: give one of them');
    if (values['drop-all'] && (indexIn !== undefined || indexOut !== undefined))
      throw new UsageError('--drop-all is not possible with --index or --index-out: the documents earlier runs kept are already out, and cannot be dropped with their near-duplicates found now');
    if (values.kept !== undefined && keptDir !== undefined) throw new UsageError('give --kept or --kept-dir, not both');
    if (values['removed-ids'] !== undefined && idField === undefined) throw new UsageError('--removed-ids needs --id-field');
    if (keptDir !== undefined) checkKeptDirInputs(positionals);
    // --kept-dir's outputs, known before anything is read: named by the inputs (format by their first bytes)
    const keptDirOutputs = keptDir === undefined ? [] : positionals.map((f) => keptDirName(keptDir, f, sniffFile(f).format));
    const outputs = (['kept', 'removed', 'flags', 'clusters', 'pairs', 'removed-ids', 'index-out'] as const)
      .filter((o) => values[o] !== undefined).map((o) => ({ option: `--${o}`, file: String(values[o]) }));
    outputs.push(...keptDirOutputs.map((file) => ({ option: '--kept-dir', file })));
    const summaryToStderr = outputs.some((o) => isStdout(o.file));
    const inputs = indexIn === undefined ? positionals : [...positionals, indexIn];
    // --index X --index-out X updates X (read, then replaced atomically once everything else is written): allowed;
    // no other output may replace the index
    checkFiles({ inputs, outputs: outputs.filter((o) => o.option !== '--index-out'), stdout: !summaryToStderr });
    checkFiles({ inputs, outputs, stdout: !summaryToStderr, replaceable: indexIn === undefined ? [] : [indexIn] });
    // a name that asks for a format the output is not written in is refused; Parquet outputs need Parquet inputs
    for (const o of outputs) if (o.option !== '--index-out' && o.option !== '--kept-dir') checkOutputName(o.option, o.file, o.option === '--kept' || o.option === '--removed');
    const parquetPlan = await planParquetOutputs({ kept: values.kept as string | undefined, removed: values.removed as string | undefined, keptDir }, positionals);
    if ((indexIn !== undefined || indexOut !== undefined) && values.clustering === 'components')
      throw new UsageError('--index and --index-out work with --clustering kept only (connected components of a later run could join documents an earlier run kept)');
    if (values['exact-first']) {
      const not = (['pairs', 'index', 'index-out', 'work', 'redis'] as const).find((o) => values[o] !== undefined);
      if (not) throw new UsageError(`--exact-first is not supported with --${not} yet: run 'neardup exact' first (its --kept is this run's input)`);
      if (values.clustering === 'components') throw new UsageError("--exact-first is not supported with --clustering components yet: run 'neardup exact' first");
    }
    if (values.work !== undefined || values.redis !== undefined) {  // docs/scale.md
      if (indexIn !== undefined || indexOut !== undefined) throw new UsageError('--index and --index-out are not supported with --work/--redis: a run against an index reads, queries and updates one index in corpus order in one process, which the staged tasks (on any machine, side by side) cannot share; run dedup with --index without --work (docs/scale.md)');
      return runStagedDedup(values, positionals);
    }
    // --index-out: its writer lock first, held to the end (another run writing it is refused at once, as
    // `similar` and --work are; one that probed at the same instant runs after this one and reads its index)
    const indexLock = indexOut === undefined ? null : lockIndexFile(indexOut, '--index-out: the index');
    try {
      return await runAgainstIndex(indexLock !== null);
    } finally {
      indexLock?.release();
    }
    async function runAgainstIndex(locked: boolean): Promise<number> {
      // against an index: loaded first (its settings are the defaults of every option below)
      let prior: LshIndex<bigint | string> | undefined;
      let priorMeta: DedupIndexMeta | undefined;
      if (indexIn !== undefined) {
        prior = await LshIndex.loadAsync<bigint | string>(indexIn);
        try {
          priorMeta = readIndexMeta(prior);
        } catch (e) {
          prior.close();
          if (e instanceof NeardupError && e.code === 'ERR_NEARDUP_CORRUPT') throw e;  // names the file
          throw new UsageError(`--index '${indexIn}': ${(e as Error).message}`);
        }
        if (priorMeta.keys === 'id' && (priorMeta.id_text !== 'json' || idField === undefined)) {
          prior.close();
          throw new UsageError(`--index '${indexIn}': its keys are document ids` + (priorMeta.id_text !== 'json'
            ? ' given through the API (DedupSession.add), not --id-field values: this command cannot name its documents'
            : ' (it was written with --id-field): give --id-field, naming each line\'s id as its runs did'));
        }
        if (priorMeta.keys === 'number' && idField !== undefined)
          process.stderr.write(`neardup dedup: --index '${indexIn}' keeps line numbers (it was written without --id-field): ids of its documents ("kept_id", "a_id") are null\n`);
      }
      // with --id-field, an index written keeps the ids (their JSON text) as its keys, so that later runs name
      // the documents it holds; an index read keeps its own kind of keys
      const idKeys = priorMeta ? priorMeta.keys === 'id' : indexOut !== undefined && idField !== undefined;
      const ps = priorMeta?.settings;
      const { profile, verify, clustering, banding, minRecall, numPerm, threshold, b, r, seed, memory, tmp, shingle, input } =
        dedupOptionsFrom(values, ps && { profile: ps.profile as DedupProfile, numPerm: ps.num_perm });
      if (outputs.length === 0 || (outputs.length === 1 && indexOut !== undefined))
        process.stderr.write('neardup dedup: no output requested (--kept, --kept-dir, --flags, --clusters, --pairs); printing the summary only\n');
      if (memory > 0 && memory < MIN_LIMIT_BUDGET)
        process.stderr.write(`neardup dedup: --memory ${formatBytes(memory)} is below ${formatBytes(MIN_LIMIT_BUDGET)}: band keys and signatures ` +
          `spill at ${formatBytes(memory)}, but the limits on one document, the document count and the pairs are those of ${formatBytes(MIN_LIMIT_BUDGET)} ` +
          '(the summary\'s memory_limits_bytes)\n');

      const start = Date.now();
      // spill folders: runs and signatures (--memory), shingle sets (--verify exact), texts of the index written
      const unwatch = memory > 0 || verify === 'exact' || prior || indexOut || values.pairs !== undefined || clustering === 'components' || verify === 'estimate'
        ? watchSpillFolders(tmp) : () => undefined;
      // with --index, only the options given (the others are the index's); a difference is a usage error
      const givenShingle = Object.fromEntries(Object.entries(shingle).filter(([k]) => ({
        unit: values.unit ?? values.shingle, n: values.ngram, split: values.split, lowercase: values.lowercase ?? values['keep-case'],
        stripPunctuation: values['strip-punctuation'], foldWhitespace: values['fold-whitespace'], short: values.short,
        normalize: values.normalize, cjk: values.cjk,
      } as Record<string, unknown>)[k] !== undefined));
      let session: DedupSession;
      try {
        session = new DedupSession({
          ...(prior ? {
            ...givenShingle, profile: values.profile === undefined ? undefined : profile, numPerm, seed, threshold, b, r,
            verify: values.fast || values.verify !== undefined ? verify : undefined, clustering: values.clustering === undefined ? undefined : clustering,
            banding: values.banding === undefined ? undefined : banding, minRecall, index: prior,
          } : { ...shingle, profile, numPerm, seed, threshold, b, r, verify, clustering, banding, minRecall }),
          pairs: values.pairs !== undefined, memory, tmp, indexOut: indexOut !== undefined,
          ...(idKeys ? { indexKeys: 'id', indexIdText: 'json' } : {}),
          // --pairs: every pair is written, streamed from a temporary file (candidates beyond a quarter of
          // --memory are spilled to sorted runs in --tmp and merged)
          pairsFile: true,
        });
      } catch (e) {
        unwatch();
        prior?.close();
        if (e instanceof RangeError && prior) throw new UsageError(`--index '${indexIn}': ${e.message}`);
        throw e;
      }
      const effective = { profile: session.settings.profile, verify: session.settings.verify, memory };
      const offset = priorMeta?.documents ?? 0;  // line numbers continue the index's
      const progress = new Progress('neardup dedup');
      let docs = 0, bytes = 0;
      const log = new DocumentLog(positionals);  // where each input's documents, bad lines and ids are
      const exactFirst = values['exact-first'] ? new ExactDedup({}) : undefined;
      const exactReps: Uint32Array[] = [];
      const open: { abort(): void }[] = [];
      const create = (file: unknown) => {
        const f = OutputFile.open(String(file));
        open.push(f);
        return f;
      };
      // NEARDUP_DEDUP_TIMING=1 (bench/scale.ts): CPU and wall seconds of each phase, on stderr
      let last = { cpu: process.cpuUsage(), wall: Date.now() };
      const phase = (name: string) => {
        if (!process.env.NEARDUP_DEDUP_TIMING) return;
        const c = process.cpuUsage(last.cpu), now = Date.now();
        process.stderr.write(JSON.stringify({ phase: name, cpu_seconds: (c.user + c.system) / 1e6, seconds: (now - last.wall) / 1000 }) + '\n');
        last = { cpu: process.cpuUsage(), wall: now };
      };
      try {
        // the next batch is read and parsed (native pool) while the pool signs and indexes the previous ones
        const pending: Promise<void>[] = [];
        const limits = dedupLimits(effective);
        for await (const batch of readDocuments(positionals, {
          // --memory also bounds what one input unit (a line, a Parquet page or column chunk) may take decoded
          // (budgets under 64 MiB count as 64 MiB, as for the per-document limits)
          ...input, idField, ...(memory > 0 ? { memoryLimit: Math.min(Math.max(memory, MIN_LIMIT_BUDGET), documentMemory()) } : {}), onProgress: (n, fraction) => { bytes = n; progress.update({ bytes: n, docs, fraction }); },
        })) {
          if (docs + batch.count > limits.documents) throw tooManyDocuments(docs + batch.count, { memory });
          const off = batch.packed.offsets;
          if (limits.documentBytes !== Infinity) {
            for (let i = 0; i < batch.count; i++) {
              const n = off[i + 1] - off[i];
              if (n > limits.documentBytes) throw documentTooLarge(`${batch.file === '-' ? '<stdin>' : batch.file}:${batch.firstLine + i}: `, n, effective);
            }
          }
          // the index written takes each document's id as its key (bad lines, null ids, never enter it)
          const keys = idKeys && indexOut !== undefined ? Array.from({ length: batch.count }, (_, i) => idJson(batch.ids!, i)) : undefined;
          // --exact-first: exact copies of an earlier line are left out of MinHash (they take their first copy's cluster)
          let valid = batch.valid;
          if (exactFirst) {
            const er = await exactFirst.add(batch.packed, batch.valid);
            exactReps.push(er);
            valid = new Uint8Array(batch.count);
            for (let i = 0; i < batch.count; i++) valid[i] = (batch.valid ? batch.valid[i] : 1) && er[i] === docs + i ? 1 : 0;
          }
          const p = session.addEncoded(Promise.resolve({ packed: batch.packed, valid, count: batch.count, bytes: off[batch.count] }), keys);
          p.catch(() => undefined);  // awaited below
          pending.push(p);
          log.record(batch);
          docs += batch.count;
          if (pending.length >= 2) await pending.shift();
        }
        await Promise.all(pending);
        phase('read+sign');
        log.end();  // files without documents
        progress.update({ bytes, docs, extra: 'clustering' }, true);
        const res = await session.finish().catch((e) => {
          throw e instanceof NeardupError && e.code === 'ERR_NEARDUP_TOO_MANY_RESULTS' ? tooManyPairs({ memory }) : e;
        });
        phase('finish');
        const rep = res.representative;
        let exactCopies = 0;
        if (exactFirst) exactCopies = joinExactCopies(rep, exactReps, res);
        // 1: dropped (for another document; with --drop-all, also every kept document of a cluster of two or more)
        const dropped = droppedDocuments(rep, dropAll);
        let droppedCount = 0;
        for (let i = 0; i < dropped.length; i++) droppedCount += dropped[i];
        // lines dropped for an indexed document: that document's key, its number or its id (JSON text)
        const indexRep = new Map<number, string>();
        if (res.indexMatches) res.indexMatches.docs.forEach((d, i) => indexRep.set(d, String(res.indexMatches!.keys[i])));
        // an indexed document as "kept"/"a" (its number; null under id keys) and as "kept_id"/"a_id" (its id; null under number keys)
        const indexNumber = (key: string): string => (idKeys ? 'null' : key);
        const indexId = (key: string): string => (idKeys ? key : 'null');
        const idOf = (d: number): string => log.idOf(d);
        const writeLines = (file: unknown, n: number, line: (i: number) => string) => writeLinesTo(create(file), n, line);
        // line numbers continue the index's; a line dropped for an indexed document gets that document's number
        const repNumber = (i: number): string => (rep[i] === INDEX_REPRESENTATIVE ? indexNumber(indexRep.get(i)!) : String(offset + rep[i]));
        if (values.pairs !== undefined) {
          const ip = res.indexPairs;
          const pairs = readPairRecords(res.pairsFile);
          const local = pairs.count;
          const withExact = res.settings.verify === 'exact';
          await writeLines(values.pairs, local + (ip ? ip.docs.length : 0), (i) => {
            let a: string, aId: string, bDoc: number, est: number, ex: number;
            if (i < local) {
              const k = pairs.at(i);
              a = String(offset + pairs.a[k]); aId = idField === undefined ? '' : idOf(pairs.a[k]);
              bDoc = pairs.b[k]; est = pairs.estimate[k]; ex = pairs.exact[k];
            } else {
              const key = String(ip!.keys[i - local]);
              a = indexNumber(key); aId = indexId(key); bDoc = ip!.docs[i - local]; est = ip!.estimate[i - local]; ex = ip!.exact[i - local];
            }
            const b = offset + bDoc;
            const exact = withExact ? `, "exact": ${+ex.toFixed(6)}` : '';
            const ids = idField === undefined ? '' : `, "a_id": ${aId}, "b_id": ${idOf(bDoc)}`;
            return `{"a": ${a}, "b": ${b}${ids}, "estimate": ${+est.toFixed(6)}${exact}}\n`;
          });
          pairs.close();
        }
        await writeClusterOutputs(log, rep, dropped, {
          flags: values.flags as string | undefined, clusters: values.clusters as string | undefined, removedIds: values['removed-ids'] as string | undefined,
          kept: values.kept as string | undefined, keptDir, removed: values.removed as string | undefined, annotate: Boolean(values.annotate), idField, parquetPlan,
        }, open, {
          repNumber, keptId: (d) => (rep[d] === INDEX_REPRESENTATIVE ? indexId(indexRep.get(d)!) : idOf(rep[d])), indexKey: (d) => indexRep.get(d)!,
        });
        phase('outputs');
        // the index last: a run whose outputs failed leaves the earlier index as it was, so it can simply be re-run
        let entriesAfter: number | null = null;
        if (indexOut !== undefined) {
          progress.update({ bytes, docs, extra: 'writing the index' }, true);
          // written by the addon (signals remove its temporary file; '-' and devices are staged and copied)
          await writeNative(indexOut, async (p) => {
            killAt('dedup-index-write');
            ({ entries: entriesAfter } = await session.saveIndex(p, {
              locked,
              describe: (d) => log.describe(d),
            }));
          });
          killAt('dedup-index-renamed');
        }
        progress.done({ bytes, docs, fraction: 1 });
        const seconds = (Date.now() - start) / 1000;
        // Pairs are enumerated only when they are written, or verified by estimate or for connected components;
        // otherwise clusters come straight from the band buckets (the verified keep rule checks each document
        // against kept ones only) and the pair counts are unknown (null), not zero.
        const pairsKnown = values.pairs !== undefined || (res.settings.verify !== 'none' && (res.settings.verify === 'estimate' || res.settings.clustering === 'components'));
        const st = res.settings, sh = st.shingle;
        const summary = {
          documents: docs, bad_lines: log.bad, kept: docs - droppedCount, duplicates: res.duplicates, clusters: res.clusters,
          drop_all: dropAll, dropped: droppedCount, ...(exactFirst ? { exact_first: true, exact_copies: exactCopies } : {}),
          candidate_pairs: pairsKnown ? res.candidatePairs : null, reported_pairs: pairsKnown ? res.keptPairs : null,
          version, profile: st.profile, threshold: st.threshold, num_perm: res.numPerm, b: res.b, r: res.r, seed: st.seed, banding: st.banding,
          shingle: {
            unit: sh.unit, n: sh.n, split: sh.split, lowercase: sh.lowercase, strip_punctuation: sh.stripPunctuation,
            fold_whitespace: sh.foldWhitespace, short: sh.short, ...normalizeJson(sh.normalize), ...cjkJson(sh.split, sh.cjk),
          },
          verify: st.verify, clustering: st.clustering, input_bytes: bytes, seconds: +seconds.toFixed(3), mb_per_s: +(bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
          peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1), spilled_bytes: res.spilledBytes, runs: res.runs, pair_runs: res.pairRuns,
          // --memory as given, and the budget its per-document limits use (never below MIN_LIMIT_BUDGET); null without
          memory_bytes: memory > 0 ? memory : null, memory_limits_bytes: memory > 0 ? Math.max(memory, MIN_LIMIT_BUDGET) : null,
          ...(prior || indexOut !== undefined ? {
            index: {
              read: indexIn ?? null, written: indexOut ?? null, keys: idKeys ? 'id' : 'number', documents_before: offset, entries_before: prior ? prior.size : 0,
              matched: res.indexMatches?.docs.length ?? 0,
              entries_after: entriesAfter,
            },
          } : {}),
        };
        (summaryToStderr ? process.stderr : process.stdout).write(JSON.stringify(summaryObject({ command: 'dedup', inputs: positionals, documents: docs }, summary)) + '\n');
        return 0;
      } finally {
        for (const f of open) f.abort();  // no-op for committed ones
        session.close();
        exactFirst?.close();
        prior?.close();
        unwatch();
      }
    }
  },
};

/**
 * --exact-first: the exact copies (left out of MinHash) join their first copy's cluster. A line identical to
 * an earlier one has Jaccard 1 with it, so a run without --exact-first gives it the same representative
 * (the first earlier kept line it matches is the one its first copy was given, or that copy itself).
 * Corrects the counts; returns the exact copies.
 */
function joinExactCopies(rep: Uint32Array, exactReps: Uint32Array[], res: { duplicates: number; clusters: number }): number {
  let d = 0, copies = 0;
  for (const er of exactReps) {
    for (let i = 0; i < er.length; i++, d++) {
      if (er[i] !== d) {
        rep[d] = rep[er[i]];
        copies++;
      }
    }
  }
  Object.assign(res, clusterCounts(rep));
  return copies;
}

// ---------------------------------------------------------------------------------------------------------
// --work: dedup as sharded stages (lib/scale/staged.ts, lib/scale/stages.ts; docs/scale.md)

/** The plan of a dedup command line (dedup's options, inputs and outputs; stdin already spooled). */
export function buildPlan(values: Record<string, unknown>, positionals: string[]): StagePlan {
  if (positionals.length === 0) throw new UsageError('--work: give the input files (or - for standard input)');
  if (positionals.includes('-')) throw new UsageError('--work: standard input is read once, before the plan');
  if (values['removed-ids'] !== undefined && values['id-field'] === undefined) throw new UsageError('--removed-ids needs --id-field');
  const o = dedupOptionsFrom(values);
  const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
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
  const outputs: StagePlan['outputs'] = {
    flags: abs(values.flags), clusters: abs(values.clusters), pairs: abs(values.pairs), kept: abs(values.kept), keptDir: abs(values['kept-dir']),
    removedIds: abs(values['removed-ids']), removed: abs(values.removed),
  };
  for (const k of Object.keys(outputs) as (keyof typeof outputs)[]) if (outputs[k] === undefined) delete outputs[k];
  return {
    version: 1, neardup: version, files: positionals.map((f) => path.resolve(f)), shards, bandShards, options,
    input: { ...o.input, ...(idField !== undefined ? { idField } : {}) }, outputs, ...(values['drop-all'] ? { dropAll: true } : {}),
    ...(values.annotate ? { annotate: true } : {}),
  };
}

export async function runStagedDedup(values: Record<string, unknown>, positionals: string[]): Promise<number> {
  const { lp, reports, seconds } = await runStagedPlan(values, positionals, (files) => buildPlan(values, files));
  const summary = stagedSummary(lp, seconds, reports);
  process.stdout.write(JSON.stringify(summaryObject({ command: 'dedup', inputs: positionals, documents: summary.documents as number }, summary)) + '\n');
  return 0;
}

/**
 * The reported pairs' file of a dedup session (DedupResult.pairsFile: 16-byte records u32 a, u32 b, f32 estimate,
 * f32 exact, little-endian), read in order in chunks of 64 Ki records: at(i) loads the chunk holding record i
 * and returns its index in a / b / estimate / exact.
 */
function readPairRecords(file: string | undefined): {
  count: number; at(i: number): number; a: Uint32Array; b: Uint32Array; estimate: Float32Array; exact: Float32Array; close(): void;
} {
  const CHUNK = 1 << 16, RECORD = 16;
  const fd = file === undefined ? -1 : fs.openSync(file, 'r');
  const count = fd < 0 ? 0 : Math.floor(fs.fstatSync(fd).size / RECORD);
  const buf = new ArrayBuffer(CHUNK * RECORD);
  const u32 = new Uint32Array(buf), f32 = new Float32Array(buf);
  const a = new Uint32Array(CHUNK), b = new Uint32Array(CHUNK), estimate = new Float32Array(CHUNK), exact = new Float32Array(CHUNK);
  let first = -1;
  return {
    count, a, b, estimate, exact,
    at(i: number): number {
      const start = i - (i % CHUNK);
      if (start !== first) {
        const n = Math.min(CHUNK, count - start);
        const bytes = new Uint8Array(buf, 0, n * RECORD);
        for (let got = 0; got < bytes.length;) {
          const k = fs.readSync(fd, bytes, got, bytes.length - got, start * RECORD + got);
          if (k === 0) throw new Error(`the pairs file '${file}' ended early`);
          got += k;
        }
        for (let j = 0; j < n; j++) {
          a[j] = u32[4 * j]; b[j] = u32[4 * j + 1]; estimate[j] = f32[4 * j + 2]; exact[j] = f32[4 * j + 3];
        }
        first = start;
      }
      return i - start;
    },
    close(): void { if (fd >= 0) fs.closeSync(fd); },
  };
}
