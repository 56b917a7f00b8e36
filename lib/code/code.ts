// lib/code/ - copied-code detection (mirror of native/core/code): this file (CodeIndex, findCopiedCode,
// codeTokens, the languages and their file extensions; the `code` command is lib/cli/commands/code.ts).
// Imports native/ and util/ only.
//
// Source files are tokenised by a lexer per language family (C-like: C, C++, C#, Java, JavaScript, TypeScript,
// Go, Rust; and Python), comments and whitespace dropped, identifiers mapped to one symbol and literals to one
// per kind (unless kept); the normalised token streams are winnowed (Schleimer, Wilkerson and Aiken 2003:
// k-grams of k tokens, windows of w k-grams, the rightmost minimum) and the fingerprints of all files grouped
// in memory. Guarantee: every run of at least minTokens = w + k - 1 equal normalised tokens shared by two files
// of different groups is reported (as a region: the maximal shared run, merged with its neighbours), unless
// one of its fingerprints is in more than maxFiles groups (boilerplate) or in base code; runs shorter than
// minTokens are never reported. docs/code.md states the rules, defaults and memory.
import { SerialNative } from '../native/serial';
import { NeardupError, invalidArgument, nativeSync } from '../util/errors';
import { optionsObject } from '../util/validate';
import { native, type NativeCodeCorpus, type NativeCodeMatches } from '../native/addon';

export const CODE_LANGUAGES = ['c', 'cpp', 'csharp', 'java', 'javascript', 'typescript', 'go', 'rust', 'python'] as const;
export type CodeLanguage = typeof CODE_LANGUAGES[number];

/** File extensions (lower case, with the dot) and their languages; a .h file is read as C. */
export const CODE_EXTENSIONS: Readonly<Record<string, CodeLanguage>> = {
  '.c': 'c', '.h': 'c',
  '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.c++': 'cpp', '.hh': 'cpp', '.hpp': 'cpp', '.hxx': 'cpp', '.h++': 'cpp', '.ino': 'cpp',
  '.cs': 'csharp', '.java': 'java',
  '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.jsx': 'javascript',
  '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript', '.tsx': 'typescript',
  '.go': 'go', '.rs': 'rust', '.py': 'python', '.pyi': 'python', '.pyw': 'python',
};

/** The language of a file name by its extension, or undefined. */
export function languageOf(name: string): CodeLanguage | undefined {
  if (typeof name !== 'string') throw invalidArgument(TypeError, 'Expected name to be a string');
  const dot = name.lastIndexOf('.');
  if (dot < 0 || dot < name.lastIndexOf('/')) return undefined;
  return CODE_EXTENSIONS[name.slice(dot).toLowerCase()];
}

/** Dolos's defaults: k-grams of 23 tokens, windows of 17 k-grams, so shared runs of 39 tokens are guaranteed. */
export const DEFAULT_K = 23;
export const DEFAULT_MIN_TOKENS = 39;
export const DEFAULT_MAX_FILES = 10;
export const DEFAULT_MERGE_GAP = 16;
export const DEFAULT_MAX_REPEAT = 16;
export const DEFAULT_MAX_FILE_BYTES = 16 << 20;

export interface CodeIndexOptions {
  /** The guarantee: shared runs of at least this many normalised tokens are found, shorter ones never reported (default 39). */
  minTokens?: number;
  /** Tokens in a k-gram (default 23, or round(minTokens x 23 / 39) below 39); the window is then minTokens - k + 1 k-grams. */
  k?: number;
  /** Identifiers keep their names (default false: every identifier is one symbol, so renaming is no disguise). */
  keepIdentifiers?: boolean;
  /** Literals keep their text (default false: one symbol per kind: string, number, char). */
  keepLiterals?: boolean;
  /** Files larger than this are skipped (default 16 MiB; at most 2^32 - 1). */
  maxFileBytes?: number;
}

