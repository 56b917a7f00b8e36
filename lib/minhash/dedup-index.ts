// Dedup against the index of earlier runs, and the index a run writes (docs/lsh.md, "Against an index"): the
// settings an index carries in its metadata, how a run takes them (options given must equal them, options not
// given come from the index), the keys of a run's documents, and the metadata written. dedup()'s options and
// settings (DedupOptions, DedupSettings) are declared here, below dedup.ts, which re-exports them.
import { NeardupError, invalidArgument } from '../util/errors';
import { LshIndex, checkStringKey } from './lsh';
import type { ShingleOptions } from '../text/shingles';
import { version } from '../util/version';

/** `metadata.format` of an index written by dedup. */
export const DEDUP_INDEX_FORMAT = 'neardup-dedup-index';

/**
 * The keys of the documents in an index written by dedup: 'number' = the document's number counted over every
 * run so far (this run's document i is `documents` + i, `documents` being the documents read by the runs that
 * built the index), or 'id' = the ids given with the documents (DedupSession.add(texts, ids); the CLI's
 * --id-field).
 */
export type DedupIndexKeys = 'number' | 'id';

export type DedupProfile = 'fast' | 'doubri-v1' | 'datasketch';
export type DedupVerify = 'none' | 'estimate' | 'exact';
export type DedupClustering = 'kept' | 'components';

/**
 * Options of dedup(). The defaults are the verified answer at the threshold: char 5-grams of the lower-cased
 * text, recall banding, exact verification of candidate pairs (texts kept in a temporary file), doubri's
 * keep rule. Profile 'doubri-v1' instead defaults to doubri 1.0 exactly: the text as is, 40 x 20 bands, no
 * verification. Every effective value is in `DedupSession.settings`.
 */
export interface DedupOptions extends ShingleOptions {
  /** MinHash profile. Default 'fast'. */
  profile?: DedupProfile;
  /** Values per signature (default: 128; doubri-v1: 800). */
  numPerm?: number;
  /** MinHash seed (see minhash()). */
  seed?: number | bigint;
  /** Jaccard threshold: picks (b, r) as datasketch does (unless b and r are given) and is the verification bar. Default 0.8. */
  threshold?: number;
  b?: number;
  r?: number;
  /**
   * How (b, r) follow from the threshold when they are not given: 'datasketch' (datasketch's balanced
   * choice, optimalParam), 'recall' (recallParam: every pair at or above the threshold is a candidate with
   * probability >= minRecall, fewest false candidates), or 'auto' (default): 'recall' when verifying, else
   * 'datasketch'. doubri-v1 without a threshold keeps doubri's 40 bands of 20 values either way.
   */
  banding?: 'auto' | 'datasketch' | 'recall';
  /** Target collision probability at the threshold for banding 'recall'. Default 0.99. */
  minRecall?: number;
  /**
   * Re-check candidate pairs: 'exact' (Jaccard of the shingle sets; default, except doubri-v1), 'estimate'
   * (fraction of equal signature values) or 'none' (every candidate counts: fastest).
   */
  verify?: DedupVerify;
  /**
   * 'kept' (default): documents are decided in order and one is dropped only for an earlier kept document
   * it matches (doubri's rule; its representative is that document); 'components': connected components of
   * the matches, the first member kept (chains may join documents below the threshold).
   */
  clustering?: DedupClustering;
  /** Collect the reported pairs. */
  pairs?: boolean;
  /**
   * With `pairs`: the cap on reported pairs (default DEFAULT_MAX_RESULTS, 2^25 = 33,554,432: 512 MiB of
   * result); more fail with ERR_NEARDUP_TOO_MANY_RESULTS before they are copied out. Each reported pair
   * costs BYTES_PER_PAIR bytes of result.
   */
  maxPairs?: number;
  /**
   * With `pairs`: write the reported pairs to a temporary file in `tmp` (DedupResult.pairsFile, read it before
   * close() or saveIndex(), which remove it; 16-byte records: u32 a, u32 b, f32 estimate, f32 exact, little-endian) instead of pairA..pairExact,
   * so that they take no memory; maxPairs does not apply. (The CLI's --pairs.)
   */
  pairsFile?: boolean;
  /**
   * Memory budget in bytes: band keys and signatures beyond it are spilled to `tmp`, and exact verification
   * holds at most this much of shingle sets at once (without a budget: 64 MiB; texts always go to `tmp`).
   * 0 or absent: band keys and signatures in memory. It also bounds per-document work: a document over
   * dedupLimits().documentBytes (budget / bytesPerDocumentByte: 6 for fast, 20 datasketch, 60 doubri-v1, 64 with verify 'exact') and
   * more than budget / 16 documents are refused (ERR_NEARDUP_INVALID_INPUT) instead of exceeding it (for
   * these two limits a budget under 64 MiB counts as 64 MiB).
   */
  memory?: number;
  /**
   * The index of earlier runs to deduplicate against: an LshIndex loaded from a file that `saveIndex()` (or
   * `neardup dedup --index-out`) wrote. Its settings are the run's: options left out are taken from it, options
   * given must equal its (else a RangeError lists every difference). A document matching an indexed document (as
   * two documents of one run match: verified at the threshold, or sharing a band with --fast) is dropped for the
   * earliest such document (`indexMatches`), exactly as one run over the indexed documents followed by these
   * would drop it. The index is pinned (unchangeable) while the session lives. See docs/lsh.md, "Against an index".
   */
  index?: LshIndex<bigint> | LshIndex<string>;
  /** Keep what `saveIndex()` needs to write the index after finish(): the indexed documents and this run's kept ones. */
  indexOut?: boolean;
  /**
   * The keys of the index written: 'number' (default: documents numbered across runs, this run's document i
   * being the index's `documents` + i) or 'id' (the ids given to add()). With `index`, the index's.
   */
  indexKeys?: DedupIndexKeys;
  /**
   * @internal How 'id' keys are written: 'json' = each key is the id's JSON text (`"a1"`, `17`), as the CLI's
   * --id-field gives them, recorded in the index (`id_text`) so that a later run prints them as they were read.
   */
  indexIdText?: 'json';
  /**
   * Folder for spilled files, the texts kept for exact verification included (default: the system temp
   * folder): they go to a sub-folder `neardup-spill-PID-XXXXXX` (locked while in use), removed when the session
   * ends; stale such folders (unlocked, and their process gone) are removed when a session starts.
   */
  tmp?: string;
}

