// neardup decontaminate: report (and with --kept remove) the corpus documents that share n-grams with
// benchmark files (docs/decontaminate.md).
import { writeSummary } from '../summary';
import { Progress } from '../progress';
import { OutputFile, checkFiles } from '../../io/files';
import { checkInputFiles, idJson, readDocuments, sniffFile } from '../../io/input';
import { checkOutputName, compressionOfName, copyDocuments, openDocumentOutput, planParquetOutputs, type DocumentOutput, type KeptInput } from '../../io/kept';
import {
  DecontaminationIndex, addBenchmarkFiles, benchmarkRow, contaminationAt, isContaminated, type BenchmarkFile,
} from '../../filter/decontaminate';
import {
  INPUT_OPTIONS, INPUT_USAGE, UsageError, floatOption, idFieldOption, inputOptionsFrom, intOption, oneOf, parse, type Command, type OptionValues,
} from '../common';
import { checkDocumentSizes, documentLimit } from '../limits';
import { killPoint } from '../../util/test-hooks';

const list = (v: OptionValues[string]): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map(String));

export const decontaminateCommand: Command = {
  name: 'decontaminate',
  usage: `Usage: neardup decontaminate --against BENCH... --report FILE [options] [CORPUS...]

Finds the corpus documents that share word n-grams with benchmark files (GPT-3 style contamination
check): builds a read-only index of the benchmarks' n-grams, then streams the corpus and reports every
contaminated document. Text is lower-cased (Unicode), \\p{P} punctuation deleted and split on whitespace,
on both sides (docs/decontaminate.md).

Benchmarks:
  --against FILE            a benchmark file (repeat for several): JSONL (plain, gzip, zstd), Parquet,
                            or plain text, one row per line
  --bench-field NAME        JSONL/Parquet: a field holding a row's text (repeat for several; default
                            "text"; a dot path names a nested member)
  --bench-join              join a row's fields with a newline into one text (default: each field is
                            indexed on its own, so no n-gram spans two fields)
  --bench-format auto|jsonl|text  default auto: Parquet by its first bytes, JSONL when the first line
                            is a JSON object, else plain text

Corpus ('-' or nothing: standard input):
${INPUT_USAGE.split('\n').slice(1).join('\n')}
  --id-field NAME           report each document's id (a string or integer field) too

Matching:
  -n, --ngram N             n-gram length in word tokens (default 13)
  --min-tokens M            texts of M..N-1 tokens are matched whole (default 8, GPT-3's shortest
                            n-gram; N: n-grams only): a benchmark row that short is found where it
                            occurs whole, a document that short where it occurs whole in a benchmark
  --approx                  a Bloom filter instead of the exact index (much smaller; no false
                            negatives; the report cannot name benchmark rows)
  --fp-rate P               --approx: the false-positive bound of each lookup (default 1e-8)

Output:
  --report FILE             JSONL, one line per contaminated document ('-': standard output)
  --kept FILE               the corpus without the dropped documents (JSONL, .gz/.zst by name;
                            .parquet for Parquet corpora); reads the corpus twice (not standard input)
  --drop-above F            drop a document whose overlap (fraction of its tokens inside matched
                            spans) is above F (default 0: any match, the usual recipe)
  --max-rows K              benchmark rows listed per document (default 16; rows_total counts all)
  --samples K               matched n-grams given as text per document (default 3)

Sharding:
  --shard i/N               this run takes the corpus files i, i+N, i+2N, ... (0-based; e.g. a Slurm
                            array task); the N reports together are the report of one run over all

The JSON summary goes to stderr.`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...INPUT_OPTIONS,
      against: { type: 'string', multiple: true },
      'bench-field': { type: 'string', multiple: true },
      'bench-join': { type: 'boolean' },
      'bench-format': { type: 'string' },
      'id-field': { type: 'string' },
      ngram: { type: 'string', short: 'n' },
      'min-tokens': { type: 'string' },
      approx: { type: 'boolean' },
      'fp-rate': { type: 'string' },
      report: { type: 'string' },
      kept: { type: 'string' },
      'drop-above': { type: 'string' },
      'max-rows': { type: 'string' },
      samples: { type: 'string' },
      shard: { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    const against = list(values.against);
    if (against.length === 0) throw new UsageError('give the benchmark files with --against FILE (one or more)');
    if (against.includes('-')) throw new UsageError('--against: a benchmark is read from a file, not standard input');
    if (values.report === undefined) throw new UsageError('give --report FILE (\'-\': standard output)');
    const given = positionals.length ? positionals : ['-'];
    // --shard i/N (a Slurm array task, a Kubernetes Indexed Job): every N-th corpus file from the i-th
    let shard: { i: number; n: number } | undefined;
    if (values.shard !== undefined) {
      const m = /^(\d+)\/(\d+)$/.exec(String(values.shard));
      if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2]))
        throw new UsageError(`--shard must be i/N with 0 <= i < N (e.g. 0/4), got '${String(values.shard)}'`);
      shard = { i: Number(m[1]), n: Number(m[2]) };
      if (given.includes('-')) throw new UsageError('--shard splits the corpus files: give them as files, not standard input');
    }
    const corpus = shard ? given.filter((_, k) => k % shard!.n === shard!.i) : given;
    const report = String(values.report);
    const kept = values.kept === undefined ? undefined : String(values.kept);
    if (kept !== undefined && corpus.includes('-')) throw new UsageError('--kept reads the corpus twice: give it as files, not standard input');
    const n = intOption('ngram', values.ngram, 13, 1, 4096);
    const minTokens = intOption('min-tokens', values['min-tokens'], Math.min(8, n), Math.max(1, n - 63), n);
    const approx = Boolean(values.approx);
    if (values['fp-rate'] !== undefined && !approx) throw new UsageError('--fp-rate is only used with --approx');
    const fpRate = floatOption('fp-rate', values['fp-rate'], 1e-8, 1e-12, 0.5);
    const dropAbove = floatOption('drop-above', values['drop-above'], 0, 0, 1);
    const maxRows = intOption('max-rows', values['max-rows'], 16, 0, 1 << 20);
    const maxSamples = intOption('samples', values.samples, 3, 0, 1024);
    const benchFields = list(values['bench-field']).map((f) => inputOptionsFrom({ field: f }).field);
    const benchFormat = oneOf('bench-format', values['bench-format'], ['auto', 'jsonl', 'text'] as const, 'auto');
    const input = inputOptionsFrom(values);
    const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
    // every file before any work: outputs are not inputs, inputs exist and are of a format read
    const outputs = [{ option: '--report', file: report }, ...(kept === undefined ? [] : [{ option: '--kept', file: kept }])];
    checkFiles({ inputs: [...against, ...corpus], outputs });
    checkOutputName('--report', report, false);
    if (kept !== undefined) checkOutputName('--kept', kept, true);
    checkInputFiles([...against, ...corpus]);
    const parquetPlan = kept === undefined ? undefined : await planParquetOutputs({ kept }, corpus);

    const start = Date.now();
    const progress = new Progress('neardup decontaminate');
    const index = new DecontaminationIndex({ n, minTokens, approx, fpRate });
    const open: { abort(): void }[] = [];
    try {
      progress.update({ extra: 'reading the benchmarks' }, true);
      const bench: BenchmarkFile[] = await addBenchmarkFiles(index, against, {
        fields: benchFields.length ? benchFields : ['text'], join: Boolean(values['bench-join']), format: benchFormat,
      });
      await index.seal();
      const benchSeconds = (Date.now() - start) / 1000;
      const rowsJson = bench.map((b) => JSON.stringify(b.file));
      const rowJson = (r: number) => {
        const at = benchmarkRow(bench, r);
        return `{"file":${rowsJson[at.fileIndex]},"row":${at.row}}`;
      };

      const out = OutputFile.open(report);
      open.push(out);
      const limit = documentLimit('decontaminate');
      const files: KeptInput[] = [];
      let drop = new Uint8Array(1 << 16);
      let fraction: number | undefined;
      let docs = 0, bytes = 0, contaminated = 0, dropped = 0, bad = 0, matchedNgrams = 0, totalNgrams = 0, lookups = 0;
      const shortLengths = index.stats().shortLengths;
      const probeStart = Date.now();
      for await (const b of readDocuments(corpus, {
        field: input.field, idField, onBadLine: input.onBadLine,
        onProgress: (read, f) => { bytes = read; fraction = f; },
      })) {
        checkDocumentSizes(b, limit, 'decontaminate');
        // each input's documents, for --kept (an empty input: none)
        while (files.length <= b.fileIndex) files.push({ file: corpus[files.length], ...sniffFile(corpus[files.length]), first: docs, count: 0 });
        files[b.fileIndex].count += b.count;
        if (docs + b.count > drop.length) {
          let size = drop.length;
          while (size < docs + b.count) size *= 2;
          const grown = new Uint8Array(size);
          grown.set(drop);
          drop = grown;
        }
        const p = await index.probe(b.packed, { ...(b.valid ? { valid: b.valid } : {}), maxRows, maxSamples });
        const fileJson = JSON.stringify(b.file === '-' ? '-' : b.file);
        for (let i = 0; i < b.count; i++) {
          if (b.valid && b.valid[i] === 0) {
            bad++;
            drop[docs + i] = 2;  // not a document: copied nowhere
            continue;
          }
          matchedNgrams += p.matched[i];
          totalNgrams += p.ngrams[i];
          // the index lookups this document made (the n-grams, then each short row length)
          const t = p.tokens[i];
          if (t >= minTokens) {
            lookups += p.ngrams[i];
            for (const len of shortLengths) if (len <= t && !(t < n && len === t)) lookups += t - len + 1;
          }
          if (!isContaminated(p, i)) continue;
          contaminated++;
          const c = contaminationAt(p, i);
          const isDropped = c.overlap > dropAbove;
          if (isDropped) {
            drop[docs + i] = 1;
            dropped++;
          }
          let line = `{"file":${fileJson},"line":${b.firstLine - 1 + i}`;
          if (b.ids) line += `,"id":${idJson(b.ids, i)}`;
          line += `,"tokens":${c.tokens},"ngrams":${c.ngrams},"matched":${c.matched},"short_rows":${c.shortFound},` +
            `"covered":${c.covered},"overlap":${+c.overlap.toFixed(6)},"dropped":${isDropped}`;
          if (!approx) line += `,"rows_total":${c.rowsTotal},"rows":[${c.rows.map(rowJson).join(',')}]`;
          line += `,"samples":${JSON.stringify(c.samples)}}\n`;
          const w = out.write(line);
          if (w) await w;
        }
        docs += b.count;
        progress.update({ bytes, docs, fraction });
      }
      await killPoint('decontaminate-report');  // tests: the report written, not yet committed
      await out.commit();
      const probeSeconds = (Date.now() - probeStart) / 1000;
      if (kept !== undefined) {
        progress.update({ bytes, docs, extra: 'writing --kept' }, true);
        let keptOut: DocumentOutput | undefined;
        await copyDocuments(files, (d) => (drop[d] === 0 ? 1 : 0), {
          kept: () => {
            if (!keptOut) {
              keptOut = openDocumentOutput(kept, compressionOfName(kept), parquetPlan?.kept);
              open.push(keptOut);
            }
            return keptOut;
          },
        });
        if (!keptOut) {
          keptOut = openDocumentOutput(kept, compressionOfName(kept), parquetPlan?.kept);
          open.push(keptOut);
        }
        await keptOut.commit();
      }
      progress.done({ bytes, docs, fraction: 1 });
      const st = index.stats();
      const seconds = (Date.now() - start) / 1000;
      writeSummary({ command: 'decontaminate', inputs: corpus, documents: docs }, {
        benchmarks: against, benchmark_rows: bench.reduce((s, f) => s + f.rows, 0), benchmark_texts: st.texts,
        contaminated, dropped, kept: kept === undefined ? null : docs - dropped - bad, bad_lines: bad,
        ngrams: totalNgrams, matched_ngrams: matchedNgrams,
        n, min_tokens: minTokens, drop_above: dropAbove, mode: approx ? 'approx' : 'exact',
        index_keys: st.keys, index_bytes: st.memoryBytes, short_lengths: st.shortLengths,
        lookups, ...(approx ? { fp_rate: fpRate, fp_bound: st.fpBound, false_lookups_bound: +(lookups * st.fpBound).toPrecision(4) } : {}),
        report, kept_file: kept ?? null, shard: shard ? `${shard.i}/${shard.n}` : null,
        input_bytes: bytes, index_seconds: +benchSeconds.toFixed(3), probe_seconds: +probeSeconds.toFixed(3),
        mb_per_s: +(bytes / 1e6 / Math.max(probeSeconds, 1e-9)).toFixed(2), seconds: +seconds.toFixed(3),
      });
      return 0;
    } finally {
      for (const f of open) f.abort();  // no-op for committed ones
      index.close();
    }
  },
};