export interface CodeMatchOptions {
  /** A fingerprint found in more groups (files, or submissions) than this is boilerplate and ignored (default 10, MOSS's -m; 0: no limit). */
  maxFiles?: number;
  /** A fingerprint more often than this in one file is ignored there (default 16). */
  maxRepeat?: number;
  /** Shared runs in order in both files at most this many tokens apart are one region (default 16). */
  mergeGap?: number;
  /** Pairs whose larger shared fraction is below this are not reported (default 0). */
  minShared?: number;
  /** Pair entries (24 bytes each) made per pass over the fingerprints (default 2^25). */
  pairBudget?: number;
}

/** One source: a file path (read natively) or its text; lang by the path's extension when not given. */
export interface CodeSource {
  path?: string;
  text?: string | Uint8Array;
  lang?: CodeLanguage;
  /** Sources of one group (a submission) are never compared with each other (default: each source its own group). */
  group?: number;
  /** Base code (given to everyone): its k-grams are excluded from every match. */
  base?: boolean;
}

export type CodeSourceState = 'indexed' | 'binary' | 'invalid-utf8' | 'too-large' | 'base';
const STATES: CodeSourceState[] = ['indexed', 'binary', 'invalid-utf8', 'too-large', 'base'];

export interface CodeRegion {
  /** The sources (indexes in add order over all add calls). */
  sourceA: number;
  sourceB: number;
  /** First and last line (1-based) of the region in each. */
  linesA: [number, number];
  linesB: [number, number];
  /** Normalised tokens in the region (in A). */
  tokens: number;
  /** Token range [begin, end) in each source's normalised stream. */
  tokensA: [number, number];
  tokensB: [number, number];
}

export interface CodePair {
  /** The groups (group_a < group_b). */
  a: number;
  b: number;
  /** Fingerprints of A found in B / A's fingerprints (base code not counted), and the reverse. */
  sharedA: number;
  sharedB: number;
  /** Tokens of A covered by the regions. */
  tokens: number;
  regions: CodeRegion[];
}

export interface CodeMatches {
  pairs: CodePair[];
  stats: NativeCodeMatches['stats'];
}

function intIn(name: string, v: unknown, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalidArgument(RangeError, `${name} must be an integer from ${min} to ${max}, got ${String(v)}`);
  return v;
}

/** k and w from minTokens (and k): w = minTokens - k + 1. */
export function winnowParameters(options: { minTokens?: number; k?: number } = {}): { k: number; w: number; minTokens: number } {
  optionsObject(options);
  const minTokens = intIn('minTokens', options.minTokens, DEFAULT_MIN_TOKENS, 1, 1999);
  // below the default guarantee, k keeps Dolos's ratio of k to w + k - 1 (23 of 39)
  const k = intIn('k', options.k, Math.max(1, Math.min(DEFAULT_K, Math.round((minTokens * DEFAULT_K) / DEFAULT_MIN_TOKENS))), 1, Math.min(1000, minTokens));
  const w = minTokens - k + 1;
  if (w > 1000) throw invalidArgument(RangeError, `minTokens - k + 1 (the window) must be at most 1000, got ${w}`);
  return { k, w, minTokens };
}

/**
 * Files in, copied-code pairs out. add() tokenises sources on the native pool (binary files, files not UTF-8 and
 * files over maxFileBytes are skipped, and said so); match() winnows and pairs every source added so far.
 * Memory: 8 bytes per token of every file, and while matching about 2 x 16 bytes per fingerprint (2/(w+1) of
 * the tokens) plus the pair entries of one pass.
 */
export class CodeIndex extends SerialNative<NativeCodeCorpus> {
  private readonly sourceOf: number[] = [];  // the core's file index -> the source's index
  private sources = 0;
  readonly k: number;
  readonly w: number;
  readonly minTokens: number;

