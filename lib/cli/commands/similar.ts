// neardup similar build|update|top|query|stage: similar documents in a growing archive (chunk similarity,
// Kasprzak et al.; docs/similar.md). JSONL in, JSONL out; the index is a folder holding the SQLite table.
import { isUtf8 } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../../util/errors';
import { checkInputFiles } from '../../io/input';
import { ChunkIndex, DB_NAME, SOURCE, idText, stages, type ChunkDocument, type ChunkIndexOptions, type DocId, type RunOptions } from '../../chunks/chunks';
import { openInput, rawMember, readLines } from '../../io/jsonl';
import { Output, UsageError, didYouMean, floatOption, intOption, oneOf, parse, type Command, type OptionValues } from '../common';
import { checkFiles, watchSpillFolders } from '../../io/files';
import { Progress } from '../progress';
import { writeSummary } from '../summary';
import { parseSize } from './dupi';
import { documentOverLimit, guardLines, maxLineBytesFor, memoryDocumentLimit, type DocumentLimit } from '../limits';

const USAGE = `Usage: neardup similar build FILE... --index DIR [--n 5] [--bits 64|32] [--k 100] [--memory SIZE] [options]
       neardup similar update FILE... --index DIR [--memory SIZE] [--compact]
       neardup similar top --index DIR [--id ID...]
       neardup similar query FILE... --index DIR
       neardup similar stage prepare FILE... --index DIR --parts P [build options]
       neardup similar stage part --index DIR --part I/P [--out FILE]
       neardup similar stage finish --index DIR PAIRS-FILE...

For every document, the documents it shares the most text with: similarity(A -> B) = the share of A's
chunks (overlapping sequences of n words, hashed to chunk ids) that B holds too. The index folder holds
the inverted index, the per-document table and the similarity table (DIR/similar.sqlite, SQLite:
SELECT * FROM similar WHERE doc = ?).

Input: JSONL (plain, gzip or zstd; '-' or nothing for stdin), one document per line: {"id": ..., "text": ...}
  --id-field NAME       the id field (default id): a string or an integer, distinct within an index
  --field NAME          the text field (default text)
  --on-bad-line error|skip  a malformed line stops the run (default) or is left out

build     the index of the documents in DIR (which must not hold one).
  --n N                 words per chunk (default 5)
  --bits B              bits of a chunk id: 64 (default: no hash collisions in practice), or 28 to 32 (among
                        n distinct chunks ~n^2/2^(B+1) pairs share an id and count as shared: at 32 bits
                        ~116 pairs per million chunks, ~1.2M per 100M); an index keeps its width
  --k K                 similar documents kept per document (default 100)
  --min-similarity S    keep only documents with similarity >= S (0 to 1; default 0)
  --min-shared N        keep only documents sharing at least N chunks (default 1)
  --split nonword|whitespace  words: runs of letters, digits and _ (default), or whitespace-separated
  --case-sensitive      do not lower-case words
  --strip-punctuation   drop punctuation (with --split whitespace)
  --short whole|none    a text shorter than n words: one chunk of all of it (default) or none
  --seed N              seed of the chunk hash (default 0)
  --parts P             split the chunk-id space into P ranges indexed and counted on their own (default 1)
  --redis URL           with --parts: count the parts in 'neardup worker' processes through BullMQ on this
                        Redis (workers on other machines must see DIR at the same path); --queue NAME
                        (default neardup), --redis-wait SECONDS (default 30: how long a lost Redis may stay
                        away before the run fails). The same table as a local build (docs/scale.md).
update    applies the lines to the index: a new id adds its document, a known id replaces it, "text": null
          deletes it (the last line of an id wins). Gives the table a build of the final documents gives.
  --compact             rewrite the index files now (otherwise done when they pile up)
top       one JSON line per (document, similar document), each document's lines by descending similarity:
          {"id","other","similarity","reverse","shared"} (similarity = id -> other, reverse = other -> id,
          shared = distinct shared chunks). Every document in index order, or those of --id (repeatable;
          an id is matched as a string, then as an integer).
query     the same lines for the input documents against the index, without adding them ("id": the
          --id-field value, or FILE:LINE when the line has none).
stage     a build in steps that can run in separate processes or machines sharing DIR: prepare (the
          per-document table), part I/P for each I (its pairs file, DIR/pairs-I.ckp or --out), finish.
Runs: --memory SIZE (posting build and counting; default 1G), --tmp DIR (spill files; default DIR).`;