/** Every setting a dedup run uses, defaults filled in. */
export interface DedupSettings {
  profile: DedupProfile;
  threshold: number;
  numPerm: number;
  b: number;
  r: number;
  /** The seed given, or the profile's default (fast 0, doubri-v1 0, datasketch 1). */
  seed: string;
  banding: 'explicit' | 'recall' | 'datasketch' | 'doubri';
  shingle: Required<ShingleOptions>;
  verify: DedupVerify;
  clustering: DedupClustering;
}

/** A run's settings as JSON (the CLI summary's names). */
export interface DedupSettingsJson {
  profile: string;
  threshold: number;
  num_perm: number;
  b: number;
  r: number;
  seed: string;
  banding: string;
  shingle: { unit: string; n: number; split: string; lowercase: boolean; strip_punctuation: boolean; fold_whitespace: boolean; short: string; normalize?: string; cjk?: string };
  verify: string;
  clustering: string;
}

/** The metadata (JSON) of an index written by dedup. */
export interface DedupIndexMeta {
  format: typeof DEDUP_INDEX_FORMAT;
  version: 1;
  /** The neardup version that wrote it. */
  neardup: string;
  /** Documents read by all the runs that built the index (bad lines included): the next run numbers its documents from here. */
  documents: number;
  /** Runs that built it. */
  runs: number;
  keys: DedupIndexKeys;
  /** With 'id' keys written by `neardup dedup --id-field`: 'json', each key being the id's JSON text. */
  id_text?: 'json';
  settings: DedupSettingsJson;
}

export function settingsJson(s: DedupSettings): DedupSettingsJson {
  const sh = s.shingle;
  return {
    profile: s.profile, threshold: s.threshold, num_perm: s.numPerm, b: s.b, r: s.r, seed: s.seed, banding: s.banding,
    shingle: {
      unit: sh.unit, n: sh.n, split: sh.split, lowercase: sh.lowercase, strip_punctuation: sh.stripPunctuation,
      fold_whitespace: sh.foldWhitespace, short: sh.short, ...normalizeJson(sh.normalize), ...cjkJson(sh.split, sh.cjk),
    },
    verify: s.verify, clustering: s.clustering,
  };
}

