// neardup simhash <sub>: seomoz simhash drop-ins.
//   fingerprint  one decimal u64 fingerprint per JSONL line
//   find-all     pairs of fingerprints (or ids) within k bits, like seomoz's simhash-find-all
import { NeardupError } from '../../util/errors';
import { simhashFindAll, simhashFindAllStream, simhashFindAllSync, simhashFingerprints, type SimhashOptions } from '../../simhash/simhash';
import type { ShingleOptions } from '../../text/shingles';
import { openInput, readLines } from '../../io/jsonl';
import { idJson, readDocuments } from '../../io/input';
import { U64_MAX, formatPairLines, parseU64, readFingerprintText } from '../../simhash/fingerprint-text';
import { Progress } from '../progress';
import { writeSummary } from '../summary';
import { checkDocumentSizes, documentLimit } from '../limits';
import { checkFiles } from '../../io/files';
import {
  INPUT_OPTIONS, INPUT_USAGE, Output, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, didYouMean, idFieldOption, inputOptionsFrom, intOption, oneOf,
  parse, shingleOptionsFrom, usageErrorText, type Command,
} from '../common';

const PROFILES: Record<'default' | 'seomoz', ShingleOptions> = {
  default: { unit: 'word', n: 3, split: 'unicode', cjk: 'chars', lowercase: true, short: 'whole' },
  seomoz: { unit: 'word', n: 4, split: 'nonword', lowercase: true, short: 'none' },
};

const FINGERPRINT_USAGE = `Usage: neardup simhash fingerprint [options] [FILE...]

Prints one 64-bit fingerprint per input line (decimal). A line skipped by --on-bad-line skip prints an
empty line (find-all ignores it: a skipped document never pairs).

Options:
  --id-field NAME           print "ID FINGERPRINT" lines, ID being the line's id as JSON text (a string
                            quoted, an integer as written; dot path as --field), for find-all --ids; a bad
                            line (id missing or of another type, or skipped) prints its id alone (null
                            when it has none), which find-all --ids ignores
  --profile default|seomoz  seomoz: word 4-grams of \\W+-split lower-cased text, MD5 feature hash (exactly
                            seomoz simhash-py); default: word 3-grams, fast64 (default profile)
  --hash fast64|murmur3_64|md5_64   feature hash (overrides the profile)
  --weighting binary|count  each distinct shingle votes once (the default profile's) or every occurrence
                            votes (the seomoz profile's: a repeated shingle can decide the fingerprint)
${SHINGLE_USAGE}
  (the shingle defaults are the profile's)
${INPUT_USAGE}
At the end, a JSON summary on stderr: documents, bad_lines, skipped, profile, input_bytes, seconds.`;

const FIND_ALL_USAGE = `Usage: neardup simhash find-all [--blocks M] [--distance K] [--ids] [--clusters] [FILE...]

Reads one decimal u64 fingerprint per line and prints every pair within K bits as "a b" (a < b, decimal),
one per line, sorted, like seomoz's simhash-find-all. Repeated input values count once.

Options:
  --blocks M     number of blocks, K < M <= 64 (default: chosen for the input size)
  --distance K   maximum Hamming distance, 0..8 (default 3)
  --ids          lines are "ID FINGERPRINT"; prints id pairs, including ids with identical fingerprints
                 (a line with an id and no fingerprint, a skipped document, is ignored). Decimal u64
                 ids are numbers (pairs "a b" with a < b); any other id (a JSON string such as
                 "doc 7", as fingerprint --id-field prints, or a word) is printed as it was read, and
                 then a pair's ids are in input order (a before b), pairs sorted by a's line, then b's
Empty lines (skipped documents of 'simhash fingerprint') are ignored.
  --clusters     print connected components instead of pairs: one line of space-separated members each

Pairs are computed and printed in sorted chunks (memory: about 40 bytes per fingerprint plus one chunk), so
any number of them can be printed; clusters are found without holding the pairs.

At the end, a JSON summary on stderr: lines, fingerprints (distinct values, or entries with --ids), pairs
(without --clusters), clusters (with --clusters), distance, seconds.`;


/**
 * The id at the start of a find-all --ids line and what follows it: a JSON string (`"doc 7"`, spaces and
 * escapes included) or else the first word.
 */
function splitId(text: string, file: string, line: number): { id: string; rest: string } {
  if (text.startsWith('"')) {
    let i = 1;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: the id's JSON string is not closed`, { file, line });
    const id = text.slice(0, i + 1);
    try {
      JSON.parse(id);
    } catch {
      throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: the id ${id.slice(0, 40)} is not a valid JSON string`, { file, line });
    }
    const rest = text.slice(i + 1);
    if (rest !== '' && !/^\s/.test(rest)) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: expected a space after the id ${id.slice(0, 40)}`, { file, line });
    return { id, rest: rest.trim() };
  }
  const m = /^(\S+)\s*(.*)$/s.exec(text)!;
  return { id: m[1], rest: m[2] };
}

