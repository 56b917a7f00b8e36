// `neardup passages index --shards N`: the posting-list build as independent tasks, for BullMQ workers, Slurm job
// arrays or Kubernetes indexed jobs (docs/scale.md). The index written is the one a single `passages index`
// run writes, file for file:
//   plan     the run's options and inputs                                    -> WORK/passages-plan.json
//   part I   the input files of shard I of N (contiguous, shardFiles)        -> WORK/part-I, a passage index of
//            its own (texts, document list, postings), built whole in a spill folder and moved into place
//   lists R  key range R of K of the parts' posting lists, merged and numbered as in DIR -> WORK/lists-R.pst
//            (PostingIndex.writeKeyRange) and WORK/lists-R.json
//   finish   every part, in order -> DIR: one batch (the parts' texts one after another, their document lists
//            renumbered) and one postings segment: the key ranges' lists copied bit for bit
//            (PostingIndex.appendKeyRanges), or, for a plan without key ranges, the parts' lists merged here
//            (PostingIndex.appendIndexes); then merged as `passages index` merges; the parts and ranges are removed
// Every task can be rerun: a part or a range replaces its files, finish fails without changing DIR when a part
// or a range is missing or was written for another plan.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../util/errors';
import { checkInputFiles, displayName, idValue, inputSize, readDocuments } from '../io/input';
import { PassageIndex, type PartsBatch } from '../postings/passages';
import { checkJsonCrc, jsonWithCrc } from '../io/json-crc';
import { killPoint } from '../util/test-hooks';
import { PostingIndex, defaultBuildMemory, memorySplit, writeIndexFile, type WindowHash } from '../postings/postings';
import { idFieldOption, inputOptionsFrom } from '../io/documents';
import { makeSpillDir, removeSpillDir } from '../io/files';
import { checkBatchSizes, documentLimitFrom, guardLines, maxLineBytesFor, type DocumentLimit } from '../io/document-limits';
import { shardFiles } from './stages';

/** WORK/passages-plan.json. */
export interface PassagesPlan {
  version: 1;
  kind: 'passages';
  /** A random id: parts written for another plan are refused. */
  id: string;
  /** The index folder (absolute). */
  dir: string;
  /** The inputs as given (they name documents without an id: "FILE:LINE") and their absolute paths. */
  names: string[];
  files: string[];
  shards: number;
  /** Key ranges of the posting lists, each put together by a task of its own; absent: finish merges them all. */
  keyRanges?: number;
  seqLen?: number;
  hash?: WindowHash;
  /** Bits of the blots (--bits, or those of the index folder when it held one at the plan); absent: the default (64). */
  bits?: 32 | 64;
  /** The input options: field, id-field, on-bad-line. */
  input: Record<string, string>;
  /** --memory of each part (bytes), or undefined: the default for the part's input size. */
  memory?: number;
  tmp?: string;
  /** The largest document a part takes (set by the CLI from --memory or the document memory; absent: none). */
  documentLimit?: DocumentLimit;
}

export interface PassagesPartReport {
  stage: 'passages-part';
  shard: string;
  documents: number;
  read_bytes: number;
  seconds: number;
}

export interface PassagesListsReport {
  stage: 'passages-lists';
  shard: string;
  keys: number;
  posts: number;
  read_bytes: number;
  written_bytes: number;
  seconds: number;
}

const planFile = (work: string) => path.join(work, 'passages-plan.json');
const partDir = (work: string, i: number) => path.join(work, `part-${i}`);
const listsFile = (work: string, r: number) => path.join(work, `lists-${r}.pst`);
const listsMeta = (work: string, r: number) => path.join(work, `lists-${r}.json`);