/** The dedup metadata of an index; ERR_NEARDUP_INVALID_INPUT for an index not written by dedup. */
export function readIndexMeta(index: LshIndex<bigint | string>): DedupIndexMeta {
  let meta: unknown;
  try {
    meta = JSON.parse(index.metadata);
  } catch {
    meta = undefined;
  }
  const m = meta as Partial<DedupIndexMeta> | undefined;
  if (!m || m.format !== DEDUP_INDEX_FORMAT || typeof m.settings !== 'object' || m.settings === null ||
      typeof m.settings.shingle !== 'object' || m.settings.shingle === null || !Number.isSafeInteger(m.documents) ||
      (m.keys !== 'number' && m.keys !== 'id') || (m.id_text !== undefined && (m.id_text !== 'json' || m.keys !== 'id')))
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', 'the index was not written by neardup dedup (no dedup settings in its metadata)');
  if (m.version !== 1) throw new NeardupError('ERR_NEARDUP_UNSUPPORTED', `dedup index metadata version ${String(m.version)} is not supported`);
  // Counts out of range would number the next run's documents wrongly (a negative D makes keys collide with
  // earlier ones; a huge one loses exactness): refused, with the file named.
  const file = index.path;
  const damaged = (why: string) => new NeardupError('ERR_NEARDUP_CORRUPT',
    `${file === undefined ? 'the index' : `'${file}'`}: its dedup metadata is damaged: ${why}`, file === undefined ? {} : { file });
  const size = index.size;
  const documents = m.documents as number;
  if (documents < size || documents > MAX_INDEX_DOCUMENTS)
    throw damaged(`documents ${documents} is out of range (at least its ${size} entries, at most 2^53 - 2^32)`);
  if (!Number.isSafeInteger(m.runs) || (m.runs as number) < 1 || (m.runs as number) > documents + 1e9)
    throw damaged(`runs ${String(m.runs)} is out of range`);
  const p = index.params, st = m.settings as Partial<DedupSettingsJson>;
  for (const [name, have, want] of [['num_perm', st.num_perm, p.numPerm], ['b', st.b, p.b], ['r', st.r, p.r]] as const) {
    if (have !== want) throw damaged(`settings.${name} ${JSON.stringify(have)} differs from the index's own ${want}`);
  }
  return m as DedupIndexMeta;
}

/** The most documents an index's runs may have read: the next run's numbers (D + i, i < 2^32) stay exact. */
export const MAX_INDEX_DOCUMENTS = Number.MAX_SAFE_INTEGER - 2 ** 32;

/**
 * Refuses an index that lacks what a run against it needs (ERR_NEARDUP_INVALID_INPUT naming the file and what
 * it lacks): each entry's signature (always: a document is verified against indexed ones, and the index
 * written carries them on), and with verify 'exact' each entry's text. An index written by LshIndex.save
 * through the API keeps neither; only dedup (DedupSession.saveIndex, `neardup dedup --index-out`) writes them.
 */
export function checkIndexStore(index: LshIndex<bigint | string>, verify: string): void {
  const info = index.info;
  const where = index.path === undefined ? 'the index' : `'${index.path}'`;
  const details = index.path === undefined ? {} : { file: index.path };
  const lacks: string[] = [];
  if (!info.storesSignatures) lacks.push("its entries' signatures");
  if (verify === 'exact' && !info.storesData) lacks.push("its entries' texts (needed by exact verification)");
  if (lacks.length > 0) {
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${where} lacks ${lacks.join(' and ')}: it was not written by a dedup run ` +
      '(LshIndex.save keeps neither; write it with DedupSession.saveIndex or neardup dedup --index-out)', details);
  }
  if (verify !== 'exact' && info.storesData) {
    throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `${where} keeps its entries' texts, which only an index written with ` +
      `verify 'exact' does, but this run verifies '${verify}': its metadata does not match its contents`, details);
  }
}

