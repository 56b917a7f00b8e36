// neardup shingles: the shingle hashes of each JSONL line, one JSON array per line on stdout.
import { shingleHashes, type ShingleHashKind } from '../../text/shingles';
import { readDocuments } from '../../io/input';
import { Progress } from '../progress';
import { writeSummary } from '../summary';
import { checkDocumentSizes, documentLimit } from '../limits';
import { checkFiles } from '../../io/files';
import {
  INPUT_OPTIONS, INPUT_USAGE, Output, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, inputOptionsFrom, oneOf, parse,
  shingleOptionsFrom, type Command,
} from '../common';

export const shinglesCommand: Command = {
  name: 'shingles',
  usage: `Usage: neardup shingles [options] [FILE...]

Prints one JSON array per input line: the hashes of its shingles, in order (64-bit values as decimal
strings, 32-bit values as numbers).

Options:
  --hash fast64|murmur3_32|murmur3_64|sha1_32|md5_64   (default fast64)
  --seed N                  seed for fast64/murmur3 (default 0)
  --dedupe                  each distinct hash once per line
${SHINGLE_USAGE}
${INPUT_USAGE}`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...SHINGLE_OPTIONS, ...INPUT_OPTIONS, hash: { type: 'string' }, seed: { type: 'string' }, dedupe: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const hash = oneOf('hash', values.hash, ['fast64', 'murmur3_32', 'murmur3_64', 'sha1_32', 'md5_64'] as const, 'fast64') as ShingleHashKind;
    let seed = 0n;
    if (values.seed !== undefined) {
      if (!/^\d+$/.test(String(values.seed)) || BigInt(String(values.seed)) >= 1n << 64n)
        throw new UsageError('--seed must be an integer from 0 to 2^64-1');
      seed = BigInt(String(values.seed));
    }
    const shingle = shingleOptionsFrom(values);
    const input = inputOptionsFrom(values);
    const files = positionals.length ? positionals : ['-'];
    checkFiles({ inputs: files, outputs: [], stdout: true });
    const out = new Output();
    const progress = new Progress('neardup shingles');
    let docs = 0, bytesRead = 0;
    const limit = documentLimit('shingles');
    for await (const batch of readDocuments(files, { ...input, onProgress: (bytes, fraction) => { bytesRead = bytes; progress.update({ bytes, docs, fraction }); } })) {
      checkDocumentSizes(batch, limit, 'shingles');
      const r = await shingleHashes(batch.packed, { ...shingle, hash, seed, dedupe: Boolean(values.dedupe) });
      for (let i = 0; i < batch.count; i++) {
        if (batch.valid && batch.valid[i] === 0) {
          await out.write('[]\n');
          continue;
        }
        // Written in pieces: a 100 MB line has ~10^8 shingles, more than one JS string can hold.
        const part = r.hashes.subarray(r.offsets[i], r.offsets[i + 1]);
        const wide = part instanceof BigUint64Array;
        let s = '[';
        for (let k = 0; k < part.length; k++) {
          if (k > 0) s += ',';
          s += wide ? `"${part[k]}"` : String(part[k]);
          if (s.length >= 1 << 16) {
            await out.write(s);
            s = '';
          }
        }
        await out.write(s + ']\n');
      }
      docs += batch.count;
    }
    await out.flush();
    progress.done({ bytes: bytesRead, docs, fraction: 1 });
    writeSummary({ command: 'shingles', inputs: files, documents: docs }, { hash, input_bytes: bytesRead });
    return 0;
  },
};