/** The documents of the inputs, in batches: each with its id (the --id-field value, or "NAME:LINE") and UTF-8 text. */
export async function* readPassageDocs(files: string[], values: Record<string, unknown>, batchBytes?: number,
  onProgress?: (bytes: number, fraction?: number) => void, names?: string[],
  limit?: DocumentLimit): AsyncGenerator<Array<{ id: unknown; text: Buffer }>> {
  const input = inputOptionsFrom(values);
  const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
  const nameOf = new Map(names ? files.map((f, k) => [f, names[k]]) : []);
  // the per-document limit: lines far over it refused as they are read (saying why), each batch's documents
  // checked before it goes anywhere
  const reader = readDocuments(files.length ? files : ['-'], { ...input, idField, batchBytes, onProgress, maxLineBytes: limit && maxLineBytesFor(limit) });
  for await (const b of limit ? guardLines(reader, limit) : reader) {
    if (limit) checkBatchSizes(b, limit);
    const out: Array<{ id: unknown; text: Buffer }> = [];
    const data = Buffer.from(b.packed.data.buffer, b.packed.data.byteOffset, b.packed.data.length);
    const name = nameOf.get(b.file) ?? displayName(b.file);
    for (let i = 0; i < b.count; i++) {
      if (b.valid && b.valid[i] === 0) continue;  // --on-bad-line skip
      // an integer beyond 2^53 is a bigint: the index keeps its digits (exact, unquoted)
      const id: unknown = b.ids ? idValue(b.ids, i) : `${name}:${b.firstLine + i}`;
      out.push({ id, text: data.subarray(b.packed.offsets[i], b.packed.offsets[i + 1]) });
    }
    yield out;
  }
}

/** Writes WORK/passages-plan.json for a sharded build of `names` into `dir`. */
export async function planPassages(work: string, dir: string, names: string[], shards: number,
  o: { seqLen?: number; hash?: WindowHash; bits?: 32 | 64; input: Record<string, string>; memory?: number; tmp?: string; keyRanges?: number;
    documentLimit?: DocumentLimit }): Promise<PassagesPlan> {
  if (names.length === 0 || names.includes('-')) throw new NeardupError('ERR_NEARDUP_INVALID_ARGUMENT', 'a sharded build needs input files (not standard input)');
  checkInputFiles(names);
  inputOptionsFrom(o.input);  // checked here, not first in a part
  if (o.input['id-field'] !== undefined) idFieldOption(o.input['id-field']);
  // the parts get the blots of the index they are added to (one written before 64-bit blots: 32)
  const bits = o.bits ?? await indexBits(dir);
  fs.mkdirSync(work, { recursive: true });
  const plan: PassagesPlan = {
    version: 1, kind: 'passages', id: crypto.randomBytes(8).toString('hex'), dir: path.resolve(dir),
    names, files: names.map((f) => path.resolve(f)), shards, ...(o.keyRanges !== undefined ? { keyRanges: o.keyRanges } : {}), input: o.input,
    ...(o.seqLen !== undefined ? { seqLen: o.seqLen } : {}), ...(o.hash !== undefined ? { hash: o.hash } : {}),
    ...(bits !== undefined ? { bits } : {}), ...(o.memory !== undefined ? { memory: o.memory } : {}), ...(o.tmp !== undefined ? { tmp: path.resolve(o.tmp) } : {}),
    ...(o.documentLimit !== undefined ? { documentLimit: o.documentLimit } : {}),
  };
  await writeIndexFile(planFile(work), jsonWithCrc(plan));
  return plan;
}

