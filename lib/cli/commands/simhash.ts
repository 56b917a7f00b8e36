// neardup simhash <sub>: seomoz simhash drop-ins.
//   fingerprint  one decimal u64 fingerprint per JSONL line
//   find-all     pairs of fingerprints (or ids) within k bits, like seomoz's simhash-find-all
import { NeardupError } from '../../util/errors';
import { simhashFindAll, simhashFindAllStream, simhashFindAllSync, simhashFingerprints, type SimhashOptions } from '../../simhash/simhash';
import type { ShingleOptions } from '../../text/shingles';
import { openInput, readLines } from '../../io/jsonl';
import { readDocuments } from '../../io/input';
import { Progress } from '../progress';
import { writeSummary } from '../summary';
import { checkDocumentSizes, documentLimit } from '../limits';
import { checkFiles } from '../../io/files';
import {
  INPUT_OPTIONS, INPUT_USAGE, Output, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, didYouMean, inputOptionsFrom, intOption, oneOf,
  parse, shingleOptionsFrom, usageErrorText, type Command,
} from '../common';

const PROFILES: Record<'default' | 'seomoz', ShingleOptions> = {
  default: { unit: 'word', n: 3, split: 'nonword', lowercase: true, short: 'whole' },
  seomoz: { unit: 'word', n: 4, split: 'nonword', lowercase: true, short: 'none' },
};

const FINGERPRINT_USAGE = `Usage: neardup simhash fingerprint [options] [FILE...]

Prints one 64-bit fingerprint per input line (decimal). A line skipped by --on-bad-line skip prints an
empty line (find-all ignores it: a skipped document never pairs).

Options:
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
  --ids          lines are "id fingerprint"; prints id pairs, including ids with identical fingerprints
                 (a line with an id and no fingerprint, a skipped document, is ignored)
Empty lines (skipped documents of 'simhash fingerprint') are ignored.
  --clusters     print connected components instead of pairs: one line of space-separated members each

Pairs are computed and printed in sorted chunks (memory: about 40 bytes per fingerprint plus one chunk), so
any number of them can be printed; clusters are found without holding the pairs.

At the end, a JSON summary on stderr: lines, fingerprints (distinct values, or entries with --ids), pairs
(without --clusters), clusters (with --clusters), distance, seconds.`;

const U64_MAX = (1n << 64n) - 1n;
function parseU64(s: string, file: string, line: number, what: string): bigint {
  if (!/^\d{1,20}$/.test(s)) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: ${what} must be a decimal u64, got '${s.slice(0, 40)}'`, { file, line });
  const v = BigInt(s);
  if (v > U64_MAX) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: ${what} ${s} is larger than 2^64-1`, { file, line });
  return v;
}

async function fingerprint(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    ...SHINGLE_OPTIONS, ...INPUT_OPTIONS, profile: { type: 'string' }, hash: { type: 'string' }, seed: { type: 'string' },
    weighting: { type: 'string' },
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
  checkFiles({ inputs: positionals.length ? positionals : ['-'], outputs: [], stdout: true });
  const out = new Output();
  const progress = new Progress('neardup simhash fingerprint');
  const start = Date.now();
  let docs = 0, badLines = 0, skipped = 0, bytesRead = 0;
  const limit = documentLimit('simhash fingerprint');
  for await (const batch of readDocuments(positionals.length ? positionals : ['-'], {
    ...input, onProgress: (bytes, fraction) => { bytesRead = bytes; progress.update({ bytes, docs, fraction }); },
  })) {
    checkDocumentSizes(batch, limit, 'simhash fingerprint');
    badLines += batch.bad.size;
    const isSkipped = (i: number) => batch.valid !== undefined && batch.valid[i] === 0;
    const fps = await simhashFingerprints(batch.packed, options);
    const lines: string[] = [];
    for (let i = 0; i < fps.length; i++) {
      if (isSkipped(i)) skipped++;
      lines.push(isSkipped(i) ? '' : fps[i].toString());
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
  const fps: bigint[] = [];
  const seen = new Set<bigint>();
  for (const file of positionals.length ? positionals : ['-']) {
    let line = 0;
    for await (const raw of readLines(await openInput(file), file)) {
      line++;
      const text = raw.toString('latin1').trim();
      if (text === '') continue;
      lines++;
      if (withIds) {
        const parts = text.split(/\s+/);
        if (parts.length === 1 && /^\d{1,20}$/.test(parts[0])) continue;  // an id without fingerprint: skipped
        if (parts.length !== 2) throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${file}:${line}: expected "id fingerprint"`, { file, line });
        ids.push(parseU64(parts[0], file, line, 'id'));
        fps.push(parseU64(parts[1], file, line, 'fingerprint'));
      } else {
        const v = parseU64(text, file, line, 'fingerprint');
        if (!seen.has(v)) {
          seen.add(v);
          fps.push(v);
        }
      }
    }
  }
  const fpArr = BigUint64Array.from(fps);
  const idArr = withIds ? BigUint64Array.from(ids) : fpArr;
  fps.length = ids.length = 0;
  seen.clear();
  const out = new Output();
  let pairs = 0, clusters: number | undefined;
  if (values.clusters) {
    // components without holding the pairs (their number may be quadratic)
    const c = (await simhashFindAll(fpArr, { ids: idArr, distance, blocks, clusters: true, pairs: false })).clusters!;
    clusters = c.offsets.length - 1;
    for (let i = 0; i + 1 < c.offsets.length; i++) await out.write(Array.from(c.ids.subarray(c.offsets[i], c.offsets[i + 1])).join(' ') + '\n');
  } else {
    // streamed in sorted chunks: memory stays one chunk, however many pairs there are
    const chunkPairs = Number(process.env.NEARDUP_TEST_CHUNK_PAIRS ?? 1 << 20);
    for await (const { a, b } of simhashFindAllStream(fpArr, { ids: idArr, distance, blocks, chunkPairs })) {
      const text: string[] = [];
      for (let i = 0; i < a.length; i++) {
        text.push(`${a[i]} ${b[i]}\n`);
        if (text.length === 65536 || i + 1 === a.length) {
          await out.write(text.join(''));
          text.length = 0;
        }
      }
      pairs += a.length;
    }
  }
  await out.flush();
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
      process.stdout.write(this.usage + '\n');
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
