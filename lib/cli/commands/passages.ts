// neardup passages index|extract|query|pairs: shared passages between documents (JSONL in, JSONL out).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassageIndex, extractMemory, idJsonText } from '../../postings/passages';
import { defaultBuildMemory, memorySplit } from '../../postings/postings';
import { checkInputFiles, inputSize } from '../../io/input';
import { Output, UsageError, didYouMean, floatOption, intOption, oneOf, parse, usageErrorText, type Command } from '../common';
import { finishPassages, loadPassagesPlan, planPassages, readPassageDocs as readDocs, runPassagesLists, runPassagesPart } from '../../scale/passages-stages';
import { checkFiles, checkOutsideWork, makeSpillDir, removeSpillDir, watchSpillFolders } from '../../io/files';
import { Progress } from '../progress';
import { writeSummary } from '../summary';
import { parseSize } from './dupi';
import { documentOverLimit, memoryDocumentLimit, type DocumentLimit } from '../limits';

// The pairs' lines are written into one buffer of this size, reused chunk after chunk (within the reserve of
// extractMemory for the output).
const PAIRS_OUTPUT_BYTES = 4 << 20;

const INPUT_HELP = `Input: JSONL (plain, gzip or zstd; '-' or nothing for stdin) or Parquet, one document per line (row).
  --field NAME        the text field (default text; a dot path names a nested member: meta.content)
  --id-field NAME     the id field, a string or an integer (default: "FILE:LINE")
  --on-bad-line error|skip|empty  a malformed line stops the run (default), or is an empty document`;

const USAGE = `Usage: neardup passages <index|extract|query|pairs|stage> ...

Passages shared between documents: windows of words ("blots", hashed with an order-sensitive hash by
default) are indexed, and consecutive shared windows are merged into passages.

  index    build an index folder DIR of documents, or add documents to it (also as sharded stages)
  extract  the passages shared by the most documents, most first
  query    for each input document, the indexed documents sharing passages with it
  pairs    every pair of indexed documents sharing passages
  stage    one task of a sharded index build (plan, part, lists, finish), for Slurm or Kubernetes

Run 'neardup passages <verb> --help' for each one's options.`;

const INDEX_USAGE = `Usage: neardup passages index -o DIR [--bits 64|32] [options] [FILE...]
       neardup passages index -o DIR --work W --shards N [--key-ranges K] [--redis URL] [options] FILE...

Builds DIR, or adds the documents to it (new ids); prints a JSON summary on stderr (docs/cli.md).
${INPUT_HELP}
Options:
  -o DIR              the index folder (created when missing)
  --window N          words per window (default 10; fixed when DIR is created)
  --hash ordered|xor  the window hash (default ordered; fixed when DIR is created)
  --bits 64|32        bits of a blot (fixed when DIR is created): 64 by default, exact in practice; 32, the
                      seed tool's width, a smaller index, but among n distinct windows ~n^2/2^33 pairs
                      share a blot and are taken as equal: ~470 at 2 M distinct windows, ~2.6 M per GB of
                      text; a DIR written before 64-bit blots has 32
  --memory SIZE       caps the build: input batches and (blot, doc) pairs, spilled to sorted runs beyond;
                      default twice the input, between 64M and 1G; the index does not depend on it
  --tmp DIR           spill files (default: DIR/postings)
  --no-merge          keep the new segment apart
Sharded (docs/scale.md):
  --shards N --work W the build as N parts (the input files cut into N contiguous shards), each indexed on
                      its own into W/part-I, then put together in DIR: the index a single run writes, file
                      for file
  --key-ranges K      the parts' posting lists merged as K key ranges, each by a task of its own
                      (W/lists-R.pst); finish copies the texts and the ranges' lists into DIR; with 0,
                      finish merges the lists itself. Default: 0 without --redis (the tasks run here one
                      after another), N with --redis
  --redis URL         run the tasks on 'neardup worker' processes through BullMQ (--queue NAME, default
                      neardup; --redis-wait SECONDS, default 30). Under Slurm or Kubernetes use
                      'neardup passages stage' instead`;