export function loadPassagesPlan(work: string): PassagesPlan {
  const f = planFile(work);
  let plan: PassagesPlan;
  try {
    plan = JSON.parse(fs.readFileSync(f, 'utf8')) as PassagesPlan;
  } catch (e) {
    throw new NeardupError((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'ERR_NEARDUP_IO' : 'ERR_NEARDUP_CORRUPT',
      `cannot read the plan '${f}': ${(e as Error).message}`, { file: f, cause: e });
  }
  if (plan !== null && typeof plan === 'object' && !Array.isArray(plan)) checkJsonCrc(plan as unknown as Record<string, unknown>, f, false);
  if (plan.version !== 1 || plan.kind !== 'passages' || !Array.isArray(plan.files) || !Array.isArray(plan.names) ||
      plan.files.length !== plan.names.length || !(plan.shards >= 1) || typeof plan.dir !== 'string' || typeof plan.id !== 'string' ||
      (plan.keyRanges !== undefined && !(Number.isInteger(plan.keyRanges) && plan.keyRanges >= 1)) ||
      (plan.documentLimit !== undefined && documentLimitFrom(plan.documentLimit) === undefined))
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${f}' is not a passages plan of this version`, { file: f });
  return plan;
}

/** Part I of N: its input files -> WORK/part-I (replaced whole). */
export async function runPassagesPart(work: string, i: number): Promise<PassagesPartReport> {
  const start = Date.now();
  const plan = loadPassagesPlan(work);
  if (!(Number.isInteger(i) && i >= 0 && i < plan.shards))
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `passages part ${i}: out of range (the plan has ${plan.shards})`);
  const [lo, hi] = shardFiles(plan.files.length, i, plan.shards);
  const files = plan.files.slice(lo, hi), names = plan.names.slice(lo, hi);
  const final = partDir(work, i);
  // built in a spill folder of this process (removed on errors and signals; a killed task's is swept by the
  // next part that runs in WORK), then moved into place
  const spill = makeSpillDir(work);
  const tmp = path.join(spill, 'part');
  const memory = plan.memory ?? defaultBuildMemory(inputSize(files));
  let docs = 0, read = 0;
  // the plan's --tmp: the build's spill files in a folder of this process there
  const runs = plan.tmp === undefined ? undefined : makeSpillDir(plan.tmp);
  try {
    const ix = await PassageIndex.open(tmp, { seqLen: plan.seqLen, hash: plan.hash, bits: plan.bits }, true);
    try {
      if (files.length > 0) {
        docs = await ix.addRun(readPassageDocs(files, plan.input, memorySplit(memory).batchBytes, (b) => { read = b; }, names, plan.documentLimit),
          { memory, tmp: runs });
      }
    } finally {
      ix.close();
    }
    fs.writeFileSync(path.join(tmp, 'part.json'), jsonWithCrc({ plan: plan.id, part: i, shards: plan.shards, documents: docs }));
    fs.rmSync(final, { recursive: true, force: true });
    fs.renameSync(tmp, final);
  } catch (e) {
    if (e instanceof NeardupError && !e.message.startsWith('passages part')) e.message = `passages part ${i}/${plan.shards}: ${e.message}`;
    throw e;
  } finally {
    if (runs) removeSpillDir(runs);
    removeSpillDir(spill);
  }
  return { stage: 'passages-part', shard: `${i}/${plan.shards}`, documents: docs, read_bytes: read, seconds: (Date.now() - start) / 1000 };
}

/** The parts of a plan, in order, each checked to be there and written for this plan; and their documents. */
function checkedParts(work: string, plan: PassagesPlan, what: string): { dirs: string[]; documents: number } {
  const dirs: string[] = [];
  let documents = 0;
  for (let i = 0; i < plan.shards; i++) {
    const d = partDir(work, i), f = path.join(d, 'part.json');
    let meta: { plan?: string; part?: number; documents?: number };
    try {
      meta = JSON.parse(fs.readFileSync(f, 'utf8')) as typeof meta;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new NeardupError('ERR_NEARDUP_IO', `${what}: passages part ${i}/${plan.shards}: '${d}' is missing: run that part first`, { file: d, cause: e });
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: passages part ${i}/${plan.shards}: cannot read '${f}' (run that part again): ${(e as Error).message}`, { file: f, cause: e });
    }
    if (meta !== null && typeof meta === 'object') checkJsonCrc(meta as Record<string, unknown>, f, false);
    if (meta.plan !== plan.id || meta.part !== i || !Number.isInteger(meta.documents))
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: passages part ${i}/${plan.shards}: '${d}' was written for another plan (run the part again)`, { file: f });
    dirs.push(d);
    documents += meta.documents!;
  }
  return { dirs, documents };
}

/** Documents the index folder holds now (0 when it is not there yet): the first id of the parts' documents. */
/** The bits of the blots of the passage index in dir (undefined: none there). */
async function indexBits(dir: string): Promise<32 | 64 | undefined> {
  if (!fs.existsSync(path.join(dir, 'passages.json'))) return undefined;
  const ix = await PassageIndex.open(dir);
  try {
    return ix.bits;
  } finally {
    ix.close();
  }
}

