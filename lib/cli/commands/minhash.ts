// neardup minhash: MinHash signatures of each JSONL line, as JSON arrays on stdout or as a binary file.
import { minhash, SignatureWriter, type MinHashOptions, type MinHashProfile } from '../../minhash/minhash';
import type { ShingleOptions } from '../../text/shingles';
import { readDocuments, type OnBadLine } from '../../io/input';
import { Progress } from '../progress';
import { summaryObject } from '../summary';
import { checkDocumentSizes, documentLimit } from '../limits';
import { checkFiles, writeNative } from '../../io/files';
import {
  INPUT_OPTIONS, INPUT_USAGE, Output, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, inputOptionsFrom, intOption, oneOf,
  parse, shingleOptionsFrom, type Command,
} from '../common';

const PROFILE_DEFAULTS: Record<MinHashProfile, { shingle: ShingleOptions; numPerm: number; seed: bigint; maxPerm: number }> = {
  fast: { shingle: {}, numPerm: 128, seed: 0n, maxPerm: 1024 },
  'doubri-v1': { shingle: {}, numPerm: 800, seed: 0n, maxPerm: 65536 },
  datasketch: { shingle: { unit: 'word', lowercase: true }, numPerm: 128, seed: 1n, maxPerm: 65536 },
};

/**
 * --seed of a MinHash profile (undefined when absent): fast 0..2^64-1; datasketch 0..2^32-1 (numpy
 * RandomState); doubri-v1 so that its last seed, seed + numPerm - 1, fits 32 bits.
 */
export function seedOption(v: unknown, profile: MinHashProfile, numPerm: number): bigint | undefined {
  if (v === undefined) return undefined;
  const max = profile === 'fast' ? (1n << 64n) - 1n : profile === 'datasketch' ? 0xffffffffn : BigInt(0xffffffff - numPerm + 1);
  const s = String(v);
  if (!/^\d+$/.test(s) || BigInt(s) > max) throw new UsageError(`--seed must be an integer from 0 to ${max}, got '${s}'`);
  return BigInt(s);
}

/** One signed batch: `valid[i] === 0` marks a skipped bad line (its signature row is all 0xFFFFFFFF). */
export interface SignedBatch {
  count: number;
  valid?: Uint8Array;
  signatures: Uint32Array;
  numPerm: number;
  badLines: number;
  bytesRead: number;
}

/**
 * Reads the inputs (lib/io/input.ts: parsed on the native pool) and yields each batch with its signatures; the
 * next batch is read and parsed while this one is signed.
 */
export async function* signJsonl(
  files: string[],
  input: { field: string; onBadLine: OnBadLine },
  options: MinHashOptions,
  progress?: Progress,
): AsyncGenerator<SignedBatch> {
  let docs = 0, bytesRead = 0;
  const limit = documentLimit('minhash');
  for await (const batch of readDocuments(files, {
    ...input, onProgress: (bytes, fraction) => { bytesRead = bytes; progress?.update({ bytes, docs, fraction }); },
  })) {
    checkDocumentSizes(batch, limit, 'minhash');
    const r = await minhash(batch.packed, options);
    if (batch.valid) {
      for (let i = 0; i < batch.count; i++) if (batch.valid[i] === 0) r.signatures.fill(0xffffffff, i * r.numPerm, (i + 1) * r.numPerm);
    }
    docs += batch.count;
    yield { count: batch.count, valid: batch.valid, signatures: r.signatures, numPerm: r.numPerm, badLines: batch.bad.size, bytesRead };
  }
}

/** Signs JSONL straight into a signature file: committed (renamed into place) only when every line is done. */
export async function signJsonlToFile(
  writer: SignatureWriter,
  files: string[],
  input: { field: string; onBadLine: OnBadLine },
  options: MinHashOptions,
  progress?: Progress,
): Promise<SignTally> {
  const tally = new SignTally();
  try {
    for await (const b of signJsonl(files, input, options, progress)) {
      writer.append(b.signatures);
      tally.add(b);
    }
    writer.commit();
    return tally;
  } catch (e) {
    writer.abort();
    throw e;
  }
}

/** Counts for the summary line of the signing commands. */
export class SignTally {
  documents = 0;
  badLines = 0;
  skipped = 0;
  bytes = 0;
  private readonly start = Date.now();
  add(b: SignedBatch): void {
    this.documents += b.count;
    this.badLines += b.badLines;
    if (b.valid) for (let i = 0; i < b.count; i++) if (b.valid[i] === 0) this.skipped++;
    this.bytes = b.bytesRead;
  }
  /** The summary line (lib/cli/summary.ts): bad_lines, skipped (bad lines without a value), the given fields, input_bytes, seconds. */
  summary(command: string, inputs: readonly string[], extra: Record<string, unknown>): string {
    const seconds = (Date.now() - this.start) / 1000;
    return JSON.stringify(summaryObject({ command, inputs, documents: this.documents }, {
      bad_lines: this.badLines, skipped: this.skipped, ...extra, input_bytes: this.bytes, seconds: +seconds.toFixed(3),
    })) + '\n';
  }
}