const STAGE_USAGE = `Usage: neardup passages stage plan -o DIR --work W --shards N [--key-ranges K] [options] FILE...
       neardup passages stage part --work W --shard I/N
       neardup passages stage lists --work W --shard R/K
       neardup passages stage finish --work W [--no-merge]

A sharded 'passages index' as separate tasks, for Slurm or Kubernetes (docs/scale.md): plan, then part I/N
for every I, then lists R/K for every R (each stage's tasks in any order, on any machine sharing W and the
inputs), then finish. Each prints one JSON line on stdout.
  plan     writes W/passages-plan.json: the inputs, DIR and the options of 'passages index' (--window,
           --hash, --bits, --memory, --tmp, --field, --id-field, --on-bad-line); --key-ranges K (default N)
  part     indexes input shard I of N into W/part-I
  lists    merges key range R of K of the parts' posting lists into W/lists-R.pst
  finish   puts the parts (and ranges) together in DIR; --no-merge keeps the new segment apart`;

const EXTRACT_USAGE = `Usage: neardup passages extract DIR [--sigma S] [--min-docs N] [--limit N] [--memory SIZE] [--tmp DIR]

Prints the passages shared by the most documents first, one JSON line each:
{"blot","count","windows","docs":[{"id","begin","end","text"}]}: maximal runs of consecutive windows held by
the same documents (byte ranges and text in each document's UTF-8 text), each window by at least
max(--min-docs, round(mean + S*sd)) documents (dupi's cut-off).
Options:
  --sigma S       default 2
  --min-docs N    default 2
  --limit N       the first N passages only
  --memory SIZE   caps the records held (sorted runs spill into --tmp; the output does not depend on it);
                  default twice the indexed text, between 64M and 1G
  --tmp DIR       spill files (default: the system's temporary folder)`;

const QUERY_USAGE = `Usage: neardup passages query DIR [--min-shared N] [--max-docs M] [options] [FILE...]

For each input document, one JSON line: {"id","matches":[{"id","passages","windows","spans":[{"windows",
"query":[b,e],"doc":[b,e],"text"}]}]}: the indexed documents sharing at least --min-shared passages
(maximal runs of equal consecutive windows), most shared windows first.
${INPUT_HELP}
Options:
  --min-shared N  default 1
  --max-docs M    windows held by more than M documents do not nominate documents (default 1000)`;

const PAIRS_USAGE = `Usage: neardup passages pairs DIR [--min-shared N] [--max-docs M] [--memory SIZE] [--tmp DIR]

Every pair of indexed documents sharing at least --min-shared passages, most first, one JSON line each:
{"a","b","passages","windows","coverA","coverB"} (cover = fraction of the document's bytes inside the
passages).
Options:
  --min-shared N  default 1
  --max-docs M    windows held by more than M documents neither nominate documents nor join passages
                  (default 1000)
  --memory SIZE   caps the records held (sorted runs spill into --tmp; the output does not depend on it);
                  default twice the indexed text, between 64M and 1G
  --tmp DIR       spill files (default: the system's temporary folder)`;

/**
 * Refuses, before any work, an index whose largest document needs more working memory than `limit` allows
 * (pairs and query hold one document's windows at a time, whatever the cap on their records).
 */
function checkIndexedDocuments(dir: string, ix: PassageIndex, limit: DocumentLimit): void {
  const big = ix.largestDocument();
  if (big && big.bytes > limit.bytes) throw documentOverLimit(`${dir}: the indexed document ${idJsonText(big.id)}`, big.bytes, limit, { file: dir });
}

/**
 * passages extract|pairs: the index's JSON lines, streamed to stdout with their spill folder watched (--tmp)
 * and memory capped (--memory, default twice the indexed text), progress counting the lines written. Each
 * chunk is written before the next is asked for (pairs reuses its buffer).
 */