async function indexSize(dir: string): Promise<number> {
  if (!fs.existsSync(path.join(dir, 'passages.json'))) return 0;
  const ix = await PassageIndex.open(dir);
  try {
    return ix.size;
  } finally {
    ix.close();
  }
}

/**
 * Key range R of K: the parts' posting lists of the keys in that range, merged, their documents numbered after
 * the ones DIR holds now -> WORK/lists-R.pst (a postings segment file) and WORK/lists-R.json (last).
 */
export async function runPassagesLists(work: string, r: number): Promise<PassagesListsReport> {
  const start = Date.now();
  const plan = loadPassagesPlan(work);
  const ranges = plan.keyRanges;
  if (ranges === undefined) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `passages lists: the plan '${planFile(work)}' has no key ranges (its finish merges the lists)`);
  if (!(Number.isInteger(r) && r >= 0 && r < ranges))
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `passages lists ${r}: out of range (the plan has ${ranges})`);
  const what = `passages lists ${r}/${ranges}`;
  const { dirs, documents } = checkedParts(work, plan, what);
  const first = await indexSize(plan.dir);
  const out = listsFile(work, r);
  let read = 0;
  for (const d of dirs) for (const e of fs.readdirSync(path.join(d, 'postings'))) read += fs.statSync(path.join(d, 'postings', e)).size;
  let counts: { keys: number; posts: number };
  try {
    fs.rmSync(listsMeta(work, r), { force: true });  // a finish never pairs the new file with an old record
    counts = await PostingIndex.writeKeyRange(dirs.map((d) => path.join(d, 'postings')), out, { range: r, ranges, firstId: first, tmp: plan.tmp ?? work });
  } catch (e) {
    if (e instanceof NeardupError) e.message = `${what}: ${e.message}`;
    throw e;
  }
  await writeIndexFile(listsMeta(work, r), jsonWithCrc({ plan: plan.id, range: r, ranges, first, documents, ...counts }));
  return { stage: 'passages-lists', shard: `${r}/${ranges}`, ...counts, read_bytes: read, written_bytes: fs.statSync(out).size, seconds: (Date.now() - start) / 1000 };
}

/** The key ranges' files, in order, each checked against the plan, DIR's size now and the parts. */
async function checkedRanges(work: string, plan: PassagesPlan, ranges: number, parts: { dirs: string[]; documents: number }, first: number): Promise<string[]> {
  const files: string[] = [];
  let posts = 0;
  for (let r = 0; r < ranges; r++) {
    const f = listsMeta(work, r), what = `passages finish: key range ${r}/${ranges}`;
    let meta: { plan?: string; range?: number; ranges?: number; first?: number; documents?: number; posts?: number };
    try {
      meta = JSON.parse(fs.readFileSync(f, 'utf8')) as typeof meta;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new NeardupError('ERR_NEARDUP_IO', `${what}: '${f}' is missing: run 'passages stage lists --shard ${r}/${ranges}' first`, { file: f, cause: e });
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: cannot read '${f}' (run that range again): ${(e as Error).message}`, { file: f, cause: e });
    }
    if (meta !== null && typeof meta === 'object') checkJsonCrc(meta as Record<string, unknown>, f, false);
    if (meta.plan !== plan.id || meta.range !== r || meta.ranges !== ranges || meta.documents !== parts.documents || !Number.isInteger(meta.posts))
      throw new NeardupError('ERR_NEARDUP_CORRUPT', `${what}: '${f}' was written for another plan or other parts (run that range again)`, { file: f });
    if (meta.first !== first)
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${what}: its documents are numbered from ${meta.first}, but '${plan.dir}' now holds ${first} documents: run the lists stage again`, { file: f });
    files.push(listsFile(work, r));
    posts += meta.posts!;
  }
  let want = 0;
  for (const d of parts.dirs) {
    const ix = await PostingIndex.open(path.join(d, 'postings'));
    want += ix.info().posts;
    ix.close();
  }
  if (posts !== want)
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `passages finish: the key ranges hold ${posts} posts, the parts ${want}: run the lists stage again`, { file: work });
  return files;
}

