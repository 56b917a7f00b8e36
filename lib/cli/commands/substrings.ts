// neardup substrings: repeated-substring removal (ExactSubstr, Lee et al. 2021) over a whole corpus: every span
// of at least L bytes that occurred earlier in the corpus is cut out of the text (the first occurrence stays;
// --drop-all-copies removes every copy). docs/substrings.md.
import * as os from 'node:os';
import { NeardupError, formatBytes } from '../../util/errors';
import { SubstringFinder, countSubstrings, removeSpans, suffixSortMissing, DEFAULT_MIN_LENGTH, DEFAULT_MIN_TOKENS, type SubstringSpans } from '../../substr/substrings';
import { checkInputFiles, displayName, fieldPath, idJson, readDocuments, type DocumentBatch, type DocumentIds } from '../../io/input';
import { CompressedOutput, checkOutputName, compressionOfName } from '../../io/kept';
import { memberRange } from '../../io/jsonl';
import { NativeOutput, OutputFile, checkFiles } from '../../io/files';
import { writeSummary } from '../summary';
import { Progress } from '../progress';
import { ParquetRowsInStep } from './paragraphs';
import { INPUT_OPTIONS, INPUT_USAGE, UsageError, idFieldOption, inputOptionsFrom, intOption, oneOf, parse, type Command } from '../common';

