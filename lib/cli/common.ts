// Pieces every CLI command shares: option parsing, shingle options, output with back-pressure, errors.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CLUSTER_UNITS, NORMALIZE_FORMS, WORD_SPLITS, type ShingleOptions } from '../text/shingles';
import { setThreads } from '../native/runtime';
import { UsageError, intOption, oneOf } from '../util/options';
import { setProgressMode } from './progress';

export { UsageError, floatOption, intOption, oneOf } from '../util/options';
export { fieldOption, idFieldOption, inputOptionsFrom } from '../io/documents';

export interface Command {
  name: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

/** A command under another (`neardup doubri self`): its line in the parent's help is its summary. */
export interface Subcommand extends Command {
  summary: string;
}

type Options = NonNullable<ParseArgsConfig['options']>;

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * Parses a command's options, plus those every command takes: -h/--help, --threads N (applied here: the
 * native pool's size for this process) and --progress MODE (lib/cli/progress.ts). A mistyped option is a one-line error with the nearest known option.
 */
export function parse(args: string[], options: Options, allowPositionals = true): { values: OptionValues; positionals: string[] } {
  const all: Options = { help: { type: 'boolean', short: 'h' }, threads: { type: 'string' }, progress: { type: 'string' }, ...options };
  let r;
  try {
    r = parseArgs({ args, options: all, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError(unknownOptionMessage(e, all) ?? (e as Error).message.split('\n').join(' '));
  }
  const values = r.values as OptionValues;
  if (values.threads !== undefined) setThreads(intOption('threads', values.threads, 0, 1, 256));
  setProgressMode(values.progress);
  return { values, positionals: r.positionals };
}

/** Options for the shingle stream, shared by every engine's command. */
export const SHINGLE_OPTIONS: Options = {
  unit: { type: 'string' },
  ngram: { type: 'string', short: 'n' },
  split: { type: 'string' },
  cjk: { type: 'string' },
  lowercase: { type: 'boolean' },
  'strip-punctuation': { type: 'boolean' },
  'fold-whitespace': { type: 'boolean' },
  short: { type: 'string' },
  normalize: { type: 'string' },
};

export const SHINGLE_USAGE = `Shingles:
  --unit char|word          char n-grams of code points (default) or word n-grams
  -n, --ngram N             shingle length in units (default 5)
  --split whitespace|nonword|unicode  word splitting: str.split(), \\W+, or Unicode word boundaries
                            with scripts without spaces cut into characters (docs/languages.md;
                            the default of dedup and simhash fingerprint; else whitespace)
  --cjk chars|bigrams       --split unicode: Han, kana, Thai, Lao, Khmer, Myanmar units: each
                            character, or overlapping character pairs (dedup: bigrams; simhash: chars)
  --lowercase               lower-case the text
  --strip-punctuation       drop punctuation
  --fold-whitespace         collapse whitespace runs (char unit)
  --short whole|none        texts shorter than n: one shingle of all of it (default) or none
  --normalize none|nfc|nfkc|nfkc_casefold  Unicode normalisation before everything else (default none;
                            nfkc: full-width forms, ligatures; nfkc_casefold: nfkc, lower-cased)`;

export const INPUT_OPTIONS: Options = {
  field: { type: 'string' },
  'on-bad-line': { type: 'string' },
};

export const INPUT_USAGE = `Input (JSONL plain, gzip or zstd, or Parquet, told by the first bytes; '-' or nothing for stdin):
  --field NAME              the string field (Parquet: column) holding the text (default "text"); a dot
                            path names a nested member (meta.content; write a dot in a name as \\.)
  --on-bad-line error|skip|empty  a malformed line stops the run (default), or is kept in place
                            with no shingles (skip) or as an empty text (empty)`;

export function shingleOptionsFrom(values: Record<string, unknown>, defaults: ShingleOptions = {}): ShingleOptions {
  return {
    unit: oneOf('unit', values.unit, ['char', 'word'] as const, defaults.unit ?? 'char'),
    n: intOption('ngram', values.ngram, defaults.n ?? 5, 1, 4096),
    split: oneOf('split', values.split, WORD_SPLITS, defaults.split ?? 'whitespace'),
    cjk: oneOf('cjk', values.cjk, CLUSTER_UNITS, defaults.cjk ?? 'chars'),
    lowercase: Boolean(values.lowercase ?? defaults.lowercase),
    stripPunctuation: Boolean(values['strip-punctuation'] ?? defaults.stripPunctuation),
    foldWhitespace: Boolean(values['fold-whitespace'] ?? defaults.foldWhitespace),
    short: oneOf('short', values.short, ['whole', 'none'] as const, defaults.short ?? 'whole'),
    normalize: oneOf('normalize', values.normalize, NORMALIZE_FORMS, defaults.normalize ?? 'none'),
  };
}

/** Buffered writes to a stream that respect back-pressure. */
export class Output {
  private buf: string[] = [];
  private size = 0;
  constructor(private readonly stream: NodeJS.WritableStream = process.stdout) {}
  async write(s: string): Promise<void> {
    this.buf.push(s);
    this.size += s.length;
    if (this.size >= 1 << 20) await this.flush();
  }
  /** Writes bytes (after the text buffered so far); resolves once the stream is done with them. */
  async writeBytes(b: Uint8Array): Promise<void> {
    await this.flush();
    if (b.length === 0) return;
    await new Promise<void>((resolve, reject) => this.stream.write(b, (e) => (e ? reject(e) : resolve())));
  }
  async flush(): Promise<void> {
    if (this.buf.length === 0) return;
    const data = this.buf.join('');
    this.buf = [];
    this.size = 0;
    if (!this.stream.write(data)) await new Promise<void>((r) => this.stream.once('drain', () => r()));
  }
}

/** "unknown option '--thresold' (did you mean --threshold?)" for parseArgs' unknown-option errors, else undefined. */
function unknownOptionMessage(e: unknown, options: Options): string | undefined {
  if ((e as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  const m = /'(-[^']*)'/.exec((e as Error).message);
  if (!m) return undefined;
  const given = m[1];
  if (!given.startsWith('--')) return `unknown option '${given}'`;
  const name = given.replace(/^--?/, '').replace(/=.*$/, '');
  let best: string | undefined;
  let bestDist = Infinity;
  for (const known of Object.keys(options)) {
    const d = editDistance(name.toLowerCase(), known);
    if (d < bestDist) { best = known; bestDist = d; }
  }
  const close = best !== undefined && (bestDist <= Math.max(1, Math.floor(best.length / 3)) || (name.length >= 3 && best.startsWith(name)));
  return `unknown option '${given}'${close ? ` (did you mean --${best}?)` : ''}`;
}

/** The name a mistyped one most likely meant: an edit or two away (a third of its length), or the only one it begins. */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  for (const n of names) {
    const d = editDistance(name.toLowerCase(), n);
    if (d < bestDist) { best = n; bestDist = d; }
  }
  if (best !== undefined && bestDist <= Math.max(1, Math.floor(best.length / 3))) return best;
  const prefix = names.filter((n) => name.length >= 2 && n.startsWith(name.toLowerCase()));
  return prefix.length === 1 ? prefix[0] : undefined;
}

/** " (did you mean 'x'?)" for a mistyped command or sub-command, else ''. */
export function didYouMean(name: string, names: readonly string[]): string {
  const n = nearestName(name, names);
  return n === undefined ? '' : ` (did you mean '${n}'?)`;
}

/** Optimal string alignment distance (edits, with adjacent transpositions counting one). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The one-line report of a usage mistake: the message and where to find the options (no usage dump). */
export function usageErrorText(command: string, e: UsageError): string {
  return `${command}: ${e.message}\nRun '${command} --help' for the options.\n`;
}

/** Checks NEARDUP_THREADS (read by the native pool, which ignores a bad value): a clear error instead. */
export function checkThreadsEnv(env: NodeJS.ProcessEnv = process.env): void {
  const v = env.NEARDUP_THREADS;
  if (v === undefined || v === '') return;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 256)
    throw new UsageError(`NEARDUP_THREADS must be an integer from 1 to 256, got '${v}'`);
}
