// neardup dedup: keeps the first occurrence of each near-duplicate cluster of JSONL lines (MinHash LSH).
import { NeardupError } from '../../errors';
import { DedupSession, type DedupProfile, type DedupVerify } from '../../dedup';
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

Finds clusters of near-duplicate lines (MinHash LSH: documents sharing a band are candidates; clusters are
connected components) and keeps the first line of each. FILEs are JSONL, plain or gzip, read in order as one
corpus ('-' or no FILE: stdin). Prints a JSON summary on stdout: documents, bad_lines, kept, duplicates,
clusters, candidate_pairs and reported_pairs (null unless --verify or --pairs), profile, num_perm, b, r, verify, input_bytes, seconds, mb_per_s,
peak_rss_mb, spilled_bytes, runs. Progress on stderr (terminal only). Threads: NEARDUP_THREADS (default:
all cores).

Outputs (any of; '-' is standard output, and then the summary goes to stderr; an output that is one of
the inputs is refused; each file appears complete or not at all: temporary file + rename):
  --kept FILE               the kept lines, unchanged (needs file inputs, read twice)
  --flags FILE              one line per input line: 1 keep, 0 duplicate
  --clusters FILE           one line per input line: the 0-based line number of its cluster's first line
  --pairs FILE              JSONL {"a": i, "b": j, "estimate": x[, "exact": y]} for each reported pair
Options:
  --profile fast|doubri-v1|datasketch   MinHash profile (default fast)
  --num-perm K              values per signature (default 128; doubri-v1 800)
  --seed N                  MinHash seed
  --threshold T             Jaccard threshold (default 0.8): chooses (b, r) (see --banding), and is the
                            bar of --verify
  --banding auto|datasketch|recall  how (b, r) follow from the threshold: datasketch's balanced choice,
                            or for recall (every pair >= T is a candidate with probability >=
                            --min-recall, fewest false candidates); auto (default) = recall with
                            --verify, datasketch without (fast, 128 values, T 0.8: 16 x 6 / 9 x 13)
  --min-recall P            target of --banding recall (default 0.99)
  --bands B --rows R        explicit banding instead (doubri-v1 default: 40 x 20, as doubri)
  --verify none|estimate|exact  re-check candidate pairs with the full signature (estimate) or the exact
                            Jaccard of the shingle sets, dropping pairs below the threshold (default none)
  --memory SIZE             memory budget for band keys (e.g. 512M): beyond it, sorted runs are spilled to
                            --tmp and merged, and signatures (and shingle sets) are kept in --tmp, not in
                            memory; the result is identical (default: everything in memory)
  --tmp DIR                 folder for spilled runs, signatures and shingle sets (default: the system
                            temp folder), in a folder DIR/neardup-spill-PID-XXXXXX removed at the end, on
                            error and on Ctrl-C (a killed run's folder is removed by the next run)
  -h, --help                this help
${SHINGLE_USAGE}
                            (profile datasketch: --unit word --lowercase by default)
${INPUT_USAGE}`,
  async run(args) {
    const { values, positionals } = parse(args, {
      ...SHINGLE_OPTIONS, ...INPUT_OPTIONS,
      kept: { type: 'string' }, flags: { type: 'string' }, clusters: { type: 'string' }, pairs: { type: 'string' },
      profile: { type: 'string' }, 'num-perm': { type: 'string' }, seed: { type: 'string' }, threshold: { type: 'string' },
      bands: { type: 'string' }, rows: { type: 'string' }, verify: { type: 'string' }, memory: { type: 'string' },
      tmp: { type: 'string' }, banding: { type: 'string' }, 'min-recall': { type: 'string' },
    });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length === 0) positionals.push('-');
    const profile = oneOf('profile', values.profile, ['fast', 'doubri-v1', 'datasketch'] as const, 'fast') as DedupProfile;
    const verify = oneOf('verify', values.verify, ['none', 'estimate', 'exact'] as const, 'none') as DedupVerify;
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
    const shingleDefaults = profile === 'datasketch' ? { unit: 'word' as const, lowercase: true } : {};
    const shingle = shingleOptionsFrom(values, shingleDefaults);
    const input = inputOptionsFrom(values);
    if (values.kept !== undefined && positionals.includes('-')) throw new UsageError('--kept needs file inputs (they are read twice), not stdin');
    const outputs = (['kept', 'flags', 'clusters', 'pairs'] as const)
      .filter((o) => values[o] !== undefined).map((o) => ({ option: `--${o}`, file: String(values[o]) }));
    const summaryToStderr = outputs.some((o) => isStdout(o.file));
    checkFiles({ inputs: positionals, outputs, stdout: !summaryToStderr });
    if (!values.kept && !values.flags && !values.clusters && !values.pairs)
      process.stderr.write('neardup dedup: no output requested (--kept, --flags, --clusters, --pairs); printing the summary only\n');

    const start = Date.now();
    const unwatch = memory > 0 ? watchSpillFolders(tmp) : () => undefined;
    let session: DedupSession;
    try {
      session = new DedupSession({
        ...shingle, profile, numPerm, seed, threshold, b, r, verify, banding, minRecall, pairs: values.pairs !== undefined,
        memory, tmp,
      });
    } catch (e) {
      unwatch();
      throw e;
    }
    const progress = new Progress('neardup dedup');
    let docs = 0, bad = 0, bytes = 0;
    const open: OutputFile[] = [];
    const create = (file: unknown) => {
      const f = OutputFile.open(String(file));
      open.push(f);
      return f;
    };
    try {
      // parse the next batch on this thread while the pool signs and indexes the previous ones (two in flight)
      const pending: Promise<void>[] = [];
      for await (const batch of readJsonl(positionals, { ...input, onProgress: (n) => { bytes = n; progress.update({ bytes: n, docs }); } })) {
        const p = session.add(batch.texts);
        p.catch(() => undefined);  // awaited below
        pending.push(p);
        docs += batch.texts.length;
        bad += batch.bad.size;
        if (pending.length >= 2) await pending.shift();
      }
      await Promise.all(pending);
      progress.update({ bytes, docs, extra: 'clustering' }, true);
      const res = await session.finish();
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
        for (const file of positionals) {
          for await (const raw of readLines(await openInput(file), file)) {
            if (line < rep.length && rep[line] === line) { await f.write(raw); await f.write(nl); }
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
      const summary = {
        documents: docs, bad_lines: bad, kept: docs - res.duplicates, duplicates: res.duplicates, clusters: res.clusters,
        candidate_pairs: pairsKnown ? res.candidatePairs : null, reported_pairs: pairsKnown ? res.keptPairs : null, profile, num_perm: res.numPerm, b: res.b, r: res.r,
        verify, input_bytes: bytes, seconds: +seconds.toFixed(3), mb_per_s: +(bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
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
