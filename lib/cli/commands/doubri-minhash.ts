// neardup doubri minhash / init: doubri 1.0 drop-ins on the MinHash side (docs/minhash.md lists every
// difference). Registered in the sub-command table of ./doubri.ts.
import * as fs from 'node:fs';
import { NeardupError } from '../../util/errors';
import { SignatureWriter, doubriHashHeader } from '../../minhash/minhash';
import { Progress } from '../progress';
import { INPUT_OPTIONS, UsageError, inputOptionsFrom, parse, type Subcommand } from '../common';
import { signJsonlToFile } from './minhash';
import { checkFiles, writeNative } from '../../io/files';

export const doubriMinhashCommand: Subcommand = {
  name: 'minhash',
  summary: 'doubri-minhash: 800 MinHash values per JSONL line of stdin into a .hash file',
  usage: `Usage: neardup doubri minhash [options] OUT.hash < in.jsonl

Like doubri 1.0's doubri-minhash: reads JSONL from standard input and writes OUT.hash (doubri's format:
"MinHash", 4, N, 800, then N x 800 u32 LE; MurmurHash3_x86_32 seeds 0..799 over 5-code-point n-grams; texts
shorter than 5 code points count as "EMPTY"). Prints nothing on stdout.

Options:
  --field NAME              the string field holding the text (default "text")
  --on-bad-line error|skip|empty  a malformed line stops the run with its line number (default); skip: a
                            record of 800 x 4294967295; empty: the record of an empty text ("EMPTY")
Differences from doubri 1.0: a final line without "\\n" is processed (doubri drops it); a bad line is a clear
error (doubri aborts); the file appears only when complete (temporary file + rename); OUT.hash '-' writes
to stdout; an OUT.hash that is standard input is refused.`,
  async run(args) {
    const { values, positionals } = parse(args, { ...INPUT_OPTIONS });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('expected exactly one argument: the output .hash file');
    const input = inputOptionsFrom(values);
    checkFiles({ inputs: ['-'], outputs: [{ option: 'OUT.hash', file: positionals[0] }] });
    const progress = new Progress('neardup doubri minhash', true, process.stderr, true);
    await writeNative(positionals[0], async (p) => {
      await signJsonlToFile(new SignatureWriter(p, { format: 'doubri', numPerm: 800, profile: 'doubri-v1' }), ['-'], input, { profile: 'doubri-v1' }, progress);
    });
    progress.done();
    return 0;
  },
};

/** Number of records of a doubri .hash file, from its 24-byte header (checked against the file size). */
export function doubriHashRecords(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot open '${file}': ${(e as Error).message}`, { file, cause: e });
  }
  try {
    const h = Buffer.alloc(24);
    const got = fs.readSync(fd, h, 0, 24, 0);
    return doubriHashHeader(h.subarray(0, got), fs.fstatSync(fd).size, file).count;
  } finally {
    fs.closeSync(fd);
  }
}

export const doubriInitCommand: Subcommand = {
  name: 'init',
  summary: 'doubri-init: print one "1" flag per record of a .hash file',
  usage: `Usage: neardup doubri init FILE.hash > FILE.hash.f

Like doubri 1.0's doubri-init: writes N ASCII '1' bytes (no newline) to standard output, N = the number of
records in FILE.hash. Unlike doubri, the header is checked against the file size.`,
  async run(args) {
    const { values, positionals } = parse(args, {});
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('expected exactly one argument: the .hash file');
    checkFiles({ inputs: positionals, outputs: [], stdout: true });
    let left = doubriHashRecords(positionals[0]);
    const chunk = Buffer.alloc(Math.min(left, 1 << 20), 0x31);
    while (left > 0) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      if (!process.stdout.write(part)) await new Promise<void>((r) => process.stdout.once('drain', () => r()));
      left -= part.length;
    }
    return 0;
  },
};