/** WORK/passages-finish.json: the batch a finish is about to commit (written before its commit point). */
const finishFile = (work: string) => path.join(work, 'passages-finish.json');

/** The batch a finish of this plan staged (undefined: none, or another plan's). */
function stagedBatch(work: string, plan: PassagesPlan): PartsBatch | undefined {
  let m: { plan?: string; batch?: PartsBatch };
  try {
    m = JSON.parse(fs.readFileSync(finishFile(work), 'utf8')) as typeof m;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new NeardupError('ERR_NEARDUP_CORRUPT', `passages finish: cannot read '${finishFile(work)}': ${(e as Error).message}`, { file: finishFile(work), cause: e });
  }
  const b = m.batch;
  if (m.plan !== plan.id || b === null || typeof b !== 'object' || typeof b.texts !== 'string' || typeof b.docs !== 'string' ||
      !Number.isSafeInteger(b.first) || !Number.isSafeInteger(b.count) || !Number.isInteger(b.docsCrc)) return undefined;
  return b;
}

/** A finished finish's (or the parts' of a finish that committed) leftovers: the parts, the key ranges, the marker. */
function removeFinished(work: string, plan: PassagesPlan): void {
  for (let i = 0; i < plan.shards; i++) fs.rmSync(partDir(work, i), { recursive: true, force: true });
  for (let r = 0; r < (plan.keyRanges ?? 0); r++) {
    fs.rmSync(listsFile(work, r), { force: true });
    fs.rmSync(listsMeta(work, r), { force: true });
  }
  fs.rmSync(finishFile(work), { force: true });
}

/**
 * Every part -> the index (one batch, one segment, merged as `passages index` merges unless noMerge); the
 * parts (and key ranges) are removed afterwards. Returns the number of documents added.
 *
 * Before its commit point, finish writes the batch it adds to WORK/passages-finish.json. A rerun whose plan's
 * batch is already in DIR's committed state (a finish killed after its commit point, before or during the
 * removal of the parts) adds nothing again: it ends the merge and the removal that finish had left, and
 * returns that batch's documents. The marker is not in DIR, so the index stays a single run's, file for file.
 */
export async function finishPassages(work: string, o: { noMerge?: boolean } = {}): Promise<number> {
  const plan = loadPassagesPlan(work);
  const staged = stagedBatch(work, plan);
  if (staged) {
    const ix = await PassageIndex.open(plan.dir, { seqLen: plan.seqLen, hash: plan.hash, bits: plan.bits }, true);
    let done = false;
    try {
      done = ix.holdsBatch(staged);
      if (done && !o.noMerge && ix.segments > 1) await ix.merge();
    } finally {
      ix.close();
    }
    if (done) {
      removeFinished(work, plan);
      return staged.count;
    }
  }
  const parts = checkedParts(work, plan, 'passages finish');
  // checked before DIR is created
  const keyRanges = plan.keyRanges === undefined ? undefined : await checkedRanges(work, plan, plan.keyRanges, parts, await indexSize(plan.dir));
  const ix = await PassageIndex.open(plan.dir, { seqLen: plan.seqLen, hash: plan.hash, bits: plan.bits }, true);
  let n = 0;
  try {
    n = await ix.addParts(parts.dirs, {
      keyRanges,
      onStaged: (batch) => writeIndexFile(finishFile(work), JSON.stringify({ plan: plan.id, batch }) + '\n'),
    }).catch((e: unknown) => {
      if (e instanceof NeardupError) {
        e.message = `passages finish: ${e.message}`;
        if (keyRanges && e.code === 'ERR_NEARDUP_CORRUPT') e.message += ' (run the lists stage of that key range again)';
      }
      throw e;
    });
    if (!o.noMerge && ix.segments > 1) await ix.merge();
  } catch (e) {
    // not committed: the marker names nothing in DIR
    const b = stagedBatch(work, plan);
    if (b && !ix.holdsBatch(b)) fs.rmSync(finishFile(work), { force: true });
    throw e;
  } finally {
    ix.close();
  }
  await killPoint('passages-finish-cleanup');
  removeFinished(work, plan);
  return n;
}
