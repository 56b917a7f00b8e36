// neardup code: copied code between source files (or submissions: a folder each), by winnowed fingerprints of
// normalised token streams (lib/code/code.ts); one JSON line per pair on stdout, largest shared fraction
// first. docs/code.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../../util/errors';
import {
  CodeIndex, CODE_EXTENSIONS, CODE_LANGUAGES, DEFAULT_MAX_FILES, DEFAULT_MAX_FILE_BYTES, DEFAULT_MERGE_GAP, DEFAULT_MIN_TOKENS,
  DEFAULT_K, languageOf, winnowParameters, type CodeLanguage, type CodeSource, type CodeSourceState,
} from '../../code/code';
import { checkInputFiles, idValue, readDocuments } from '../../io/input';
import { OutputFile, checkFiles } from '../../io/files';
import { writeSummary } from '../summary';
import { Progress } from '../progress';
import { INPUT_OPTIONS, UsageError, floatOption, idFieldOption, inputOptionsFrom, intOption, oneOf, parse, type Command } from '../common';

const DOCUMENTS = /\.(jsonl|ndjson)(\.gz|\.zst)?$|\.parquet$/i;

export const codeCommand: Command = {
  name: 'code',
  usage: `Usage: neardup code [options] PATH... [--out FILE]

Finds copied code: each source file is tokenised by a lexer for its language (by extension, or --lang),
comments and whitespace dropped, every identifier one symbol and every literal one per kind (so renamed
variables and changed constants are no disguise); the token streams are winnowed (k-grams of k tokens,
windows of w k-grams, the rightmost minimum) and the fingerprints of all files matched in memory. Every run
of at least --min-tokens equal normalised tokens shared by two files is reported, unless a fingerprint of it
is boilerplate (in more than --max-files files) or base code (--base); shorter runs never are.

PATH: a directory (walked for files with a known extension; names starting with '.' are skipped), a source
file, or documents: JSONL (.jsonl or .ndjson; plain, gzip .gz or zstd .zst) or Parquet (.parquet), one source each
(--field, --id-field; the language by --lang, else by the id's extension). --files-from FILE reads paths,
one a line ('-': standard input). Languages and extensions: ${CODE_LANGUAGES.map((l) => `${l} (${Object.keys(CODE_EXTENSIONS).filter((e) => CODE_EXTENSIONS[e] === l).join(' ')})`).join(', ')}.

Output: one JSON line per pair, the larger shared fraction first (then more tokens):
  {"a": NAME, "b": NAME, "shared_a": F, "shared_b": F, "tokens": N,
   "regions": [{"a": [FIRST_LINE, LAST_LINE], "b": [FIRST_LINE, LAST_LINE], "tokens": N}, ...]}
  shared_a: fingerprints of a found in b / a's fingerprints (base code not counted); tokens: tokens of a in
  the regions; a region: a maximal run of equal normalised tokens (runs in order in both files at most
  --merge-gap tokens apart merged), its first and last lines in each file. With --submissions a and b are
  submissions and each region also has "file_a" and "file_b".

Options:
  --out FILE                the pairs there instead of standard output (written whole or not at all)
  --min-tokens N            the guarantee: shared runs of at least N normalised tokens are found (default
                            ${DEFAULT_MIN_TOKENS}: k = 23 tokens, w = 17 k-grams, Dolos's defaults; w = N - k + 1)
  --k N                     tokens in a k-gram (default 23; below --min-tokens 39, round(N x 23 / 39))
  --min-shared F            only pairs whose larger shared fraction is at least F (0 to 1; default 0)
  --max-files M             a fingerprint in more than M files (submissions) is boilerplate, ignored (default
                            ${DEFAULT_MAX_FILES}, as MOSS's -m; 0: no limit)
  --base DIR                code given to everyone (a directory or file; may be repeated): its k-grams are
                            never evidence, and regions stop at it
  --submissions             each top-level folder of a directory PATH is one submission (a file directly in
                            it one too; a JSONL id's submission is its part before the first '/'): files of
                            one submission are not compared, and pairs are of submissions
  --lang L                  read every file as L (${CODE_LANGUAGES.join(', ')}); directories are walked for
                            L's extensions only
  --keep-identifiers        identifiers keep their names (default: all one symbol)
  --keep-literals           literals keep their text (default: one symbol per kind)
  --merge-gap N             shared runs at most N tokens apart (in order in both files) are one region
                            (default ${DEFAULT_MERGE_GAP})
  --max-file-bytes N        larger files are skipped and counted (default ${DEFAULT_MAX_FILE_BYTES})
  --files-from FILE         more paths, one a line
  --field NAME              documents: the field holding the source (default "text")
  --id-field NAME           documents: the field naming each source (default FILE:LINE)
  --on-bad-line error|skip|empty  documents: a malformed line stops the run (default), or is skipped

Files with a NUL byte (binary) or not UTF-8 are skipped and counted, never an error. Memory: 8 bytes per
token of every file, and while matching about 32 bytes per fingerprint (2/(w+1) of the tokens) plus the pair
entries (24 bytes each, made in passes of at most 2^25).

Prints a JSON summary on stderr: documents (sources read), files, skipped_binary, skipped_invalid_utf8,
skipped_too_large, base_files, tokens, fingerprints, k, w, min_tokens, max_files, boilerplate_hashes,
base_fingerprints, candidate_pairs, pairs, regions, index_seconds (reading and tokenising), match_seconds,
write_seconds, seconds, cpu_seconds, peak_rss_mb.`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...INPUT_OPTIONS,
      out: { type: 'string', short: 'o' },
      'min-tokens': { type: 'string' },
      k: { type: 'string' },
      'min-shared': { type: 'string' },
      'max-files': { type: 'string' },
      base: { type: 'string', multiple: true },
      submissions: { type: 'boolean' },
      lang: { type: 'string' },
      'keep-identifiers': { type: 'boolean' },
      'keep-literals': { type: 'boolean' },
      'merge-gap': { type: 'string' },
      'max-file-bytes': { type: 'string' },
      'files-from': { type: 'string' },
      'id-field': { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const minTokens = intOption('min-tokens', values['min-tokens'], DEFAULT_MIN_TOKENS, 1, 1999);
    const k = values.k === undefined ? winnowParameters({ minTokens }).k : intOption('k', values.k, DEFAULT_K, 1, Math.min(1000, minTokens));
    if (minTokens - k + 1 > 1000) throw new UsageError(`--min-tokens - --k + 1 (the window) must be at most 1000, got ${minTokens - k + 1}`);
    const minShared = floatOption('min-shared', values['min-shared'], 0, 0, 1);
    const maxFiles = intOption('max-files', values['max-files'], DEFAULT_MAX_FILES, 0, 2 ** 32 - 1);
    const mergeGap = intOption('merge-gap', values['merge-gap'], DEFAULT_MERGE_GAP, 0, 2 ** 32 - 1);
    const maxFileBytes = intOption('max-file-bytes', values['max-file-bytes'], DEFAULT_MAX_FILE_BYTES, 1, 2 ** 32 - 1);
    const lang = values.lang === undefined ? undefined : oneOf('lang', values.lang, CODE_LANGUAGES, 'c');
    const submissions = Boolean(values.submissions);
    const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
    const input = inputOptionsFrom(values);
    const out = values.out === undefined ? '-' : String(values.out);
    const bases = (values.base as string[] | undefined) ?? [];
    const inputs = [...positionals];
    if (values['files-from'] !== undefined) {
      const list = String(values['files-from']);
      let text: string;
      try {
        text = fs.readFileSync(list === '-' ? 0 : list, 'utf8');
      } catch (e) {
        throw new NeardupError('ERR_NEARDUP_IO', `--files-from '${list}': ${(e as Error).message}`);
      }
      for (const line of text.split('\n')) if (line.trim() !== '') inputs.push(line.replace(/\r$/, ''));
    }
    if (inputs.length === 0) throw new UsageError('give the PATHs to compare (directories, source files, JSONL or Parquet)');
    if (inputs.includes('-')) throw new UsageError("standard input is not a PATH here (use --files-from - for a list of paths)");
    const docs = inputs.filter((p) => DOCUMENTS.test(p) && isFile(p));
    checkFiles({ inputs: [...docs], outputs: out === '-' ? [] : [{ option: '--out', file: out }] });
    if (docs.length > 0) checkInputFiles(docs);

    const start = Date.now();
    const progress = new Progress('neardup code');
    const index = new CodeIndex({ minTokens, k, keepIdentifiers: Boolean(values['keep-identifiers']), keepLiterals: Boolean(values['keep-literals']), maxFileBytes });
    const groupNames: string[] = [];
    const groupOf = new Map<string, number>();
    const group = (name: string) => {
      let g = groupOf.get(name);
      if (g === undefined) {
        g = groupNames.length;
        groupNames.push(name);
        groupOf.set(name, g);
      }
      return g;
    };
    const sourceNames: string[] = [];
    const counts: Record<CodeSourceState, number> = { indexed: 0, binary: 0, 'invalid-utf8': 0, 'too-large': 0, base: 0 };
    let read = 0;
    const addAll = async (batch: CodeSource[], names: string[]) => {
      for (let i = 0; i < batch.length; i += 2048) {
        const part = batch.slice(i, i + 2048);
        const states = await index.add(part);
        for (const s of states) counts[s]++;
        sourceNames.push(...names.slice(i, i + 2048));
        read += part.length;
        progress.update({ docs: read, extra: 'tokenising' });
      }
    };
    let match;
    let indexSeconds = 0;
    try {
      // base code first (its k-grams are known before any match), then the inputs
      for (const b of bases) {
        const files = walk(b, lang);
        await addAll(files.map((f) => ({ path: f.path, lang: f.lang, base: true, group: 0 })), files.map((f) => f.path));
      }
      for (const p of inputs) {
        if (DOCUMENTS.test(p) && isFile(p)) {
          for await (const batch of readDocuments([p], { ...input, idField })) {
            const sources: CodeSource[] = [], names: string[] = [];
            for (let i = 0; i < batch.count; i++) {
              if (batch.bad.has(i) && input.onBadLine !== 'empty') continue;
              const id = batch.ids ? idValue(batch.ids, i) : null;
              const name = id === null ? `${p}:${batch.firstLine + i}` : String(id);
              const l = lang ?? languageOf(name);
              if (l === undefined) throw new UsageError(`${p}:${batch.firstLine + i}: no language for '${name}': give --lang (or ids with a known extension)`);
              const { data, offsets } = batch.packed;
              const sub = submissions ? name.split('/')[0] : name;
              sources.push({ text: data.subarray(offsets[i], offsets[i + 1]), lang: l, group: group(sub) });
              names.push(name);
            }
            await addAll(sources, names);
          }
          continue;
        }
        const files = walk(p, lang);
        const root = p;
        await addAll(files.map((f) => {
          let sub = f.path;
          if (submissions && f.path !== root) {
            const rel = path.relative(root, f.path).split(path.sep);
            sub = rel.length > 1 ? path.join(root, rel[0]) : f.path;
          }
          return { path: f.path, lang: f.lang, group: group(sub) };
        }), files.map((f) => f.path));
      }
      indexSeconds = (Date.now() - start) / 1000;
      progress.update({ docs: read, extra: 'matching' }, true);
      const beat = setInterval(() => progress.update({ docs: read, extra: 'matching' }), 1000);
      try {
        match = await index.match({ maxFiles, mergeGap, minShared });
      } finally {
        clearInterval(beat);
      }
    } finally {
      index.close();
    }
    const matchSeconds = (Date.now() - start) / 1000 - indexSeconds;
    const writeStart = Date.now();
    const file = OutputFile.open(out);
    let regions = 0;
    try {
      for (const p of match.pairs) {
        const rs = p.regions.map((r) => {
          const o: Record<string, unknown> = { a: r.linesA, b: r.linesB, tokens: r.tokens };
          if (submissions) {
            o.file_a = sourceNames[r.sourceA];
            o.file_b = sourceNames[r.sourceB];
          }
          return o;
        });
        regions += rs.length;
        const line = JSON.stringify({ a: groupNames[p.a], b: groupNames[p.b], shared_a: +p.sharedA.toFixed(4), shared_b: +p.sharedB.toFixed(4), tokens: p.tokens, regions: rs });
        const w = file.write(line + '\n');
        if (w) await w;
      }
      await file.commit();
    } catch (e) {
      file.abort();
      throw e;
    }
    progress.done({ docs: read });
    const st = match.stats;
    writeSummary({ command: 'code', inputs, documents: read }, {
      files: counts.indexed,
      skipped_binary: counts.binary,
      skipped_invalid_utf8: counts['invalid-utf8'],
      skipped_too_large: counts['too-large'],
      base_files: counts.base,
      submissions: submissions ? groupNames.length : undefined,
      tokens: st.tokens,
      fingerprints: st.fingerprints,
      k: index.k,
      w: index.w,
      min_tokens: index.minTokens,
      max_files: maxFiles,
      boilerplate_hashes: st.boilerplateHashes,
      base_fingerprints: st.baseFingerprints,
      candidate_pairs: st.candidatePairs,
      pairs: match.pairs.length,
      regions,
      index_seconds: +indexSeconds.toFixed(3),
      match_seconds: +matchSeconds.toFixed(3),
      write_seconds: +((Date.now() - writeStart) / 1000).toFixed(3),
      seconds: +((Date.now() - start) / 1000).toFixed(3),
    });
    return 0;
  },
};

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The source files of a PATH: a directory walked (sorted, names starting with '.' skipped, links to folders not followed), or one file. */
function walk(p: string, lang: CodeLanguage | undefined): { path: string; lang: CodeLanguage }[] {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `'${p}': ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
  }
  const pick = (name: string) => {
    const l = languageOf(name);
    return lang === undefined ? l : l === lang ? lang : undefined;
  };
  if (st.isFile()) {
    const l = lang ?? languageOf(p);
    if (l === undefined) throw new UsageError(`'${p}': no known extension (give --lang)`);
    return [{ path: p, lang: l }];
  }
  const out: { path: string; lang: CodeLanguage }[] = [];
  const stack = [p];
  while (stack.length > 0) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `'${d}': ${(e as Error).message}`);
    }
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    const dirs: string[] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const full = path.join(d, e.name);
      let isDir = e.isDirectory(), isFile = e.isFile();
      if (e.isSymbolicLink()) {
        try {
          isFile = fs.statSync(full).isFile();
        } catch {
          isFile = false;
        }
        isDir = false;
      }
      if (isDir) dirs.push(full);
      else if (isFile) {
        const l = pick(e.name);
        if (l !== undefined) out.push({ path: full, lang: l });
      }
    }
    for (let i = dirs.length - 1; i >= 0; i--) stack.push(dirs[i]);
  }
  return out;
}