const SHINGLE_KEYS: [keyof ShingleOptions, keyof DedupSettingsJson['shingle']][] = [
  ['unit', 'unit'], ['n', 'n'], ['split', 'split'], ['lowercase', 'lowercase'], ['stripPunctuation', 'strip_punctuation'],
  ['foldWhitespace', 'fold_whitespace'], ['short', 'short'], ['normalize', 'normalize'], ['cjk', 'cjk'],
];

/** `cjk` in settings' JSON: only under the unicode split, the one it shapes (an index from before it had none: 'chars'). */
export function cjkJson(split: string | undefined, cjk: string | undefined): { cjk?: string } {
  return split === 'unicode' ? { cjk: cjk ?? 'chars' } : {};
}

/** `normalize` in settings' JSON: only when not 'none' (an index or summary from before it had none, and equals 'none'). */
export function normalizeJson(form: string | undefined): { normalize?: string } {
  return form !== undefined && form !== 'none' ? { normalize: form } : {};
}

const shingleJson = (sh: DedupSettingsJson['shingle'], k: keyof DedupSettingsJson['shingle']) =>
  (k === 'normalize' ? sh.normalize ?? 'none' : k === 'cjk' ? sh.cjk ?? 'chars' : sh[k]);

/**
 * A run's options with the index's settings filled in where none is given. (b, r) come from the index unless
 * the run chooses them (b, r, banding or minRecall given): then they are compared like everything else.
 */
export function optionsFromIndex(meta: DedupIndexMeta, given: DedupOptions): DedupOptions {
  const s = meta.settings;
  const out: DedupOptions = { ...given };
  const fill = <K extends keyof DedupOptions>(k: K, v: DedupOptions[K]) => {
    if (out[k] === undefined) out[k] = v;
  };
  fill('profile', s.profile as DedupOptions['profile']);
  fill('threshold', s.threshold);
  fill('numPerm', s.num_perm);
  fill('seed', BigInt(s.seed));
  fill('verify', s.verify as DedupOptions['verify']);
  fill('clustering', s.clustering as DedupOptions['clustering']);
  for (const [opt, json] of SHINGLE_KEYS) fill(opt, shingleJson(s.shingle, json) as never);
  if (given.b === undefined && given.r === undefined && given.banding === undefined && given.minRecall === undefined) {
    out.b = s.b;
    out.r = s.r;
  }
  return out;
}

/** "name: run value here, index value in the index" for every setting that differs (banding is how (b, r) were chosen: not compared). */
export function settingsDifferences(run: DedupSettingsJson, index: DedupSettingsJson): string[] {
  const out: string[] = [];
  const cmp = (name: string, a: unknown, b: unknown) => {
    if (a !== b) out.push(`${name} ${JSON.stringify(a)} here, ${JSON.stringify(b)} in the index`);
  };
  for (const k of ['profile', 'threshold', 'num_perm', 'b', 'r', 'seed', 'verify', 'clustering'] as const) cmp(k, run[k], index[k]);
  for (const [, k] of SHINGLE_KEYS) cmp(`shingle.${k}`, shingleJson(run.shingle, k), shingleJson(index.shingle, k));
  return out;
}

/** What a session does with an index: the one it reads (if any) and the one it writes (if asked). */
export class IndexRun {
  readonly meta?: DedupIndexMeta;
  readonly keys: DedupIndexKeys;
  /** 'json': the 'id' keys are ids' JSON texts (DedupOptions.indexIdText). */
  readonly idText: 'json' | undefined;
  /** This run's first document number (integer keys). */
  readonly documentsBefore: number;