const INPUT = {
  field: { type: 'string' as const },
  'id-field': { type: 'string' as const },
  'on-bad-line': { type: 'string' as const },
};
const RUN = { index: { type: 'string' as const }, memory: { type: 'string' as const }, tmp: { type: 'string' as const } };
const QUEUE = { redis: { type: 'string' as const }, queue: { type: 'string' as const }, 'redis-wait': { type: 'string' as const } };
const BUILD = {
  n: { type: 'string' as const }, bits: { type: 'string' as const }, k: { type: 'string' as const },
  'min-similarity': { type: 'string' as const }, 'min-shared': { type: 'string' as const }, split: { type: 'string' as const },
  'case-sensitive': { type: 'boolean' as const }, 'strip-punctuation': { type: 'boolean' as const },
  short: { type: 'string' as const }, seed: { type: 'string' as const }, parts: { type: 'string' as const },
};

interface InputSpec {
  files: string[];
  field: string;
  idField: string;
  skipBad: boolean;
  /** update: "text": null deletes. */
  allowNull: boolean;
  /** query: a line without the id gets FILE:LINE. */
  idOptional: boolean;
}

function inputSpec(v: OptionValues, files: string[], allowNull: boolean, idOptional: boolean): InputSpec {
  const field = v.field === undefined ? 'text' : String(v.field);
  const idField = v['id-field'] === undefined ? 'id' : String(v['id-field']);
  if (field === '' || idField === '') throw new UsageError('--field and --id-field must not be empty');
  const skipBad = oneOf('on-bad-line', v['on-bad-line'], ['error', 'skip'] as const, 'error') === 'skip';
  checkInputFiles(files, { parquet: false });  // every input, before the index is opened or changed
  return { files: files.length ? files : ['-'], field, idField, skipBad, allowNull, idOptional };
}