async function fingerprint(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    ...SHINGLE_OPTIONS, ...INPUT_OPTIONS, profile: { type: 'string' }, hash: { type: 'string' }, seed: { type: 'string' },
    weighting: { type: 'string' }, 'id-field': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(FINGERPRINT_USAGE + '\n');
    return 0;
  }
  const profile = oneOf('profile', values.profile, ['default', 'seomoz'] as const, 'default');
  const options: SimhashOptions = { profile, ...shingleOptionsFrom(values, PROFILES[profile]) };
  if (values.hash !== undefined) options.hash = oneOf('hash', values.hash, ['fast64', 'murmur3_64', 'md5_64'] as const, 'fast64');
  if (values.weighting !== undefined) options.weighting = oneOf('weighting', values.weighting, ['count', 'binary'] as const, 'count');
  if (values.seed !== undefined) {
    if (!/^\d+$/.test(String(values.seed)) || BigInt(String(values.seed)) > U64_MAX) throw new UsageError('--seed must be an integer from 0 to 2^64-1');
    options.seed = BigInt(String(values.seed));
  }
  const input = inputOptionsFrom(values);
  const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
  checkFiles({ inputs: positionals.length ? positionals : ['-'], outputs: [], stdout: true });
  const out = new Output();
  const progress = new Progress('neardup simhash fingerprint');
  const start = Date.now();
  let docs = 0, badLines = 0, skipped = 0, bytesRead = 0;
  const limit = documentLimit('simhash fingerprint');
  for await (const batch of readDocuments(positionals.length ? positionals : ['-'], {
    ...input, idField, onProgress: (bytes, fraction) => { bytesRead = bytes; progress.update({ bytes, docs, fraction }); },
  })) {
    checkDocumentSizes(batch, limit, 'simhash fingerprint');
    badLines += batch.bad.size;
    const isSkipped = (i: number) => batch.valid !== undefined && batch.valid[i] === 0;
    const fps = await simhashFingerprints(batch.packed, options);
    const lines: string[] = [];
    for (let i = 0; i < fps.length; i++) {
      if (isSkipped(i)) skipped++;
      const id = batch.ids ? idJson(batch.ids, i) : undefined;
      lines.push(isSkipped(i) ? id ?? '' : id === undefined ? fps[i].toString() : `${id} ${fps[i]}`);
    }
    await out.write(lines.join('\n') + '\n');
    docs += fps.length;
  }
  await out.flush();
  progress.done({ bytes: bytesRead, docs, fraction: 1 });
  writeSummary({ command: 'simhash fingerprint', inputs: positionals.length ? positionals : ['-'], documents: docs }, {
    bad_lines: badLines, skipped, profile, input_bytes: bytesRead, seconds: +((Date.now() - start) / 1000).toFixed(3),
  });
  return 0;
}