export const substringsCommand: Command = {
  name: 'substrings',
  usage: `Usage: neardup substrings [options] FILE... --kept OUT [--spans FILE]

Removes repeated substrings (ExactSubstr, Lee et al. 2021): a byte is removed when it lies in a window of L
bytes (--min-length, default ${DEFAULT_MIN_LENGTH}) whose content occurred at an earlier offset of the corpus
(the FILEs in order, their documents in order), so the first occurrence of a repeat is kept. Windows never
cross a document; offsets are bytes of the text's UTF-8, and each removed span is shrunk to whole code
points. --unit token counts tokens instead (runs of non-whitespace, as str.split(); L default
${DEFAULT_MIN_TOKENS}): a span runs from the first byte of a run of removed tokens to the last byte of its last. The corpus is held in memory with its suffix array (libdivsufsort, loaded at run time: about 5.3
bytes per input byte below 2 GiB, 9.3 beyond). FILEs are read twice (the second time to write --kept): no
standard input.

Outputs ('-' is standard output; each file appears complete or not at all; an input is never overwritten):
  --kept OUT                each input document with its text replaced by the kept text, every other byte
                            of the line as it was (JSONL; .gz/.zst compressed by name; a Parquet row: a
                            JSON object of its columns); "substrings_removed_bytes" and "substrings_spans"
                            are added at the end of each object
  --spans FILE              JSONL, one line per removed span, by document then start:
                            {"doc": D, "start": S, "end": E, "first_doc": F, "first_offset": O}
                            D, F: 0-based documents over all inputs (with --id-field also "id" and
                            "first_id"); [S, E): bytes of document D's text removed; O: where in document F
                            the span's first L bytes occur earlier (--drop-all-copies: the earliest other
                            occurrence), shifted by the bytes shrinking took off S (tokens: where the
                            first of its first L tokens starts)
  --index-out FILE          the text and its suffix array (docs/FORMAT.md section 16; about 5 bytes per
                            input byte), for 'neardup substrings count --index FILE STRING...' (byte mode)
Options:
  --min-length L            the shortest repeat removed, in units (bytes: default ${DEFAULT_MIN_LENGTH}, as Lee et al.,
                            4 to 2^30; tokens: default ${DEFAULT_MIN_TOKENS}, 1 to 2^30)
  --drop-all-copies         Lee et al.'s original rule: every copy is removed, the first one too
  --unit byte|token         windows of bytes (default) or of whitespace-separated tokens
  --id-field NAME           name documents in --spans by this field (a string or an integer)
${INPUT_USAGE}

Prints a JSON summary on stderr: documents, bad_lines, min_length, unit, rule, bytes_in, bytes_removed,
removed_fraction, spans, documents_changed, groups (distinct repeated windows), with --unit token tokens
and distinct_tokens, suffix_array_bytes (4 or 8 an entry), build_seconds, build_cpu_seconds,
build_mb_per_s (the suffix array's construction, on one thread), scan_seconds, seconds, cpu_seconds,
peak_rss_mb.`,
  async run(args) {
    if (args[0] === 'count') return countCommand(args.slice(1));
    const { values, positionals } = parse(args, {
      ...INPUT_OPTIONS,
      'index-out': { type: 'string' },
      kept: { type: 'string' },
      spans: { type: 'string' },
      'min-length': { type: 'string' },
      'drop-all-copies': { type: 'boolean' },
      unit: { type: 'string' },
      'id-field': { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const unit = oneOf('unit', values.unit, ['byte', 'token'] as const, 'byte');
    const minLength = unit === 'byte'
      ? intOption('min-length', values['min-length'], DEFAULT_MIN_LENGTH, 4, 2 ** 30)
      : intOption('min-length', values['min-length'], DEFAULT_MIN_TOKENS, 1, 2 ** 30);
    const dropAll = Boolean(values['drop-all-copies']);
    const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
    const input = inputOptionsFrom(values);
    const kept = values.kept === undefined ? undefined : String(values.kept);
    const spansFile = values.spans === undefined ? undefined : String(values.spans);
    if (positionals.length === 0) throw new UsageError('give the input FILEs (they are read twice: standard input cannot be)');
    if (positionals.includes('-')) throw new UsageError('the inputs are read twice: give files, not standard input (-)');
    const indexOut = values['index-out'] === undefined ? undefined : String(values['index-out']);
    if (kept === undefined && spansFile === undefined && indexOut === undefined) throw new UsageError('give --kept OUT, --spans FILE and/or --index-out FILE');
    if (indexOut !== undefined && unit !== 'byte') throw new UsageError('--index-out writes the suffix array of bytes: not with --unit token');
    const outputs = [
      ...(kept === undefined ? [] : [{ option: '--kept', file: kept }]),
      ...(spansFile === undefined ? [] : [{ option: '--spans', file: spansFile }]),
      ...(indexOut === undefined ? [] : [{ option: '--index-out', file: indexOut }]),
    ];
    if (kept !== undefined && /\.parquet$/i.test(kept)) throw new UsageError(`--kept '${kept}': the kept documents are written as JSONL (plain, .gz or .zst), not Parquet`);
    if (kept !== undefined) checkOutputName('--kept', kept, true);
    if (spansFile !== undefined) checkOutputName('--spans', spansFile, false);
    if (indexOut !== undefined) checkOutputName('--index-out', indexOut, false);
    checkFiles({ inputs: positionals, outputs });
    checkInputFiles(positionals);
    const missing = suffixSortMissing();
    if (missing) throw missing;

    const start = Date.now();
    const progress = new Progress('neardup substrings');
    const finder = new SubstringFinder();
    let docs = 0, bad = 0, bytes = 0, textBytes = 0;
    const idBatches: { first: number; ids: DocumentIds }[] = [];
    let spans: SubstringSpans;
    try {
      // batches of 4 MiB: what the reader leaves for the collector is there while the suffix array is built
      for await (const batch of readDocuments(positionals, {
        ...input, idField, batchBytes: 4 << 20, onProgress: (n, fraction) => { bytes = n; progress.update({ bytes: n, docs, fraction, extra: 'reading' }); },
      })) {
        const r = await finder.addBatch(batch.packed);
        if (r) {
          const line = batch.firstLine + r.bad;
          throw new NeardupError('ERR_NEARDUP_BAD_LINE', `${displayName(batch.file)}:${line}: ${r.message}`, { file: displayName(batch.file), line });
        }
        if (batch.ids) idBatches.push({ first: docs, ids: batch.ids });
        textBytes += Number(batch.packed.offsets[batch.count]);
        docs += batch.count;
        bad += batch.bad.size;
      }
      // the suffix array is allocated whole: a corpus that cannot fit is refused now, not after swapping
      textBytes += docs;  // a separator after each document
      const need = unit === 'byte' ? textBytes * (textBytes < 2 ** 31 ? 5.25 : 9.25) : 0;
      if (need > os.totalmem())
        throw new NeardupError('ERR_NEARDUP_INVALID_INPUT', `the corpus (${formatBytes(textBytes)} of text) needs about ${formatBytes(need)} of memory for itself and its suffix array, ` +
          `more than this machine has (${formatBytes(os.totalmem())}); split it into parts (docs/substrings.md, "Memory and speed")`);
      // one native call builds the suffix array and scans it: a heartbeat keeps the progress lines coming
      const stage = { bytes, docs, extra: 'suffix array' };
      progress.update(stage, true);
      const beat = setInterval(() => progress.update(stage), 1000);
      const index = indexOut === undefined ? undefined : NativeOutput.prepare(indexOut);
      try {
        spans = await finder.find({ minLength, unit, dropAll, ...(index ? { indexPath: index.path } : {}) });
        await index?.finish();
      } catch (e) {
        index?.abort();
        throw e;
      } finally {
        clearInterval(beat);
      }
    } finally {
      finder.close();
    }
    const idOf = (d: number): string => {
      let lo = 0, hi = idBatches.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (idBatches[mid].first <= d) lo = mid;
        else hi = mid - 1;
      }
      const b = idBatches[lo];
      return b === undefined ? 'null' : idJson(b.ids, d - b.first);
    };

    if (spansFile !== undefined) {
      progress.update({ bytes, docs, extra: 'writing spans' }, true);
      const out = OutputFile.open(spansFile);
      try {
        const { doc, start: s, end: e, firstDoc, firstOffset } = spans;
        for (let k = 0; k < doc.length; k++) {
          const ids = idField === undefined ? '' : `,"id":${idOf(doc[k])}`;
          const firstId = idField === undefined ? '' : `,"first_id":${idOf(firstDoc[k])}`;
          const w = out.write(`{"doc":${doc[k]}${ids},"start":${s[k]},"end":${e[k]},"first_doc":${firstDoc[k]}${firstId},"first_offset":${firstOffset[k]}}\n`);
          if (w) await w;
        }
        await out.commit();
      } catch (err) {
        out.abort();
        throw err;
      }
    }
    if (kept !== undefined) {
      progress.update({ bytes, docs, extra: 'writing kept' }, true);
      await writeKept(kept, positionals, input, spans, (n) => progress.update({ bytes: n, docs, extra: 'writing kept' }));
    }
    progress.done({ bytes, docs });
    const st = spans.stats;
    writeSummary({ command: 'substrings', inputs: positionals, documents: docs }, {
      bad_lines: bad,
      min_length: minLength,
      unit,
      rule: dropAll ? 'drop-all-copies' : 'keep-first',
      bytes_in: st.bytes,
      bytes_removed: st.removedBytes,
      removed_fraction: st.bytes === 0 ? 0 : +(st.removedBytes / st.bytes).toFixed(6),
      spans: st.spans,
      documents_changed: st.documentsChanged,
      groups: st.groups,
      ...(unit === 'token' ? { tokens: st.tokens, distinct_tokens: st.distinctTokens } : {}),
      suffix_array_bytes: st.suffixArrayBytes,
      build_seconds: +st.buildSeconds.toFixed(3),
      build_cpu_seconds: +st.buildCpuSeconds.toFixed(3),
      build_mb_per_s: st.buildSeconds > 0 ? +((st.bytes + st.documents) / 1e6 / st.buildSeconds).toFixed(1) : null,
      scan_seconds: +st.scanSeconds.toFixed(3),
      seconds: +((Date.now() - start) / 1000).toFixed(3),
    });
    return 0;
  },
};

const COUNT_USAGE = `Usage: neardup substrings count --index FILE STRING...

Occurrences of each STRING in the corpus of an index written by 'neardup substrings FILE... --index-out FILE'
(overlapping occurrences count; an occurrence never spans two documents), by binary search on its suffix
array, the file memory-mapped. Prints one JSON line per STRING on stdout: {"string": S, "count": N}; the
summary on stderr (documents, bytes of text, strings).

  --index FILE              the index (required)
  --no-verify               do not check the index's CRC-32C first (which reads all of it)`;

async function countCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { index: { type: 'string' }, 'no-verify': { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(COUNT_USAGE + '\n');
    return 0;
  }
  if (values.index === undefined) throw new UsageError('give --index FILE (written by neardup substrings --index-out)');
  if (positionals.length === 0) throw new UsageError('give the STRINGs to count');
  const i = positionals.findIndex((p) => p === '');
  if (i >= 0) throw new UsageError(`STRING ${i + 1} is empty`);
  const index = String(values.index);
  checkInputFiles([index], { sniff: false });
  const start = Date.now();
  const r = await countSubstrings(index, positionals, { verify: !values['no-verify'] });
  const out = OutputFile.open('-');
  for (let k = 0; k < positionals.length; k++) {
    const w = out.write(`{"string":${JSON.stringify(positionals[k])},"count":${r.counts[k]}}\n`);
    if (w) await w;
  }
  await out.commit();
  writeSummary({ command: 'substrings count', inputs: [index], documents: r.documents }, {
    bytes: r.bytes, strings: positionals.length, seconds: +((Date.now() - start) / 1000).toFixed(3),
  });
  return 0;
}

/**
 * The line with the member at a dot path replaced by `value` (a string; the reader found the text there) and
 * `added` (',"name":value...') put before the object's closing brace. Every other byte of the line stays as
 * it was: integers beyond 2^53, number spellings, escapes, member order.
 */
function replaceMember(line: string, path: string[], value: string | undefined, added: string): string {
  if (line.endsWith('\r')) line = line.slice(0, -1);
  if (line.startsWith('\uFEFF')) line = line.slice(1);  // a byte-order mark at the start of a file
  if (value !== undefined) {
    let r: [number, number] | undefined = [0, line.length];
    for (const part of path) {
      r = memberRange(line, part, r[0]);
      if (r === undefined) throw new NeardupError('ERR_NEARDUP_IO', `the inputs changed while they were read (no '${path.join('.')}' in a line on the second reading)`);
    }
    line = line.slice(0, r[0]) + JSON.stringify(value) + line.slice(r[1]);
  }
  const close = line.lastIndexOf('}');
  return line.slice(0, close) + added + line.slice(close);
}

/**
 * The second pass: every input document again, in order, written with its text replaced by the kept text. A
 * bad line (--on-bad-line skip|empty) is copied through as it is.
 */
async function writeKept(file: string, inputs: string[], input: { field: string; onBadLine: 'error' | 'skip' | 'empty' },
  spans: SubstringSpans, onProgress: (bytes: number) => void): Promise<void> {
  const out = CompressedOutput.open(file, compressionOfName(file));
  const parquetRows = new ParquetRowsInStep();
  const path = fieldPath(input.field);
  const { doc, start, end } = spans;
  let k = 0;  // the next span
  let d = 0;  // the next document
  try {
    for await (const batch of readDocuments(inputs, { ...input, raw: true, onProgress })) {
      const rows = batch.raw === undefined ? await parquetRows.take(batch, batch.count) : undefined;
      const lines: Buffer[] = [];
      for (let i = 0; i < batch.count; i++, d++) {
        const from = k;
        while (k < doc.length && doc[k] === d) k++;
        const line = rows ? rows[i] : batch.raw![i].toString('utf8');
        if (batch.bad.has(i)) {
          lines.push(Buffer.from(line + '\n'));
          continue;
        }
        let removed = 0;
        for (let j = from; j < k; j++) removed += end[j] - start[j];
        const value = k > from ? keptText(batch, i, start, end, from, k) : undefined;
        lines.push(Buffer.from(replaceMember(line, path, value, `,"substrings_removed_bytes":${removed},"substrings_spans":${k - from}`) + '\n'));
      }
      await out.write(Buffer.concat(lines));
    }
    if (k !== doc.length) throw new NeardupError('ERR_NEARDUP_IO', `the inputs changed while they were read (${doc.length - k} spans past their documents)`);
    await out.commit();
  } catch (e) {
    out.abort();
    throw e;
  } finally {
    await parquetRows.close();
  }
}

function keptText(batch: DocumentBatch, i: number, start: Float64Array, end: Float64Array, from: number, to: number): string {
  const { data, offsets } = batch.packed;
  const text = data.subarray(offsets[i], offsets[i + 1]);
  return removeSpans(text, start, end, from, to).toString('utf8');
}