async function writeIndexLines(dir: string, values: Record<string, unknown>, verb: string, unit: string,
  lines: (ix: PassageIndex, memory: ReturnType<typeof extractMemory>, tmp: string) => AsyncIterable<Uint8Array>): Promise<number> {
  const out = new Output();
  const ix = await PassageIndex.open(dir);
  const tmp = typeof values.tmp === 'string' ? values.tmp : os.tmpdir();
  const unwatch = watchSpillFolders(tmp);
  const progress = new Progress(`neardup passages ${verb}`);
  try {
    const memory = values.memory === undefined ? defaultBuildMemory(ix.textBytes) : parseSize(String(values.memory));
    if (verb === 'pairs') checkIndexedDocuments(dir, ix, memoryDocumentLimit('passages pairs', values.memory === undefined ? undefined : memory));
    let written = 0;
    for await (const b of lines(ix, extractMemory(memory, ix.size), tmp)) {
      written += countLines(b);
      await out.writeBytes(b);
      progress.update({ written, extra: unit });
    }
    progress.done({ written, extra: unit });
  } finally {
    progress.done();
    ix.close();
    unwatch();
  }
  await out.flush();
  return 0;
}

/** The lines in a chunk of JSONL output. */
function countLines(b: Uint8Array): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i >= 0; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
}

/** Every page, for tests and for 'neardup passages <verb> --help'. */
export const PASSAGES_HELP = { index: INDEX_USAGE, stage: STAGE_USAGE, extract: EXTRACT_USAGE, query: QUERY_USAGE, pairs: PAIRS_USAGE } as const;

const INPUT = {
  field: { type: 'string' as const },
  'id-field': { type: 'string' as const },
  'on-bad-line': { type: 'string' as const },
};

/** Queries per native call of `passages query` (they share the call's cache of the nominated documents' windows). */
const QUERY_GROUP = 16;

const SHARDED = {
  work: { type: 'string' as const }, shards: { type: 'string' as const }, 'key-ranges': { type: 'string' as const },
  redis: { type: 'string' as const }, queue: { type: 'string' as const }, 'redis-wait': { type: 'string' as const },
};

/** --bits 64|32 (undefined: not given). */
function bitsOption(v: unknown): 32 | 64 | undefined {
  if (v === undefined) return undefined;
  const b = intOption('bits', v as string, 64, 32, 64);
  if (b !== 32 && b !== 64) throw new UsageError(`--bits must be 64 or 32, got ${b}`);
  return b;
}

/** A sharded build's plan (WORK/passages-plan.json) from the options of `index` or `stage plan`. */
function planFrom(values: Record<string, unknown>, files: string[]) {
  if (typeof values.output !== 'string') throw new UsageError('-o DIR is required');
  if (typeof values.work !== 'string') throw new UsageError('--work DIR is required');
  checkOutsideWork(values.work, '-o', values.output);
  const input: Record<string, string> = {};  // field, id-field, on-bad-line
  for (const k of Object.keys(INPUT)) if (typeof values[k] === 'string') input[k] = values[k] as string;
  const shards = intOption('shards', values.shards, 1, 1, 65536);
  // default: a key range per part where the tasks run apart (--redis, the stage commands); none for a local run,
  // where the ranges would only add their copy to the same merge
  const local = values.stage !== true && values.redis === undefined;
  const keyRanges = intOption('key-ranges', values['key-ranges'], local ? 0 : shards, 0, 65536);
  const memory = values.memory === undefined ? undefined : parseSize(String(values.memory));
  return planPassages(values.work, values.output, files, shards, {
    keyRanges: keyRanges === 0 ? undefined : keyRanges,
    seqLen: values.window === undefined ? undefined : intOption('window', values.window, 10, 1, 1000),
    hash: values.hash === undefined ? undefined : oneOf('hash', values.hash, ['ordered', 'xor'] as const, 'ordered'),
    bits: bitsOption(values.bits),
    input, tmp: values.tmp as string | undefined, memory,
    // each part's largest document: of its --memory, else of the document memory where the plan is made
    documentLimit: memoryDocumentLimit('passages index', memory),
  });
}