async function findAll(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    blocks: { type: 'string' }, distance: { type: 'string' }, ids: { type: 'boolean' }, clusters: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(FIND_ALL_USAGE + '\n');
    return 0;
  }
  const distance = intOption('distance', values.distance, 3, 0, 8);
  const blocks = values.blocks === undefined ? undefined : intOption('blocks', values.blocks, 6, 1, 64);
  if (blocks !== undefined) {
    // The library's own check of (blocks, distance), before any input is read: m > k and at most 4096 tables.
    try {
      simhashFindAllSync(new BigUint64Array(0), { blocks, distance });
    } catch (e) {
      if (e instanceof RangeError) throw new UsageError(`--blocks ${blocks} --distance ${distance}: ${e.message}`);
      throw e;
    }
  }
  checkFiles({ inputs: positionals.length ? positionals : ['-'], outputs: [], stdout: true });
  const withIds = Boolean(values.ids);
  const start = Date.now();
  let lines = 0;
  const ids: bigint[] = [];
  // ids that are not decimal u64 (JSON strings, words): kept as read, and numbered in input order instead
  let textIds: string[] | undefined;
  const fps: bigint[] = [];
  const progress = new Progress('neardup simhash find-all');
  const files = positionals.length ? positionals : ['-'];
  // plain fingerprints: parsed in place (lib/simhash/fingerprint-text.ts), repeats counted once
  const plain = withIds ? undefined : await readFingerprintText(files, (n) => progress.update({ docs: n, extra: 'reading' }));
  if (plain) lines = plain.lines;
  for (const file of withIds ? files : []) {
    let line = 0;
    for await (const raw of readLines(await openInput(file), file)) {
      line++;
      const text = raw.toString('latin1').trim();
      if (text === '') continue;
      lines++;
      if ((lines & 0xffff) === 0) progress.update({ docs: lines, extra: 'reading' });
      const { id, rest } = splitId(raw.toString('utf8').trim(), file, line);
      if (rest === '') continue;  // an id without fingerprint: a skipped document
      if (/\s/.test(rest)) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: expected "id fingerprint", got more after the fingerprint`, { file, line });
      fps.push(parseU64(rest, file, line, 'fingerprint'));
      const numeric = textIds === undefined && /^\d{1,20}$/.test(id) && BigInt(id) <= U64_MAX;
      if (!numeric && textIds === undefined) textIds = ids.map((v) => v.toString());  // from here on, ids as text
      if (textIds) textIds.push(id); else ids.push(BigInt(id));
    }
  }
  const fpArr = plain ? plain.fps : BigUint64Array.from(fps);
  // text ids: the pairs are found between entry numbers (input order), printed as the ids read
  const idArr = !withIds ? fpArr : textIds ? BigUint64Array.from({ length: textIds.length }, (_, i) => BigInt(i)) : BigUint64Array.from(ids);
  const name = textIds ? (v: bigint) => textIds![Number(v)] : (v: bigint) => v.toString();
  fps.length = ids.length = 0;
  const out = new Output();
  let pairs = 0, clusters: number | undefined;
  if (values.clusters) {
    // components without holding the pairs (their number may be quadratic)
    const c = (await simhashFindAll(fpArr, { ids: idArr, distance, blocks, clusters: true, pairs: false })).clusters!;
    clusters = c.offsets.length - 1;
    for (let i = 0; i + 1 < c.offsets.length; i++) await out.write(Array.from(c.ids.subarray(c.offsets[i], c.offsets[i + 1]), name).join(' ') + '\n');
  } else {
    // streamed in sorted chunks: memory stays one chunk, however many pairs there are
    const chunkPairs = Number(process.env.NEARDUP_TEST_CHUNK_PAIRS ?? 1 << 20);
    const into = textIds ? undefined : Buffer.allocUnsafe(4 << 20);  // decimal ids: lines formatted natively, in place
    for await (const { a, b } of simhashFindAllStream(fpArr, { ids: idArr, distance, blocks, chunkPairs })) {
      if (into) {
        for (let at = 0; at < a.length;) {
          const { bytes, next } = formatPairLines(a, b, at, into);
          await out.writeBytes(into.subarray(0, bytes));  // resolves once the stream is done with the bytes
          at = next;
        }
      } else {
        const text: string[] = [];
        for (let i = 0; i < a.length; i++) {
          text.push(`${name(a[i])} ${name(b[i])}\n`);
          if (text.length === 65536 || i + 1 === a.length) {
            await out.write(text.join(''));
            text.length = 0;
          }
        }
      }
      pairs += a.length;
      progress.update({ docs: lines, written: pairs, extra: 'pairs' });
    }
  }
  await out.flush();
  progress.done({ docs: lines, ...(values.clusters ? {} : { written: pairs }), extra: values.clusters ? 'clusters' : 'pairs' });
  writeSummary({ command: 'simhash find-all', inputs: positionals.length ? positionals : ['-'], documents: lines }, {
    lines, fingerprints: fpArr.length, ...(values.clusters ? {} : { pairs }), ...(clusters !== undefined ? { clusters } : {}),
    distance, seconds: +((Date.now() - start) / 1000).toFixed(3),
  });
  return 0;
}

const SUBCOMMANDS: Record<string, (args: string[]) => Promise<number>> = { fingerprint, 'find-all': findAll };

export const simhashCommand: Command = {
  name: 'simhash',
  usage: `Usage: neardup simhash <fingerprint|find-all> [options]

  fingerprint   one 64-bit fingerprint per JSONL line (--profile seomoz reproduces seomoz simhash-py)
  find-all      pairs of fingerprints within K bits (like seomoz's simhash-find-all)

Run 'neardup simhash <sub> --help' for each sub-command's options.`,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === '-h' || sub === '--help') {
      // a missing sub-command is a usage error: the usage goes to stderr
      (sub === undefined ? process.stderr : process.stdout).write(this.usage + '\n');
      return sub === undefined ? 2 : 0;
    }
    const fn = SUBCOMMANDS[sub];
    if (!fn) throw new UsageError(`unknown sub-command '${sub}'${didYouMean(sub, Object.keys(SUBCOMMANDS))}`);
    try {
      return await fn(rest);
    } catch (e) {
      if (e instanceof UsageError) {
        process.stderr.write(usageErrorText(`neardup simhash ${sub}`, e));
        return 2;
      }
      throw e;
    }
  },
};