/** The documents of JSONL files, each with its FILE:LINE. Bad lines stop the run or are left out. */
async function* readDocuments(spec: InputSpec, skipped: { count: number }, limit?: DocumentLimit): AsyncGenerator<ChunkDocument> {
  for (const file of spec.files) {
    const name = file === '-' ? '<stdin>' : file;
    const stream = await openInput(file);
    let line = 0;
    const lines = readLines(stream, name, limit ? maxLineBytesFor(limit) : undefined);
    for await (let raw of limit ? guardLines(lines, limit) : lines) {
      line++;
      if (line === 1 && raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) raw = raw.subarray(3);
      let doc: ChunkDocument & { [SOURCE]: { file: string; line: number } };
      try {
        doc = parseDocument(raw, spec, `${name}:${line}`);
      } catch (reason) {
        if (typeof reason !== 'string') throw reason;
        if (spec.skipBad) {
          skipped.count++;
          continue;
        }
        throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${name}:${line}: ${reason} (use --on-bad-line skip to leave it out)`, { file: name, line });
      }
      doc[SOURCE] = { file: name, line };
      // the raw line bounds its text's UTF-8 bytes (escapes only make it longer)
      if (limit && raw.length > limit.bytes && typeof doc.text === 'string') {
        const n = Buffer.byteLength(doc.text, 'utf8');
        if (n > limit.bytes) throw documentOverLimit(`${name}:${line}`, n, limit, { file: name, line });
      }
      yield doc;
    }
  }
}

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const MIN_ID = -(1n << 63n), MAX_ID = (1n << 64n) - 1n;

/**
 * An id JSON.parse read as a number that is not a safe integer: the integer its digits (as written on the line)
 * say, as a bigint, when it is one from -2^63 to 2^64-1; else the reason.
 */
function bigId(line: string, field: string): bigint {
  const t = rawMember(line, field) ?? '';
  const id = INTEGER.test(t) ? BigInt(t) : undefined;
  if (id === undefined || id < MIN_ID || id > MAX_ID)
    throw `field '${field}' must be a string or an integer from -2^63 to 2^64-1, got ${t.length > 60 ? t.slice(0, 60) + '...' : t}`;
  return id;
}

function parseDocument(raw: Buffer, spec: InputSpec, where: string): ChunkDocument & { [SOURCE]: { file: string; line: number } } {
  if (raw.length === 0 || (raw.length === 1 && raw[0] === 0x0d)) throw 'empty line';
  if (!isUtf8(raw)) throw 'invalid UTF-8';
  let obj: unknown;
  const line = raw.toString('utf8');
  try {
    obj = JSON.parse(line);
  } catch (e) {
    throw `not valid JSON (${(e as Error).message})`;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw 'not a JSON object';
  const o = obj as Record<string, unknown>;
  const has = (k: string) => Object.prototype.hasOwnProperty.call(o, k);
  let id: unknown;
  if (has(spec.idField)) {
    id = o[spec.idField];
    if (typeof id === 'number' && !Number.isSafeInteger(id)) id = bigId(line, spec.idField);  // beyond 2^53: the digits
    if (idText(id) === undefined) throw `field '${spec.idField}' must be a string or an integer, got ${JSON.stringify(id)}`;
  } else if (spec.idOptional) {
    id = where;
  } else {
    throw `field '${spec.idField}' is missing`;
  }
  if (!has(spec.field)) throw `field '${spec.field}' is missing`;
  const text = o[spec.field];
  if (!(typeof text === 'string' || (spec.allowNull && text === null)))
    throw `field '${spec.field}' is ${text === null ? 'null' : typeof text}, expected a string${spec.allowNull ? ' or null' : ''}`;
  return { id: id as DocId, text: text as string | null } as never;
}

function runOptions(v: OptionValues): RunOptions {
  return {
    memory: v.memory === undefined ? undefined : parseSize(String(v.memory)),
    tmp: v.tmp === undefined ? undefined : String(v.tmp),
  };
}

function buildOptions(v: OptionValues): ChunkIndexOptions {
  const o: ChunkIndexOptions = {
    n: intOption('n', v.n, 5, 1, 4096),
    k: intOption('k', v.k, 100, 1, 100000),
    minSimilarity: floatOption('min-similarity', v['min-similarity'], 0, 0, 1),
    minShared: intOption('min-shared', v['min-shared'], 1, 1, 2 ** 32 - 1),
    split: oneOf('split', v.split, ['nonword', 'whitespace'] as const, 'nonword'),
    lowercase: !v['case-sensitive'],
    stripPunctuation: Boolean(v['strip-punctuation']),
    short: oneOf('short', v.short, ['whole', 'none'] as const, 'whole'),
    parts: intOption('parts', v.parts, 1, 1, 4096),
  };
  if (v.bits !== undefined) {
    const b = intOption('bits', v.bits, 32, 28, 64);
    if (b > 32 && b !== 64) throw new UsageError(`--bits must be from 28 to 32, or 64, got ${b}`);
    o.bits = b;
  }
  if (v.seed !== undefined) {
    if (!/^\d+$/.test(String(v.seed)) || BigInt(String(v.seed)) >= 1n << 64n) throw new UsageError(`--seed must be an integer from 0 to 2^64-1, got '${String(v.seed)}'`);
    o.seed = BigInt(String(v.seed));
  }
  return o;
}

/** The files of an index folder a run may replace or remove (none may be an input). */
function indexFiles(dir: string): Array<{ option: string; file: string }> {
  const names = [DB_NAME, 'MANIFEST', 'PENDING', 'STAGE'];
  try {
    for (const n of fs.readdirSync(dir)) if (!names.includes(n)) names.push(n);
  } catch { /* a new folder */ }
  return names.map((n) => ({ option: '--index', file: path.join(dir, n) }));
}

function indexDir(v: OptionValues): string {
  if (typeof v.index !== 'string' || v.index === '') throw new UsageError('--index DIR is required');
  return v.index;
}

/** Documents with progress on stderr; `seen.n` counts them (for the summary). */
async function* counted(docs: AsyncIterable<ChunkDocument>, progress: Progress, seen = { n: 0 }): AsyncGenerator<ChunkDocument> {
  for await (const d of docs) {
    yield d;
    if ((++seen.n & 1023) === 0) progress.update({ docs: seen.n });
  }
}

function reportSkipped(skipped: { count: number }): void {
  if (skipped.count) process.stderr.write(`neardup similar: ${skipped.count} bad line${skipped.count === 1 ? '' : 's'} left out\n`);
}

async function runBuild(args: string[], staged: boolean): Promise<number> {
  const r = parse(args, { ...INPUT, ...RUN, ...BUILD, ...(staged ? {} : QUEUE) });
  if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
  const dir = indexDir(r.values);
  if (r.values.redis === undefined && (r.values.queue !== undefined || r.values['redis-wait'] !== undefined))
    throw new UsageError('--queue and --redis-wait go with --redis URL');
  const spec = inputSpec(r.values, r.positionals, false, false);
  const options = { ...buildOptions(r.values), ...runOptions(r.values) };
  checkFiles({ inputs: spec.files, outputs: indexFiles(dir), stdout: false });
  const unwatch = watchSpillFolders(options.tmp ?? dir);
  const progress = new Progress(staged ? 'neardup similar stage prepare' : 'neardup similar build');
  const skipped = { count: 0 }, seen = { n: 0 };
  try {
    const docs = counted(readDocuments(spec, skipped, memoryDocumentLimit('similar build', options.memory)), progress, seen);
    const onProgress = (p: { documents: number; stage: string }) => progress.update({ docs: p.documents, extra: p.stage });
    if (staged) {
      await stages.prepare(dir, docs, { ...options, onProgress });
    } else if (r.values.redis !== undefined) {
      // prepare here, the parts on the workers, finish here (docs/scale.md)
      const parts = options.parts ?? 1;
      await stages.prepare(dir, docs, { ...options, onProgress });
      const { submitSimilarParts } = await import('../../scale/queue.js');
      const wait = r.values['redis-wait'] === undefined ? 30 : intOption('redis-wait', r.values['redis-wait'], 30, 1, 86_400);
      const pairs = await submitSimilarParts(String(r.values.redis), path.resolve(dir), parts,
        { memory: options.memory, tmp: options.tmp === undefined ? undefined : path.resolve(options.tmp) },
        r.values.queue === undefined ? 'neardup' : String(r.values.queue), wait * 1000);
      (await stages.finish(dir, pairs, runOptions(r.values))).close();
      for (const f of pairs) fs.rmSync(f, { force: true });
    } else {
      const ix = await ChunkIndex.build(dir, docs, { ...options, onProgress });
      ix.close();
    }
  } finally {
    progress.done({ docs: seen.n });
    unwatch();
  }
  reportSkipped(skipped);
  writeSummary({ command: staged ? 'similar stage prepare' : 'similar build', inputs: spec.files, documents: seen.n }, {
    index: path.resolve(dir), bad_lines_left_out: skipped.count,
  });
  return 0;
}

async function runUpdate(args: string[]): Promise<number> {
  const r = parse(args, { ...INPUT, ...RUN, compact: { type: 'boolean' } });
  if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
  const dir = indexDir(r.values);
  const spec = inputSpec(r.values, r.positionals, true, false);
  const options = runOptions(r.values);
  checkFiles({ inputs: spec.files, outputs: indexFiles(dir), stdout: false });
  const unwatch = watchSpillFolders(options.tmp ?? dir);
  const progress = new Progress('neardup similar update');
  const skipped = { count: 0 }, seen = { n: 0 };
  const ix = await ChunkIndex.open(dir);
  let summary: Record<string, unknown>;
  try {
    const s = await ix.update(counted(readDocuments(spec, skipped, memoryDocumentLimit('similar update', options.memory)), progress, seen), {
      ...options, compact: Boolean(r.values.compact),
      onProgress: (p) => progress.update({ docs: p.documents, extra: p.stage }),
    });
    progress.done({ docs: seen.n });
    // generation, then what changed: documents added, replaced (a known id) and deleted, other documents whose
    // lists changed and how many of them were recounted, whether the index files were compacted
    summary = {
      index: path.resolve(dir), generation: s.generation, added: s.added, replaced: s.modified, deleted: s.deleted,
      affected: s.affected, recounted: s.recounted, compacted: Boolean(s.compacted),
    };
  } finally {
    progress.done();
    ix.close();
    unwatch();
  }
  reportSkipped(skipped);
  writeSummary({ command: 'similar update', inputs: spec.files, documents: seen.n }, { ...summary, bad_lines_left_out: skipped.count });
  return 0;
}

async function runTop(args: string[]): Promise<number> {
  const r = parse(args, { index: { type: 'string' }, id: { type: 'string', multiple: true } });
  if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
  if (r.positionals.length) throw new UsageError(`unexpected argument '${r.positionals[0]}' (ids go with --id)`);
  const dir = indexDir(r.values);
  const out = new Output();
  const ix = await ChunkIndex.open(dir);
  try {
    let ns: Uint32Array;
    if (r.values.id === undefined) {
      ns = ix.internalIds();
    } else {
      const given = r.values.id as string[];
      ns = ix.internalIds(given.map((s) => idText(s)!));
      for (let i = 0; i < given.length; i++) {
        if (ns[i] !== 0xffffffff) continue;
        const t = /^-?\d+$/.test(given[i]) ? idText(BigInt(given[i])) : undefined;  // the integer, exact beyond 2^53
        if (t !== undefined) ns[i] = ix.internalIds([t])[0];
        if (ns[i] === 0xffffffff) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `no document with the id '${given[i]}' in '${dir}'`);
      }
    }
    const progress = new Progress('neardup similar top');
    for (let i = 0; i < ns.length; i += 1024) {
      await out.write(await ix.topLines(ns.subarray(i, i + 1024)));
      progress.update({ docs: Math.min(ns.length, i + 1024), fraction: Math.min(1, (i + 1024) / ns.length) });
    }
    progress.done({ docs: ns.length, fraction: 1 });
  } finally {
    ix.close();
  }
  await out.flush();
  return 0;
}

async function runQuery(args: string[]): Promise<number> {
  const r = parse(args, { ...INPUT, index: { type: 'string' } });
  if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
  const dir = indexDir(r.values);
  const spec = inputSpec(r.values, r.positionals, false, true);
  checkFiles({ inputs: spec.files, outputs: [], stdout: true });
  const out = new Output();
  const skipped = { count: 0 };
  const ix = await ChunkIndex.open(dir);
  const progress = new Progress('neardup similar query');
  let queried = 0;
  try {
    let batch: ChunkDocument[] = [];
    const flush = async () => {
      const res = await ix.query(batch.map((d) => d.text as string), batch.map((d) => d.id));
      queried += batch.length;
      progress.update({ docs: queried });
      for (const list of res) {
        for (const e of list) {
          await out.write(`{"id":${idText(e.id)},"other":${idText(e.other)},"similarity":${e.similarity},` +
            `"reverse":${e.reverse},"shared":${e.shared}}\n`);
        }
      }
      batch = [];
    };
    for await (const d of readDocuments(spec, skipped, memoryDocumentLimit('similar query', undefined))) {
      batch.push(d);
      if (batch.length >= 1024) await flush();
    }
    if (batch.length) await flush();
    progress.done({ docs: queried });
  } finally {
    ix.close();
  }
  await out.flush();
  reportSkipped(skipped);
  return 0;
}

async function runStage(args: string[]): Promise<number> {
  const [step, ...rest] = args;
  if (step === 'prepare') return runBuild(rest, true);
  if (step === 'part') {
    const r = parse(rest, { ...RUN, part: { type: 'string' }, out: { type: 'string' } });
    if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
    const dir = indexDir(r.values);
    const m = /^(\d+)\/(\d+)$/.exec(String(r.values.part ?? ''));
    if (!m) throw new UsageError('--part I/P is required (part I of P, from 0)');
    const part = Number(m[1]), parts = Number(m[2]);
    if (parts < 1 || parts > 4096 || part >= parts) throw new UsageError(`--part ${m[0]}: I must be below P, P from 1 to 4096`);
    const options = runOptions(r.values);
    const unwatch = watchSpillFolders(options.tmp ?? dir);
    try {
      const out = await stages.part(dir, part, { ...options, parts, out: r.values.out as string | undefined });
      process.stdout.write(`${out}\n`);
    } finally {
      unwatch();
    }
    return 0;
  }
  if (step === 'finish') {
    const r = parse(rest, { ...RUN });
    if (r.values.help) return (process.stdout.write(USAGE + '\n'), 0);
    const dir = indexDir(r.values);
    if (!r.positionals.length) throw new UsageError('the pairs files of every part are required');
    const options = runOptions(r.values);
    const unwatch = watchSpillFolders(options.tmp ?? dir);
    try {
      (await stages.finish(dir, r.positionals, options)).close();
    } finally {
      unwatch();
    }
    return 0;
  }
  throw new UsageError(`unknown stage '${step ?? ''}' (prepare, part, finish)`);
}

export const similarCommand: Command = {
  name: 'similar',
  usage: USAGE,
  async run(args) {
    const [verb, ...rest] = args;
    if (verb === undefined || verb === '-h' || verb === '--help') {
      // a missing sub-command is a usage error: the usage goes to stderr
      (verb === undefined ? process.stderr : process.stdout).write(USAGE + '\n');
      return verb === undefined ? 2 : 0;
    }
    if (verb === 'build') return runBuild(rest, false);
    if (verb === 'update') return runUpdate(rest);
    if (verb === 'top') return runTop(rest);
    if (verb === 'query') return runQuery(rest);
    if (verb === 'stage') return runStage(rest);
    throw new UsageError(`unknown verb '${verb}'${didYouMean(verb, ['build', 'update', 'top', 'query', 'stage'])} (build, update, top, query, stage)`);
  },
};