  constructor(options: CodeIndexOptions = {}) {
    super('the code index');
    optionsObject(options);
    const p = winnowParameters(options);
    this.k = p.k;
    this.w = p.w;
    this.minTokens = p.minTokens;
    const maxFileBytes = intIn('maxFileBytes', options.maxFileBytes, DEFAULT_MAX_FILE_BYTES, 1, 2 ** 32 - 1);
    this.handle = nativeSync(() => new native.CodeCorpus({
      k: p.k, w: p.w, keepIdentifiers: Boolean(options.keepIdentifiers), keepLiterals: Boolean(options.keepLiterals), maxFileBytes,
    }));
  }

  /** Adds sources (all paths or all texts in one call); resolves to what happened to each. */
  add(sources: ReadonlyArray<CodeSource>): Promise<CodeSourceState[]> {
    if (!Array.isArray(sources)) throw invalidArgument(TypeError, 'Expected sources to be an array');
    const n = sources.length;
    const langs = new Uint8Array(n), groups = new Uint32Array(n), base = new Uint8Array(n);
    const byPath = n > 0 && sources[0]?.path !== undefined && sources[0]?.text === undefined;
    const paths: string[] = [], texts: (string | Uint8Array)[] = [];
    for (let i = 0; i < n; i++) {
      const s = sources[i];
      if (s === null || typeof s !== 'object') throw invalidArgument(TypeError, `Expected sources[${i}] to be an object`);
      if (byPath) {
        if (typeof s.path !== 'string' || s.text !== undefined) throw invalidArgument(TypeError, `sources[${i}]: give every source of one call a path, or every one a text`);
        paths.push(s.path);
      } else {
        if (typeof s.text !== 'string' && !(s.text instanceof Uint8Array)) throw invalidArgument(TypeError, `sources[${i}]: text must be a string or a Uint8Array`);
        texts.push(s.text);
      }
      const lang = s.lang ?? (s.path === undefined ? undefined : languageOf(s.path));
      if (lang === undefined) throw invalidArgument(TypeError, `sources[${i}]: give lang (no known extension${s.path === undefined ? '' : ` in '${s.path}'`})`);
      const li = CODE_LANGUAGES.indexOf(lang);
      if (li < 0) throw invalidArgument(RangeError, `sources[${i}]: lang must be one of ${CODE_LANGUAGES.join(', ')}, got ${String(lang)}`);
      langs[i] = li;
      groups[i] = intIn(`sources[${i}].group`, s.group, this.sources + i, 0, 2 ** 32 - 2);
      base[i] = s.base ? 1 : 0;
    }
    this.live();
    const first = this.sources;
    this.sources += n;
    return this.enqueue(async (h) => {
      const st = await h.add(byPath ? { paths, langs, groups, base } : { texts, langs, groups, base });
      const out: CodeSourceState[] = [];
      for (let i = 0; i < st.length; i++) {
        out.push(STATES[st[i]]);
        if (st[i] === 0) this.sourceOf.push(first + i);
      }
      return out;
    });
  }

  /** Files indexed so far (not skipped, not base). */
  get files(): number {
    return this.live().files();
  }