export const minhashCommand: Command = {
  name: 'minhash',
  usage: `Usage: neardup minhash [options] [FILE...]

Computes a MinHash signature (k unsigned 32-bit values) per input line.

Options:
  --profile fast|doubri-v1|datasketch   (default fast) see docs/minhash.md
  --num-perm K              values per signature (fast 128 [1..1024], doubri-v1 800, datasketch 128)
  --seed S                  fast: 64-bit seed (0); doubri-v1: first Murmur3 seed (0);
                            datasketch: numpy RandomState seed (1)
  --shingle word|char       same as --unit (datasketch default: word = text.lower().split() n-grams)
  --keep-case               datasketch: do not lower-case (its default is Python's text.lower())
  -o, --output jsonl|PATH   'jsonl' (default): one JSON array of k numbers per line on stdout
                            (null for a skipped bad line); PATH: a binary signature file, written
                            complete or not at all ('-': the binary file on stdout; an input is refused)
  --format neardup|doubri   binary file format: neardup "MHSG" (default) or doubri's .hash
                            (docs/FORMAT.md section 5)
${SHINGLE_USAGE}
${INPUT_USAGE}
A skipped bad line (--on-bad-line skip) gets a signature of k times 4294967295 in a binary file.
At the end, a JSON summary on stderr: documents, bad_lines, skipped, profile, num_perm, output[, format],
input_bytes, seconds.`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...SHINGLE_OPTIONS, ...INPUT_OPTIONS,
      profile: { type: 'string' }, 'num-perm': { type: 'string' }, seed: { type: 'string' }, shingle: { type: 'string' },
      'keep-case': { type: 'boolean' }, output: { type: 'string', short: 'o' }, format: { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const profile = oneOf('profile', values.profile, ['fast', 'doubri-v1', 'datasketch'] as const, 'fast');
    const d = PROFILE_DEFAULTS[profile];
    if (values.shingle !== undefined && values.unit !== undefined) throw new UsageError('give --shingle or --unit, not both');
    const shingleValues: Record<string, unknown> = { ...values };
    if (values.shingle !== undefined) shingleValues.unit = values.shingle;
    if (values['keep-case']) shingleValues.lowercase = false;
    const shingle = shingleOptionsFrom(shingleValues, d.shingle);
    const numPerm = intOption('num-perm', values['num-perm'], d.numPerm, 1, d.maxPerm);
    const seed = seedOption(values.seed, profile, numPerm) ?? d.seed;
    const input = inputOptionsFrom(values);
    const output = values.output === undefined ? 'jsonl' : String(values.output);
    if (output === '') throw new UsageError('--output must be jsonl or a file path');
    const format = oneOf('format', values.format, ['neardup', 'doubri'] as const, 'neardup');
    if (values.format !== undefined && output === 'jsonl') throw new UsageError('--format applies to a binary --output PATH');
    const files = positionals.length ? positionals : ['-'];
    checkFiles({ inputs: files, outputs: output === 'jsonl' ? [] : [{ option: '-o', file: output }], stdout: output === 'jsonl' });
    const options: MinHashOptions = { ...shingle, profile, numPerm, seed };
    const progress = new Progress('neardup minhash');

    let tally = new SignTally();
    if (output === 'jsonl') {
      const out = new Output();
      for await (const b of signJsonl(files, input, options, progress)) {
        tally.add(b);
        for (let i = 0; i < b.count; i++) {
          if (b.valid && b.valid[i] === 0) await out.write('null\n');
          else await out.write(`[${b.signatures.subarray(i * numPerm, (i + 1) * numPerm).join(',')}]\n`);
        }
      }
      await out.flush();
    } else {
      const meta = { profile, numPerm, seed: seed.toString(), ...shingle, field: input.field };
      await writeNative(output, async (p) => {
        tally = await signJsonlToFile(new SignatureWriter(p, { format, numPerm, profile, meta }), files, input, options, progress);
      });
    }
    progress.done({ bytes: tally.bytes, docs: tally.documents, fraction: 1 });
    process.stderr.write(tally.summary('minhash', files, { profile, num_perm: numPerm, output: output === 'jsonl' ? 'stdout' : output, ...(output === 'jsonl' ? {} : { format }) }));
    return 0;
  },
};