/** neardup passages stage plan|part|finish: one task of a sharded build; prints one JSON line. */
async function runStageCommand(args: string[]): Promise<number> {
  const [stage, ...rest] = args;
  if (stage === undefined || stage === '-h' || stage === '--help') {
    // a missing sub-command is a usage error: the usage goes to stderr
    (stage === undefined ? process.stderr : process.stdout).write(STAGE_USAGE + '\n');
    return stage === undefined ? 2 : 0;
  }
  if (stage === 'plan') {
    const r = parse(rest, {
      ...INPUT, output: { type: 'string', short: 'o' }, window: { type: 'string' }, hash: { type: 'string' }, bits: { type: 'string' },
      memory: { type: 'string' }, tmp: { type: 'string' }, work: { type: 'string' }, shards: { type: 'string' },
      'key-ranges': { type: 'string' },
    });
    if (r.values.help) return (process.stdout.write(STAGE_USAGE + '\n'), 0);
    const plan = await planFrom({ ...r.values, stage: true }, r.positionals);
    process.stdout.write(JSON.stringify({ stage: 'plan', work: path.resolve(String(r.values.work)), dir: plan.dir, files: plan.files.length, shards: plan.shards, key_ranges: plan.keyRanges ?? 0 }) + '\n');
    return 0;
  }
  if (stage === 'part' || stage === 'lists') {
    const r = parse(rest, { work: { type: 'string' }, shard: { type: 'string' } });
    if (r.values.help) return (process.stdout.write(STAGE_USAGE + '\n'), 0);
    if (typeof r.values.work !== 'string') throw new UsageError('--work DIR is required');
    const m = /^(\d+)\/(\d+)$/.exec(String(r.values.shard ?? ''));
    if (!m) throw new UsageError(`--shard must be I/N (0 <= I < N), got '${String(r.values.shard ?? '')}'`);
    const plan = loadPassagesPlan(r.values.work);
    const count = stage === 'part' ? plan.shards : plan.keyRanges;
    if (count === undefined) throw new UsageError(`the plan has no key ranges (planned with --key-ranges 0): run finish after the parts`);
    if (Number(m[2]) !== count) throw new UsageError(`--shard ${m[0]}: the plan has ${count} ${stage === 'part' ? 'shards' : 'key ranges'}`);
    if (Number(m[1]) >= count) throw new UsageError(`--shard ${m[0]}: I must be below N`);
    const report = stage === 'part' ? await runPassagesPart(r.values.work, Number(m[1])) : await runPassagesLists(r.values.work, Number(m[1]));
    process.stdout.write(JSON.stringify(report) + '\n');
    return 0;
  }
  if (stage === 'finish') {
    const r = parse(rest, { work: { type: 'string' }, 'no-merge': { type: 'boolean' } });
    if (r.values.help) return (process.stdout.write(STAGE_USAGE + '\n'), 0);
    if (typeof r.values.work !== 'string') throw new UsageError('--work DIR is required');
    const documents = await finishPassages(r.values.work, { noMerge: r.values['no-merge'] === true });
    process.stdout.write(JSON.stringify({ stage: 'finish', dir: loadPassagesPlan(r.values.work).dir, documents }) + '\n');
    return 0;
  }
  throw new UsageError(`unknown stage '${String(stage)}'${didYouMean(String(stage), ['plan', 'part', 'lists', 'finish'])} (plan, part, lists or finish)`);
}

export const passagesCommand: Command = {
  name: 'passages',
  usage: USAGE,
  async run(args) {
    const [verb, ...rest] = args;
    if (verb === undefined || verb === '-h' || verb === '--help') {
      // a missing sub-command is a usage error: the usage goes to stderr
      (verb === undefined ? process.stderr : process.stdout).write(USAGE + '\n');
      return verb === undefined ? 2 : 0;
    }
    try {
      return await runVerb(verb, rest);
    } catch (e) {
      if (e instanceof UsageError && ['index', 'extract', 'query', 'pairs', 'stage'].includes(verb)) {
        process.stderr.write(usageErrorText(`neardup passages ${verb}`, e));
        return 2;
      }
      throw e;
    }
  },
};