  /** The pairs of groups sharing code, largest shared fraction first (then more tokens). */
  match(options: CodeMatchOptions = {}): Promise<CodeMatches> {
    optionsObject(options);
    const maxGroups = intIn('maxFiles', options.maxFiles, DEFAULT_MAX_FILES, 0, 2 ** 32 - 1);
    const maxRepeat = intIn('maxRepeat', options.maxRepeat, DEFAULT_MAX_REPEAT, 1, 2 ** 32 - 1);
    const mergeGap = intIn('mergeGap', options.mergeGap, DEFAULT_MERGE_GAP, 0, 2 ** 32 - 1);
    const pairBudget = intIn('pairBudget', options.pairBudget, 2 ** 25, 1, Number.MAX_SAFE_INTEGER);
    const minShared = options.minShared ?? 0;
    if (typeof minShared !== 'number' || !(minShared >= 0 && minShared <= 1)) throw invalidArgument(RangeError, `minShared must be a number from 0 to 1, got ${String(minShared)}`);
    this.live();
    return this.enqueue(async (h) => {
      const r = await h.match({ maxGroups, maxRepeat, mergeGap, minShared, pairBudget });
      const g = r.regions;
      const pairs: CodePair[] = [];
      for (let i = 0; i < r.groupA.length; i++) {
        const regions: CodeRegion[] = [];
        for (let j = r.regionStart[i]; j < r.regionStart[i + 1]; j++) {
          regions.push({
            sourceA: this.sourceOf[g.fileA[j]], sourceB: this.sourceOf[g.fileB[j]],
            linesA: [g.aFirstLine[j], g.aLastLine[j]], linesB: [g.bFirstLine[j], g.bLastLine[j]],
            tokens: g.tokens[j], tokensA: [g.aBegin[j], g.aEnd[j]], tokensB: [g.bBegin[j], g.bEnd[j]],
          });
        }
        pairs.push({ a: r.groupA[i], b: r.groupB[i], sharedA: r.sharedA[i], sharedB: r.sharedB[i], tokens: r.tokens[i], regions });
      }
      return { pairs, stats: r.stats };
    });
  }

  close(): void {
    this.closeHandle();
  }
}

export type CodeTokenKind = 'keyword' | 'identifier' | 'operator' | 'string' | 'number' | 'char' | 'preprocessor';
const KINDS: CodeTokenKind[] = ['keyword', 'identifier', 'operator', 'string', 'number', 'char', 'preprocessor'];

export interface CodeToken {
  kind: CodeTokenKind;
  /** The normalised value (31 bits): equal for equal keywords/operators, for every identifier and for every literal of a kind unless kept. */
  value: number;
  /** Byte range [begin, end) in the text's UTF-8. */
  begin: number;
  end: number;
  /** 1-based line. */
  line: number;
}

/** The tokens of one text (comments and whitespace dropped), on the calling thread. */
export function codeTokens(text: string | Uint8Array, lang: CodeLanguage, options: { keepIdentifiers?: boolean; keepLiterals?: boolean } = {}): CodeToken[] {
  if (typeof text !== 'string' && !(text instanceof Uint8Array)) throw invalidArgument(TypeError, 'Expected text to be a string or a Uint8Array');
  if (!CODE_LANGUAGES.includes(lang)) throw invalidArgument(RangeError, `lang must be one of ${CODE_LANGUAGES.join(', ')}, got ${String(lang)}`);
  optionsObject(options);
  const r = nativeSync(() => native.codeTokens(text, lang, { keepIdentifiers: Boolean(options.keepIdentifiers), keepLiterals: Boolean(options.keepLiterals) }));
  const out: CodeToken[] = [];
  for (let i = 0; i < r.kind.length; i++) out.push({ kind: KINDS[r.kind[i]], value: r.value[i], begin: r.begin[i], end: r.end[i], line: r.line[i] });
  return out;
}

/** Convenience: the copied-code pairs of named texts (each its own group), with the options of both steps. */
export async function findCopiedCode(files: ReadonlyArray<{ text: string | Uint8Array; lang: CodeLanguage; base?: boolean }>,
  options: CodeIndexOptions & CodeMatchOptions = {}): Promise<CodeMatches> {
  if (!Array.isArray(files)) throw invalidArgument(TypeError, 'Expected files to be an array');
  optionsObject(options);
  const { minTokens, k, keepIdentifiers, keepLiterals, maxFileBytes, ...match } = options;
  const index = new CodeIndex({ minTokens, k, keepIdentifiers, keepLiterals, maxFileBytes });
  try {
    const states = await index.add(files.map((f) => ({ text: f.text, lang: f.lang, base: f.base })));
    const bad = states.findIndex((s) => s !== 'indexed' && s !== 'base');
    if (bad >= 0) throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `file ${bad}: skipped (${states[bad]})`);
    return await index.match(match);
  } finally {
    index.close();
  }
}