  private constructor(readonly prior: LshIndex<bigint | string> | undefined, readonly write: boolean, keys: DedupIndexKeys | undefined, idText: unknown) {
    this.meta = prior ? readIndexMeta(prior) : undefined;
    if (keys !== undefined && keys !== 'number' && keys !== 'id') throw invalidArgument(RangeError, "indexKeys must be 'number' or 'id'");
    if (this.meta && keys !== undefined && keys !== this.meta.keys)
      throw invalidArgument(RangeError, `the index has ${this.meta.keys === 'id' ? 'document ids' : 'document numbers'} as keys, not ${keys === 'id' ? 'ids' : 'numbers'}`);
    this.keys = this.meta?.keys ?? keys ?? 'number';
    if (idText !== undefined && idText !== 'json') throw invalidArgument(RangeError, "indexIdText must be 'json'");
    if (idText !== undefined && this.keys !== 'id') throw invalidArgument(TypeError, "indexIdText needs indexKeys 'id'");
    // an index keeps the kind of keys it was made with (the index's, when idText is left out)
    if (this.meta && idText !== undefined && this.meta.id_text !== idText)
      throw invalidArgument(RangeError, "the index's keys are ids given through the API, not ids' JSON texts (neardup dedup --id-field)");
    this.idText = this.meta ? this.meta.id_text : idText === 'json' ? 'json' : undefined;
    this.documentsBefore = this.meta?.documents ?? 0;
  }

  /** undefined when the options name no index. */
  static of(options: DedupOptions): IndexRun | undefined {
    const { index, indexOut, indexKeys, indexIdText } = options;
    if (index === undefined && !indexOut) {
      if (indexKeys !== undefined || indexIdText !== undefined) throw invalidArgument(TypeError, `${indexKeys !== undefined ? 'indexKeys' : 'indexIdText'} needs index or indexOut`);
      return undefined;
    }
    if (index !== undefined && !(index instanceof LshIndex)) throw invalidArgument(TypeError, 'Expected index to be an LshIndex');
    if (indexOut !== undefined && typeof indexOut !== 'boolean') throw invalidArgument(TypeError, 'Expected indexOut to be a boolean');
    return new IndexRun(index, indexOut ?? false, indexKeys, indexIdText);
  }

  /** The run's options with the index's settings where none is given. */
  options(given: DedupOptions): DedupOptions {
    return this.meta ? optionsFromIndex(this.meta, given) : given;
  }

  /** Refuses a run whose settings differ from the index's, naming every difference. */
  check(settings: DedupSettings): void {
    if (!this.meta) return;
    const diff = settingsDifferences(settingsJson(settings), this.meta.settings);
    if (diff.length > 0)
      throw invalidArgument(RangeError, `this run's settings differ from the index's: ${diff.join('; ')} ` +
        '(leave a setting out to take the index\'s; an index only extends runs with its own settings)');
    if (settings.clustering !== 'kept')
      throw invalidArgument(RangeError, "an index works with clustering 'kept' only (connected components of a later run could join documents an earlier run kept)");
    if (this.prior) checkIndexStore(this.prior, settings.verify);
  }

  /** The keys of a batch: ids (checked) for 'id' keys; none for document numbers. */
  batchKeys(ids: ReadonlyArray<string> | undefined, count: number): string[] | undefined {
    if (this.keys === 'number') {
      if (ids !== undefined) throw invalidArgument(TypeError, 'ids are taken only when the index has ids as keys (indexKeys: \'id\')');
      return undefined;
    }
    if (!this.write) return undefined;  // only the index written needs them
    if (!Array.isArray(ids)) throw invalidArgument(TypeError, "Expected ids (an array of strings): the index's keys are document ids");
    if (ids.length !== count) throw invalidArgument(RangeError, `expected ${count} ids, one per document, got ${ids.length}`);
    ids.forEach((id, i) => checkStringKey(id, `ids[${i}]`));
    return ids as string[];
  }

  /** The native session's index options. */
  native(): { prior?: unknown; write: boolean; keyType: 'int' | 'string'; keyOffset: number } {
    return {
      ...(this.prior ? { prior: this.prior.nativeHandle } : {}),
      write: this.write, keyType: this.keys === 'id' ? 'string' : 'int', keyOffset: this.documentsBefore,
    };
  }

  /** The metadata of the index written after a run of `documents` documents. */
  metaAfter(settings: DedupSettings, documents: number): DedupIndexMeta {
    return {
      format: DEDUP_INDEX_FORMAT, version: 1, neardup: version, documents: this.documentsBefore + documents,
      runs: (this.meta?.runs ?? 0) + 1, keys: this.keys, ...(this.idText ? { id_text: this.idText } : {}), settings: { ...settingsJson(settings), banding: this.meta?.settings.banding ?? settings.banding },
    };
  }
}