async function runVerb(verb: string, rest: string[]): Promise<number> {
  const out = new Output();
  if (verb === 'index') {
    const r = parse(rest, {
      ...INPUT, output: { type: 'string', short: 'o' }, window: { type: 'string' }, hash: { type: 'string' }, bits: { type: 'string' },
      memory: { type: 'string' }, tmp: { type: 'string' }, 'no-merge': { type: 'boolean' }, ...SHARDED,
    });
    if (r.values.help) return (process.stdout.write(INDEX_USAGE + '\n'), 0);
    if (typeof r.values.output !== 'string') throw new UsageError('-o DIR is required');
    const seqLen = r.values.window === undefined ? undefined : intOption('window', r.values.window, 10, 1, 1000);
    const hash = r.values.hash === undefined ? undefined : oneOf('hash', r.values.hash, ['ordered', 'xor'] as const, 'ordered');
    const bits = bitsOption(r.values.bits);
    const files = r.positionals;
    if (r.values.shards !== undefined || r.values.work !== undefined || r.values.redis !== undefined) {
      if (typeof r.values.work !== 'string' || r.values.shards === undefined) throw new UsageError('--shards N and --work DIR go together');
      if (r.values.redis === undefined && (r.values.queue !== undefined || r.values['redis-wait'] !== undefined))
        throw new UsageError('--queue and --redis-wait go with --redis URL');
      const work = r.values.work;
      const plan = await planFrom(r.values, files);
      if (r.values.redis !== undefined) {
        const { submitPassagesTasks } = await import('../../scale/queue.js');
        const wait = r.values['redis-wait'] === undefined ? 30 : intOption('redis-wait', r.values['redis-wait'], 30, 1, 86_400);
        await submitPassagesTasks(String(r.values.redis), path.resolve(work), plan.shards, plan.keyRanges ?? 0,
          typeof r.values.queue === 'string' ? r.values.queue : 'neardup', wait * 1000);
      } else {
        for (let i = 0; i < plan.shards; i++) await runPassagesPart(work, i);
        for (let k = 0; k < (plan.keyRanges ?? 0); k++) await runPassagesLists(work, k);
      }
      await finishPassages(work, { noMerge: r.values['no-merge'] === true });
      return 0;
    }
    checkInputFiles(files);  // before DIR is created or changed
    const memory = r.values.memory === undefined ? defaultBuildMemory(inputSize(r.positionals)) : parseSize(String(r.values.memory));
    // one document's working memory (its windows, its (blot, doc) pairs) comes on top of the build's buffers:
    // under an explicit --memory it must fit that, else the document memory
    const limit = memoryDocumentLimit('passages index', r.values.memory === undefined ? undefined : memory);
    // a DIR this run creates is removed again if the run fails before its first commit (no empty index left)
    const created = !fs.existsSync(r.values.output);
    let committed = false;
    // the writer: holds DIR's lock until closed (a second writer is refused)
    const ix = await PassageIndex.open(r.values.output, { seqLen, hash, bits }, true);
    const progress = new Progress('neardup passages index');
    let read = 0, fraction: number | undefined, added = 0;
    const before = ix.size;
    // --tmp: the build's spill files in a folder of this process there (removed on errors and signals; a killed
    // run's by the next one); without, in DIR/postings (removed by the next writer of DIR)
    const spill = typeof r.values.tmp === 'string' ? makeSpillDir(r.values.tmp) : undefined;
    try {
      const docs = readDocs(files, r.values, memorySplit(memory).batchBytes, (bytes, f) => { read = bytes; fraction = f; }, undefined, limit);
      await ix.addRun(docs, {
        memory, tmp: spill,
        onBatch: (n) => { added = n; progress.update({ bytes: read, docs: n, fraction }); },
      });
      committed = true;
      added = ix.size - before;
      progress.done({ bytes: read, docs: added, fraction: 1 });
      if (!r.values['no-merge'] && ix.segments > 1) await ix.merge();
      writeSummary({ command: 'passages index', inputs: files.length ? files : ['-'], documents: added }, {
        index: path.resolve(r.values.output), documents_before: before, documents_after: ix.size, segments: ix.segments, input_bytes: read,
      });
    } finally {
      progress.done();
      ix.close();
      if (spill) removeSpillDir(spill);
      if (created && !committed) fs.rmSync(r.values.output, { recursive: true, force: true });
    }
    return 0;
  }
  if (verb === 'stage') return runStageCommand(rest);
  if (verb === 'extract') {
    const r = parse(rest, {
      sigma: { type: 'string' }, 'min-docs': { type: 'string' }, limit: { type: 'string' }, memory: { type: 'string' }, tmp: { type: 'string' },
    });
    if (r.values.help) return (process.stdout.write(EXTRACT_USAGE + '\n'), 0);
    if (r.positionals.length !== 1) throw new UsageError('expected exactly one argument: DIR');
    const sigma = floatOption('sigma', r.values.sigma, 2, 0, 1e6);
    const minDocs = intOption('min-docs', r.values['min-docs'], 2, 2, 2 ** 32 - 1);
    const limit = r.values.limit === undefined ? undefined : intOption('limit', r.values.limit, 0, 0, 2 ** 53);
    return writeIndexLines(r.positionals[0], r.values, 'extract', 'passages', (ix, memory, tmp) => ix.extractLines({ sigma, minDocs, limit, memory, tmp }));
  }
  if (verb === 'query') {
    const r = parse(rest, { ...INPUT, 'min-shared': { type: 'string' }, 'max-docs': { type: 'string' } });
    if (r.values.help) return (process.stdout.write(QUERY_USAGE + '\n'), 0);
    if (r.positionals.length < 1) throw new UsageError('expected DIR and input files');
    const [dir, ...files] = r.positionals;
    const minShared = intOption('min-shared', r.values['min-shared'], 1, 1, 2 ** 32 - 1);
    const maxDocs = intOption('max-docs', r.values['max-docs'], 1000, 1, 2 ** 32 - 1);
    checkFiles({ inputs: files.length ? files : ['-'], outputs: [], stdout: true });
    const ix = await PassageIndex.open(dir);
    const progress = new Progress('neardup passages query');
    let read = 0, fraction: number | undefined, queried = 0;
    try {
      const limit = memoryDocumentLimit('passages query', undefined);
      checkIndexedDocuments(dir, ix, limit);
      for await (const batch of readDocs(files, r.values, undefined, (b, f) => { read = b; fraction = f; }, undefined, limit)) {
        // a few queries per call: their results (every span's text) are held until written, and one
        // query against a large index can match thousands of documents (10 GB corpus: ~10 MB of output
        // per query)
        for (let at = 0; at < batch.length; at += QUERY_GROUP) {
          const docs = batch.slice(at, at + QUERY_GROUP);
          const res = await ix.queryLines(docs.map((d) => d.text), { minShared, maxDocs });
          for (let i = 0; i < docs.length; i++) {
            await out.write(`{"id":${idJsonText(docs[i].id)},"matches":`);
            await out.writeBytes(res[i]);
            await out.write('}\n');
          }
          queried += docs.length;
          progress.update({ bytes: read, docs: queried, fraction });
        }
      }
      progress.done({ bytes: read, docs: queried, fraction: 1 });
    } finally {
      progress.done();
      ix.close();
    }
    await out.flush();
    return 0;
  }
  if (verb === 'pairs') {
    const r = parse(rest, { 'min-shared': { type: 'string' }, 'max-docs': { type: 'string' }, memory: { type: 'string' }, tmp: { type: 'string' } });
    if (r.values.help) return (process.stdout.write(PAIRS_USAGE + '\n'), 0);
    if (r.positionals.length !== 1) throw new UsageError('expected exactly one argument: DIR');
    const minShared = intOption('min-shared', r.values['min-shared'], 1, 1, 2 ** 32 - 1);
    const maxDocs = intOption('max-docs', r.values['max-docs'], 1000, 2, 2 ** 32 - 1);
    const into = Buffer.allocUnsafe(PAIRS_OUTPUT_BYTES);
    return writeIndexLines(r.positionals[0], r.values, 'pairs', 'pairs', (ix, memory, tmp) => ix.pairsLinesInto({ minShared, maxDocs, memory, tmp }, into));
  }
  throw new UsageError(`unknown verb '${verb}'${didYouMean(verb, ['index', 'extract', 'query', 'pairs', 'stage'])} (index, extract, query, pairs, stage)`);
}
