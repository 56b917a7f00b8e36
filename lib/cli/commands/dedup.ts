// neardup dedup: keeps the first occurrence of each near-duplicate cluster of JSONL lines (MinHash LSH).
import { NeardupError } from '../../errors';
import { DedupSession, dedupLimits, documentTooLarge, dedupShingleDefaults, tooManyDocuments, tooManyPairs, type DedupClustering, type DedupProfile, type DedupVerify } from '../../dedup';
import { version } from '../../version';
import { openInput, readJsonl, readLines } from '../jsonl';
import { Progress } from '../progress';
import { OutputFile, checkFiles, isStdout, watchSpillFolders } from '../files';
import { seedOption } from './minhash';
import {
  INPUT_OPTIONS, INPUT_USAGE, SHINGLE_OPTIONS, SHINGLE_USAGE, UsageError, floatOption, inputOptionsFrom, intOption, oneOf,
  parse, shingleOptionsFrom, type Command,
} from '../common';

function parseSize(name: string, v: unknown): number {
  if (v === undefined) return 0;
  const m = /^(\d+(?:\.\d+)?)([kKmMgGtT]?)[bB]?$/.exec(String(v));
  if (!m) throw new UsageError(`--${name} must be a size like 512M or 2G, got '${String(v)}'`);
  const mult = { '': 1, k: 1 << 10, m: 1 << 20, g: 1 << 30, t: 2 ** 40 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Math.floor(Number(m[1]) * mult);
}

export const dedupCommand: Command = {
  name: 'dedup',
  summary: 'remove near-duplicate JSONL lines (MinHash LSH), keeping first occurrences',
  usage: `Usage: neardup dedup [options] [FILE...]

Finds near-duplicate lines (MinHash LSH candidates, then each candidate pair checked against the threshold)
and keeps the first line of each group. FILEs are JSONL, plain or gzip, read in order as one corpus ('-' or
no FILE: stdin).

Defaults (the verified answer at --threshold 0.8): char 5-grams of the lower-cased text; (b, r) chosen so
that pairs at the threshold are candidates with probability >= 0.99; exact Jaccard of every candidate pair
(shingle sets kept in a temporary file in --tmp); a line is dropped only for an earlier kept line it is at or
above the threshold with (doubri's rule). --fast skips the verification (today's speed, lower precision and
recall). --profile doubri-v1 defaults to doubri 1.0 exactly: the text as is, 800 values, 40 x 20 bands, no
verification (its flags equal doubri's).

Prints a JSON summary on stdout: documents, bad_lines, kept, duplicates, clusters, candidate_pairs and
reported_pairs (null when pairs were not enumerated), every effective setting (version, profile, threshold,
num_perm, b, r, seed, banding, shingle {unit, n, split, lowercase, strip_punctuation, fold_whitespace,
short}, verify, clustering), input_bytes, seconds, mb_per_s, peak_rss_mb, spilled_bytes (every byte written
to temporary files), runs. Progress on stderr (terminal only). Threads: --threads N or NEARDUP_THREADS (default:
all cores).

Outputs (any of; '-' is standard output, and then the summary goes to stderr; an output that is one of
the inputs is refused; each file appears complete or not at all: temporary file + rename):
  --kept FILE               the kept lines, unchanged (needs file inputs, read twice); bad lines
                            (--on-bad-line skip|empty) are never copied
  --flags FILE              one line per input line: 1 keep, 0 duplicate
  --clusters FILE           one line per input line: the 0-based line number of the kept line it is
                            dropped for (its own number when kept); --clustering components: the first
                            line of its connected component
  --pairs FILE              JSONL {"a": i, "b": j, "estimate": x[, "exact": y]} for each reported pair
                            (held in memory before they are written, 16 bytes each: with --memory SIZE,
                            more than SIZE/16 pairs stop with an error)
Options:
  --fast                    no verification (same as --verify none): every candidate pair counts
  --profile fast|doubri-v1|datasketch   MinHash profile (default fast); the shingling stays the same
                            (lower-cased char 5-grams) unless given; doubri-v1: see above
  --num-perm K              values per signature (default 128; doubri-v1 800)
  --seed N                  MinHash seed
  --threshold T             Jaccard threshold (default 0.8): chooses (b, r) (see --banding), and is the
                            bar of the verification
  --banding auto|datasketch|recall  how (b, r) follow from the threshold: datasketch's balanced choice,
                            or for recall (every pair >= T is a candidate with probability >=
                            --min-recall, fewest false candidates); auto (default) = recall when
                            verifying, datasketch with --fast (128 values, T 0.8: 16 x 6 / 9 x 13)
  --min-recall P            target of --banding recall (default 0.99)
  --bands B --rows R        explicit banding instead (doubri-v1 default: 40 x 20, as doubri)
  --verify exact|estimate|none  re-check candidate pairs with the exact Jaccard of the shingle sets
                            (default; doubri-v1: none), the full signature (estimate), or not at all
  --clustering kept|components  kept (default): a line is dropped only for an earlier kept line it
                            matches; components: connected components of the matches (chains can join
                            lines below the threshold)
  --memory SIZE             memory budget for band keys (e.g. 512M): beyond it, sorted runs are spilled to
                            --tmp and merged, and signatures are kept in --tmp, not in memory; the
                            result is identical (default: band keys and signatures in memory). It also
                            bounds per-document work: a document needing more working memory than SIZE
                            (6 bytes per text byte; datasketch 20, doubri-v1 60, --verify exact 64) or
                            more than SIZE/16 documents stop with an error stating the limit (for
                            these limits SIZE is at least 64M)
  --tmp DIR                 folder for spilled runs, signatures and shingle sets (default: the system
                            temp folder), in a folder DIR/neardup-spill-PID-XXXXXX removed at the end, on
                            error and on Ctrl-C (a killed run's folder is removed by the next run)
  -h, --help                this help
${SHINGLE_USAGE}
  --shingle word|char       same as --unit
  --keep-case               do not lower-case (the default lower-cases, except doubri-v1)
${INPUT_USAGE}`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...SHINGLE_OPTIONS, ...INPUT_OPTIONS,
      kept: { type: 'string' }, flags: { type: 'string' }, clusters: { type: 'string' }, pairs: { type: 'string' },
      profile: { type: 'string' }, 'num-perm': { type: 'string' }, seed: { type: 'string' }, threshold: { type: 'string' },
      bands: { type: 'string' }, rows: { type: 'string' }, verify: { type: 'string' }, memory: { type: 'string' },
      tmp: { type: 'string' }, banding: { type: 'string' }, 'min-recall': { type: 'string' },
      fast: { type: 'boolean' }, clustering: { type: 'string' }, shingle: { type: 'string' }, 'keep-case': { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length === 0) positionals.push('-');
    const profile = oneOf('profile', values.profile, ['fast', 'doubri-v1', 'datasketch'] as const, 'fast') as DedupProfile;
    if (values.fast && values.verify !== undefined && values.verify !== 'none') throw new UsageError('--fast means --verify none');
    const verify = oneOf('verify', values.verify, ['none', 'estimate', 'exact'] as const,
      values.fast || profile === 'doubri-v1' ? 'none' : 'exact') as DedupVerify;
    const clustering = oneOf('clustering', values.clustering, ['kept', 'components'] as const, 'kept') as DedupClustering;
    const banding = oneOf('banding', values.banding, ['auto', 'datasketch', 'recall'] as const, 'auto');
    const minRecall = values['min-recall'] === undefined ? undefined : floatOption('min-recall', values['min-recall'], 0.99, 0.01, 0.999999);
    const numPerm = values['num-perm'] === undefined ? undefined : intOption('num-perm', values['num-perm'], 128, 1, 65536);
    const threshold = values.threshold === undefined ? undefined : floatOption('threshold', values.threshold, 0.8, 0.01, 1);
    if ((values.bands === undefined) !== (values.rows === undefined)) throw new UsageError('give both --bands and --rows');
    if (values.bands !== undefined && threshold !== undefined && verify === 'none')
      throw new UsageError('--threshold with --bands/--rows only makes sense with --verify');
    if (values.bands !== undefined && (values.banding !== undefined || minRecall !== undefined))
      throw new UsageError('--banding/--min-recall choose (b, r): not with --bands/--rows');
    const b = values.bands === undefined ? undefined : intOption('bands', values.bands, 1, 1, 65536);
    const r = values.rows === undefined ? undefined : intOption('rows', values.rows, 1, 1, 65536);
    const seed = seedOption(values.seed, profile, numPerm ?? (profile === 'doubri-v1' ? 800 : 128));
    const memory = parseSize('memory', values.memory);
    const tmp = values.tmp === undefined ? (await import('node:os')).tmpdir() : String(values.tmp);
    if (values.shingle !== undefined && values.unit !== undefined) throw new UsageError('give --shingle or --unit, not both');
    if (values['keep-case'] && values.lowercase) throw new UsageError('give --keep-case or --lowercase, not both');
    const shingleValues: Record<string, unknown> = { ...values };
    if (values.shingle !== undefined) shingleValues.unit = values.shingle;
    if (values['keep-case']) shingleValues.lowercase = false;
    const shingle = shingleOptionsFrom(shingleValues, dedupShingleDefaults(profile));
    const input = inputOptionsFrom(values);
    if (values.kept !== undefined && positionals.includes('-')) throw new UsageError('--kept needs file inputs (they are read twice), not stdin');
    const outputs = (['kept', 'flags', 'clusters', 'pairs'] as const)
      .filter((o) => values[o] !== undefined).map((o) => ({ option: `--${o}`, file: String(values[o]) }));
    const summaryToStderr = outputs.some((o) => isStdout(o.file));
    checkFiles({ inputs: positionals, outputs, stdout: !summaryToStderr });
    if (!values.kept && !values.flags && !values.clusters && !values.pairs)
      process.stderr.write('neardup dedup: no output requested (--kept, --flags, --clusters, --pairs); printing the summary only\n');

    const start = Date.now();
    // spill folders: runs and signatures (--memory), shingle sets (--verify exact)
    const unwatch = memory > 0 || verify === 'exact' ? watchSpillFolders(tmp) : () => undefined;
    let session: DedupSession;
    try {
      session = new DedupSession({
        ...shingle, profile, numPerm, seed, threshold, b, r, verify, clustering, banding, minRecall, pairs: values.pairs !== undefined,
        // --pairs: capped only by --memory (16 bytes per pair), else every pair is written
        maxPairs: memory ? dedupLimits({ profile, verify, memory }).pairs : Number.MAX_SAFE_INTEGER,
        memory, tmp,
      });
    } catch (e) {
      unwatch();
      throw e;
    }
    const progress = new Progress('neardup dedup');
    let docs = 0, bad = 0, bytes = 0;
    const badLines: number[] = [];  // 0-based, ascending: never copied to --kept
    const open: OutputFile[] = [];
    const create = (file: unknown) => {
      const f = OutputFile.open(String(file));
      open.push(f);
      return f;
    };
    try {
      // parse the next batch on this thread while the pool signs and indexes the previous ones (two in flight)
      const pending: Promise<void>[] = [];
      const limits = dedupLimits({ profile, verify, memory });
      for await (const batch of readJsonl(positionals, { ...input, onProgress: (n, fraction) => { bytes = n; progress.update({ bytes: n, docs, fraction }); } })) {
        if (docs + batch.texts.length > limits.documents) throw tooManyDocuments(docs + batch.texts.length, { memory });
        for (let i = 0; i < batch.raw.length; i++) {
          // the raw line bounds its text's UTF-8 bytes (JSON escapes only make it longer)
          if (batch.raw[i].length > limits.documentBytes && batch.texts[i] !== null) {
            const n = Buffer.byteLength(batch.texts[i]!, 'utf8');
            if (n > limits.documentBytes) throw documentTooLarge(`${batch.file === '-' ? '<stdin>' : batch.file}:${batch.firstLine + i}: `, n, { profile, verify, memory });
          }
        }
        const p = session.add(batch.texts);
        p.catch(() => undefined);  // awaited below
        pending.push(p);
        for (const i of batch.bad.keys()) badLines.push(docs + i);
        docs += batch.texts.length;
        bad += batch.bad.size;
        if (pending.length >= 2) await pending.shift();
      }
      await Promise.all(pending);
      progress.update({ bytes, docs, extra: 'clustering' }, true);
      const res = await session.finish().catch((e) => {
        throw e instanceof NeardupError && e.code === 'ERR_NEARDUP_TOO_MANY_RESULTS' ? tooManyPairs({ memory }) : e;
      });
      const rep = res.representative;
      // One output of n lines, built in pieces of about 64 KiB (no await per line).
      const writeLines = async (file: unknown, n: number, line: (i: number) => string) => {
        const f = create(file);
        let s = '';
        for (let i = 0; i < n; i++) {
          s += line(i);
          if (s.length >= 1 << 16) {
            await f.write(s);
            s = '';
          }
        }
        await f.write(s);
        await f.commit();
      };
      if (values.flags !== undefined) await writeLines(values.flags, rep.length, (i) => (rep[i] === i ? '1\n' : '0\n'));
      if (values.clusters !== undefined) await writeLines(values.clusters, rep.length, (i) => `${rep[i]}\n`);
      if (values.pairs !== undefined) {
        await writeLines(values.pairs, res.pairA.length, (i) => {
          const exact = res.pairExact.length ? `, "exact": ${+res.pairExact[i].toFixed(6)}` : '';
          return `{"a": ${res.pairA[i]}, "b": ${res.pairB[i]}, "estimate": ${+res.pairEstimate[i].toFixed(6)}${exact}}\n`;
        });
      }
      if (values.kept !== undefined) {
        const f = create(values.kept);
        let line = 0;
        const nl = Buffer.from('\n');
        let nextBad = 0;
        for (const file of positionals) {
          let first = true;
          for await (let raw of readLines(await openInput(file), file)) {
            if (first && raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) raw = raw.subarray(3);
            first = false;
            const isBad = nextBad < badLines.length && badLines[nextBad] === line;
            if (isBad) nextBad++;
            else if (line < rep.length && rep[line] === line) { await f.write(raw); await f.write(nl); }
            line++;
          }
        }
        if (line !== rep.length) throw new NeardupError('ERR_NEARDUP_IO', 'the input changed between the two passes');
        await f.commit();
      }
      progress.done();
      const seconds = (Date.now() - start) / 1000;
      // Pairs are enumerated only when they are verified or written; otherwise clusters come straight from
      // the band buckets and the pair counts are unknown (null), not zero.
      const pairsKnown = verify !== 'none' || values.pairs !== undefined;
      const st = res.settings, sh = st.shingle;
      const summary = {
        documents: docs, bad_lines: bad, kept: docs - res.duplicates, duplicates: res.duplicates, clusters: res.clusters,
        candidate_pairs: pairsKnown ? res.candidatePairs : null, reported_pairs: pairsKnown ? res.keptPairs : null,
        version, profile: st.profile, threshold: st.threshold, num_perm: res.numPerm, b: res.b, r: res.r, seed: st.seed, banding: st.banding,
        shingle: {
          unit: sh.unit, n: sh.n, split: sh.split, lowercase: sh.lowercase, strip_punctuation: sh.stripPunctuation,
          fold_whitespace: sh.foldWhitespace, short: sh.short,
        },
        verify: st.verify, clustering: st.clustering, input_bytes: bytes, seconds: +seconds.toFixed(3), mb_per_s: +(bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
        peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1), spilled_bytes: res.spilledBytes, runs: res.runs,
      };
      (summaryToStderr ? process.stderr : process.stdout).write(JSON.stringify(summary) + '\n');
      return 0;
    } finally {
      for (const f of open) f.abort();  // no-op for committed ones
      session.close();
      unwatch();
    }
  },
};
