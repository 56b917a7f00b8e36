// neardup exact: exact and key dedup (the first stage of a corpus pipeline): keeps the first line of each
// group of lines whose text (as is or normalised), or whose key field (--key, URLs normalised on request), is
// the same.
import { summaryObject } from '../summary';
import * as os from 'node:os';
import { NeardupError, formatBytes } from '../../util/errors';
import { ExactDedup, URL_DEFAULT_RULES, URL_RULES, readExactIndexMeta, urlKeys, type ExactDedupOptions, type UrlRule } from '../../exact/exact';
import { droppedDocuments, MIN_LIMIT_BUDGET } from '../../minhash/dedup';
import { readDocuments, sniffFile } from '../../io/input';
import { checkKeptDirInputs, checkOutputName, keptDirName, planParquetOutputs } from '../../io/kept';
import { Progress } from '../progress';
import { DocumentLog, writeClusterOutputs } from '../document-outputs';
import { documentMemory } from '../limits';
import { checkFiles, watchSpillFolders, writeNative } from '../../io/files';
import { lockIndexFile } from '../../io/locks';
import { version } from '../../util/version';
import { parseSize } from './dedup';
import * as path from 'node:path';
import { STAGED_OPTIONS, runStagedPlan } from '../../scale/staged';
import { readClusters, type StagePlan } from '../../scale/stages';
import { INPUT_OPTIONS, intOption, INPUT_USAGE, UsageError, fieldOption, idFieldOption, inputOptionsFrom, oneOf, parse, type Command } from '../common';

export const EXACT_OPTIONS = {
  ...INPUT_OPTIONS, ...STAGED_OPTIONS,
  kept: { type: 'string' }, 'kept-dir': { type: 'string' }, removed: { type: 'string' }, flags: { type: 'string' },
  clusters: { type: 'string' }, 'removed-ids': { type: 'string' }, 'id-field': { type: 'string' }, annotate: { type: 'boolean' },
  'drop-all': { type: 'boolean' }, memory: { type: 'string' }, tmp: { type: 'string' },
  key: { type: 'string' }, 'url-normalize': { type: 'string' },
  unicode: { type: 'string' }, lowercase: { type: 'boolean' }, 'strip-punctuation': { type: 'boolean' }, 'fold-whitespace': { type: 'boolean' },
  unit: { type: 'string' }, split: { type: 'string' }, normalize: { type: 'string' },
  index: { type: 'string' }, 'index-out': { type: 'string' },
} as const;

/** The options that choose what is compared (an index keeps them: docs/exact.md "Against earlier runs"). */
const SETTING_OPTIONS = ['key', 'url-normalize', 'unicode', 'lowercase', 'strip-punctuation', 'fold-whitespace', 'unit', 'split', 'normalize'] as const;

/** What is compared, as an index's meta keeps it. */
interface ExactSettings {
  by: 'text' | 'key'; unicode: string; unit: string; split: string; lowercase: boolean; strip_punctuation: boolean;
  fold_whitespace: boolean; url_normalize: string[] | null;
}

function settingsOf(o: ReturnType<typeof exactOptionsFrom>, byKey: boolean): ExactSettings {
  return {
    by: byKey ? 'key' : 'text', unicode: o.unicode ?? 'none', unit: o.unit ?? 'char', split: o.unit === 'word' ? o.split ?? 'whitespace' : 'whitespace',
    lowercase: Boolean(o.lowercase), strip_punctuation: Boolean(o.stripPunctuation), fold_whitespace: Boolean(o.foldWhitespace),
    url_normalize: o.urlRules ? URL_RULES.filter((r) => o.urlRules!.has(r)) : null,
  };
}

function optionsOfSettings(st: ExactSettings): ReturnType<typeof exactOptionsFrom> {
  return {
    unicode: st.unicode as 'none', unit: st.unit as 'char', split: st.split as 'whitespace', lowercase: st.lowercase,
    stripPunctuation: st.strip_punctuation, foldWhitespace: st.fold_whitespace,
    ...(st.url_normalize ? { urlRules: new Set(st.url_normalize as UrlRule[]) } : {}),
  };
}

/** The normalisations `--normalize` names (a comma list), as the single options would set them. */
const NORMALIZE_NAMES = ['nfc', 'nfkc', 'lowercase', 'strip-punctuation', 'fold-whitespace', 'words'] as const;

/** The hashing options of an exact command line. */
export function exactOptionsFrom(values: Record<string, unknown>): ExactDedupOptions & { urlRules?: ReadonlySet<UrlRule> } {
  const named = new Set<string>();
  if (values.normalize !== undefined) {
    for (const n of String(values.normalize).split(',').map((x) => x.trim()).filter((x) => x !== '')) {
      if (!(NORMALIZE_NAMES as readonly string[]).includes(n)) throw new UsageError(`--normalize: unknown normalisation '${n}' (known: ${NORMALIZE_NAMES.join(', ')})`);
      named.add(n);
    }
  }
  if (named.has('nfc') && named.has('nfkc')) throw new UsageError('--normalize: give nfc or nfkc, not both');
  const unicode = oneOf('unicode', values.unicode, ['none', 'nfc', 'nfkc'] as const, named.has('nfkc') ? 'nfkc' : named.has('nfc') ? 'nfc' : 'none');
  const unit = oneOf('unit', values.unit, ['char', 'word'] as const, named.has('words') ? 'word' : 'char');
  const split = oneOf('split', values.split, ['whitespace', 'nonword'] as const, 'whitespace');
  if (values.split !== undefined && unit !== 'word') throw new UsageError('--split splits words: it needs --unit word (or --normalize words)');
  const o: ExactDedupOptions & { urlRules?: ReadonlySet<UrlRule> } = {
    unicode, unit, split,
    lowercase: Boolean(values.lowercase) || named.has('lowercase'),
    stripPunctuation: Boolean(values['strip-punctuation']) || named.has('strip-punctuation'),
    foldWhitespace: Boolean(values['fold-whitespace']) || named.has('fold-whitespace'),
  };
  if (values['url-normalize'] !== undefined) {
    if (values.key === undefined) throw new UsageError('--url-normalize normalises the --key field: give --key NAME');
    const v = String(values['url-normalize']);
    const rules = v === 'all' || v === '' ? URL_DEFAULT_RULES : v.split(',').map((x) => x.trim());
    for (const r of rules) if (!(URL_RULES as readonly string[]).includes(r)) throw new UsageError(`--url-normalize: unknown rule '${r}' (known: all, ${URL_RULES.join(', ')})`);
    o.urlRules = new Set(rules as UrlRule[]);
  }
  return o;
}

/** `neardup exact --work`: the plan (dedup's stage plan with `exact`), then its stages here or on BullMQ workers. */
async function runStagedExact(values: Record<string, unknown>, positionals: string[], hashing: ReturnType<typeof exactOptionsFrom>,
  input: { field: string; onBadLine: 'error' | 'skip' | 'empty'; idField?: string }, memory: number, tmp: string, key: string | undefined): Promise<number> {
  if (values['band-shards'] !== undefined) throw new UsageError('--band-shards: exact has no buckets stage');
  const shards = values.shards === undefined ? 1 : intOption('shards', values.shards, 1, 1, 1 << 20);
  const { lp, reports, seconds } = await runStagedPlan(values, positionals, (files) => {
    if (files.length === 0) throw new UsageError('--work: give the input files (or - for standard input)');
    const abs = (v: unknown) => (v === undefined ? undefined : path.resolve(String(v)));
    const outputs: StagePlan['outputs'] = {
      flags: abs(values.flags), clusters: abs(values.clusters), kept: abs(values.kept), keptDir: abs(values['kept-dir']),
      removedIds: abs(values['removed-ids']), removed: abs(values.removed),
    };
    for (const k of Object.keys(outputs) as (keyof typeof outputs)[]) if (outputs[k] === undefined) delete outputs[k];
    const { urlRules, ...options } = hashing;
    return {
      version: 1, neardup: version, files: files.map((f) => path.resolve(f)), shards, bandShards: 1,
      options: { memory, tmp: path.resolve(tmp) }, input, outputs,
      ...(values['drop-all'] ? { dropAll: true } : {}), ...(values.annotate ? { annotate: true } : {}),
      exact: { options, ...(urlRules ? { urlRules: URL_RULES.filter((r) => urlRules.has(r)) } : {}) },
    };
  });
  const { summary: c } = readClusters(lp);
  const summary = {
    bad_lines: c.bad_lines, kept: c.documents - (c.dropped ?? c.duplicates), duplicates: c.duplicates, distinct: c.documents - c.duplicates,
    drop_all: lp.plan.dropAll === true, dropped: c.dropped ?? c.duplicates, ...settingsSummary(hashing, key, input.field),
    input_bytes: c.input_bytes, seconds: +seconds.toFixed(3), mb_per_s: +(c.input_bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
    spilled_bytes: c.spilled_bytes, runs: c.runs, memory_bytes: memory > 0 ? memory : null, shards,
    stages: reports.map((r) => ({ stage: r.stage, shard: r.shard, read_bytes: r.readBytes, written_bytes: r.writtenBytes, seconds: +r.seconds.toFixed(3), cpu_seconds: +(r.cpuSeconds ?? 0).toFixed(3) })),
  };
  process.stderr.write(JSON.stringify(summaryObject({ command: 'exact', inputs: positionals, documents: c.documents }, summary)) + '\n');
  return 0;
}

/** The summary's settings: key, field, normalize, url_normalize. */
function settingsSummary(hashing: ReturnType<typeof exactOptionsFrom>, key: string | undefined, field: string) {
  const normalize = [
    ...(hashing.unicode !== 'none' ? [hashing.unicode] : []), ...(hashing.lowercase ? ['lowercase'] : []),
    ...(hashing.stripPunctuation ? ['strip-punctuation'] : []), ...(hashing.foldWhitespace ? ['fold-whitespace'] : []),
    ...(hashing.unit === 'word' ? [hashing.split === 'nonword' ? 'words (nonword split)' : 'words'] : []),
  ];
  const urlRules = hashing.urlRules;
  return { key: key ?? null, field: key === undefined ? field : null, normalize, url_normalize: urlRules ? URL_RULES.filter((r) => urlRules.has(r)) : null };
}

export const exactCommand: Command = {
  name: 'exact',
  usage: `Usage: neardup exact [options] [FILE...]

Exact and key dedup: keeps the first line of each group of lines with the same text (a 128-bit hash of
it, as is or normalised), or with the same value of a key field (--key url). FILEs are JSONL (plain,
gzip or zstd) or Parquet, told by their first bytes, read in order as one corpus ('-' or no FILE: stdin,
JSONL only). Run it before 'neardup dedup' (near duplicates): it is cheaper, and takes out the copies
that would fill dedup's buckets.

Most used:
  --kept FILE           the kept lines (.gz/.zst compressed by name; .parquet for Parquet inputs)
  --removed FILE        the dropped lines
  --flags FILE          1 keep / 0 dropped, a line per input line
  --id-field NAME       name the documents by this field (--removed-ids FILE: the dropped ids)
  --field NAME          the text field (default text)
  --key NAME            dedup by this field's value instead of the text (e.g. url)
  --normalize LIST      compare texts after: nfc|nfkc, lowercase, strip-punctuation, fold-whitespace,
                        words (e.g. --normalize nfkc,lowercase,words)
Example: neardup exact crawl-*.jsonl.zst --kept kept.jsonl.zst --normalize fold-whitespace

Defaults: the text exactly as it is (byte for byte), the first copy kept. Two different texts get one hash
with probability about 2^-128 per pair: 10^12 documents share one by chance with probability about 10^-15.

Prints a JSON summary on stderr: documents, bad_lines, kept, duplicates, distinct, drop_all, dropped, key,
normalize, url_normalize, input_bytes, mb_per_s, spilled_bytes, runs, table_mb, memory_bytes, then
command, inputs, seconds, cpu_seconds, peak_rss_mb (docs/cli.md). Progress on stderr (--progress: a bar
on a terminal, else a JSON line every 10 s). Threads: --threads N or NEARDUP_THREADS (default: all cores).

Outputs (as 'neardup dedup' writes them; '-' is standard output; an output that is one of the inputs is
refused; each file appears complete or not at all):
  --kept FILE               the kept lines, unchanged (needs file inputs, read twice); .gz/.zst by name;
                            Parquet inputs: JSON objects, or Parquet when FILE ends in .parquet
  --kept-dir DIR            one kept file per input: DIR/<its base name>, compressed as the input was
  --removed FILE            the dropped lines, unchanged (as --kept)
  --flags FILE              one line per input line: 1 keep, 0 dropped
  --clusters FILE           one line per input line: the 0-based line number of the first line with its
                            text (its own number when kept); with --id-field: JSONL
                            {"id": ID, "kept": k, "kept_id": ID of line k}
  --removed-ids FILE        with --id-field: the id of each dropped line, one JSON value per line
  --annotate                add "neardup_cluster", "neardup_cluster_size" (and with --id-field
                            "neardup_kept_id") to the lines --kept, --kept-dir and --removed write
  --drop-all                drop every line that has a copy, the first too (only unique lines stay)
  --id-field NAME           the id of each line (a string or an integer; dot path as --field)
Against earlier runs (cross-dump dedup):
  --index FILE              an index written by --index-out: lines whose text an indexed run kept are
                            dropped for it; its settings (what is compared) are this run's: leave those
                            options out to take them (a --key index needs --key NAME), or give the same;
                            line numbers continue the index's (line i is D + i, D = the lines the indexed
                            runs read: the summary's index.documents_before); --clusters gives a line found
                            in the index that document's number, or with ids ("kept_id") its id
  --index-out FILE          after the other outputs: an index of the lines kept so far (the index's and this
                            run's; 24 bytes a line, with --id-field their ids too); it may be the --index
                            file itself, replaced once the run succeeded; locked while the run lasts
What is compared:
  --unicode none|nfc|nfkc   Unicode normalisation first (default none; JavaScript's normalize(), on the
                            main thread: slower than the rest)
  --lowercase               lower-case (the shingle stream's full case mapping, as dedup's --lowercase)
  --strip-punctuation       drop punctuation (\\p{P})
  --fold-whitespace         runs of whitespace become one space, trimmed at both ends
  --unit char|word          word: the words re-joined by single spaces (also folds whitespace)
  --split whitespace|nonword  with --unit word: how words are split (as dedup's --split)
  --normalize LIST          the same as a comma list (nfc, nfkc, lowercase, strip-punctuation,
                            fold-whitespace, words)
  --key NAME                the value of this string field (dot path as --field) instead of the text
  --url-normalize RULES     with --key: compare the values as URLs after the rules (a comma list, or
                            'all' = scheme,www,slash,fragment,tracking,sort-query): scheme (http =
                            https), www (drop a leading www.), slash (drop a trailing /), fragment (drop
                            #...), tracking (drop utm_*, fbclid, gclid, ... parameters), sort-query (sort
                            the parameters), query (drop the whole query); an absolute URL is always
                            parsed (scheme and host lower-cased, a default port dropped); a value that
                            is not one is compared as it is
Memory:
  --memory SIZE             bound the table (20 bytes per distinct line, with its slack up to 2x): beyond
                            SIZE it spills to sorted runs in --tmp, merged at the end (same result);
                            the representatives take 4 bytes per line besides
  --tmp DIR                 folder for the runs (default: the system temp folder), in a folder
                            DIR/neardup-spill-PID-XXXXXX removed at the end, on error and on Ctrl-C
  -h, --help                this help
Sharded (Slurm, Kubernetes, BullMQ; docs/scale.md: the stages are dedup's, run by 'neardup dedup-stage'
or 'neardup worker'; buckets and verify have no tasks):
  --work DIR --shards N     run as sharded stages in DIR: the same outputs as one run; --redis URL,
                            --queue NAME and --redis-wait SECONDS as for dedup (not with --index)
${INPUT_USAGE}`,
  async run(args) {
    const { values, positionals } = parse(args, EXACT_OPTIONS);
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length === 0) positionals.push('-');
    const idField = values['id-field'] === undefined ? undefined : idFieldOption(values['id-field']);
    const keptDir = values['kept-dir'] === undefined ? undefined : String(values['kept-dir']);
    const dropAll = Boolean(values['drop-all']);
    if ((values.kept !== undefined || keptDir !== undefined || values.removed !== undefined) && positionals.includes('-'))
      throw new UsageError('--kept, --kept-dir and --removed need file inputs (they are read twice), not stdin');
    if (values.annotate && values.kept === undefined && keptDir === undefined && values.removed === undefined)
      throw new UsageError('--annotate adds members to the documents --kept, --kept-dir and --removed write: give one of them');
    if (values.kept !== undefined && keptDir !== undefined) throw new UsageError('give --kept or --kept-dir, not both');
    if (values['removed-ids'] !== undefined && idField === undefined) throw new UsageError('--removed-ids needs --id-field');
    const indexIn = values.index === undefined ? undefined : String(values.index);
    const indexOut = values['index-out'] === undefined ? undefined : String(values['index-out']);
    if (dropAll && (indexIn !== undefined || indexOut !== undefined))
      throw new UsageError('--drop-all is not possible with --index or --index-out: the documents earlier runs kept are already out, and cannot be dropped with their copies found now');
    if (values.key !== undefined && values.field !== undefined) throw new UsageError('give --key (dedup by a key field) or --field (the text field), not both');
    let hashing = exactOptionsFrom(values);
    const key = values.key === undefined ? undefined : fieldOption('--key', values.key);
    const input = { ...inputOptionsFrom(values), ...(key !== undefined ? { field: key } : {}) };
    const memory = parseSize('memory', values.memory);
    const tmp = values.tmp === undefined ? os.tmpdir() : String(values.tmp);
    if (keptDir !== undefined) checkKeptDirInputs(positionals);
    const keptDirOutputs = keptDir === undefined ? [] : positionals.map((f) => keptDirName(keptDir, f, sniffFile(f).format));
    const outputs = (['kept', 'removed', 'flags', 'clusters', 'removed-ids', 'index-out'] as const)
      .filter((o) => values[o] !== undefined).map((o) => ({ option: `--${o}`, file: String(values[o]) }));
    outputs.push(...keptDirOutputs.map((file) => ({ option: '--kept-dir', file })));
    const inputs = indexIn === undefined ? positionals : [...positionals, indexIn];
    // --index X --index-out X updates X (read, then replaced once everything else is written); no other output may
    checkFiles({ inputs, outputs: outputs.filter((o) => o.option !== '--index-out'), stdout: false });
    checkFiles({ inputs, outputs, stdout: false, replaceable: indexIn === undefined ? [] : [indexIn] });
    for (const o of outputs) if (o.option !== '--kept-dir' && o.option !== '--index-out') checkOutputName(o.option, o.file, o.option === '--kept' || o.option === '--removed');
    // against an index: its settings are this run's (options that differ are an error), its keys name its documents
    let priorKeys: 'id' | 'number' | undefined;
    if (indexIn !== undefined) {
      let meta: { settings?: ExactSettings; keys?: 'id' | 'number' };
      try {
        meta = JSON.parse(readExactIndexMeta(indexIn)) as typeof meta;
      } catch (e) {
        if (e instanceof NeardupError) throw e;
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${indexIn}' is not a valid exact index: its meta is not JSON`, { file: indexIn });
      }
      if (!meta.settings || (meta.keys !== 'id' && meta.keys !== 'number'))
        throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${indexIn}' is not a valid exact index: its meta has no settings or keys`, { file: indexIn });
      const given = SETTING_OPTIONS.filter((o) => values[o] !== undefined);
      const mine = settingsOf(hashing, key !== undefined);
      if (given.length > 0) {
        const diff = (Object.keys(mine) as (keyof ExactSettings)[]).filter((k) => JSON.stringify(mine[k]) !== JSON.stringify(meta.settings![k]));
        if (diff.length > 0)
          throw new UsageError(`--index '${indexIn}' was written with other settings (${diff.map((k) => `${k}: ${JSON.stringify(meta.settings![k])}, here ${JSON.stringify(mine[k])}`).join('; ')}): leave the options out to take the index's, or give the same`);
      } else {
        if (meta.settings.by === 'key') throw new UsageError(`--index '${indexIn}' holds keys (it was written with --key): give --key NAME, the field of this corpus that holds them`);
        hashing = optionsOfSettings(meta.settings);
      }
      priorKeys = meta.keys;
      if (priorKeys === 'id' && idField === undefined) throw new UsageError(`--index '${indexIn}': its documents are named by id (it was written with --id-field): give --id-field`);
      if (priorKeys === 'number' && idField !== undefined)
        process.stderr.write(`neardup exact: --index '${indexIn}' keeps line numbers (it was written without --id-field): ids of its documents ("kept_id") are null\n`);
    }
    // with --id-field, an index written keeps the ids as its keys; an index read keeps its own kind
    const idKeys = priorKeys !== undefined ? priorKeys === 'id' : indexOut !== undefined && idField !== undefined;
    const parquetPlan = await planParquetOutputs({ kept: values.kept as string | undefined, removed: values.removed as string | undefined, keptDir }, positionals);
    if (outputs.length === 0 || (outputs.length === 1 && indexOut !== undefined)) process.stderr.write('neardup exact: no output requested (--kept, --kept-dir, --removed, --flags, --clusters); printing the summary only\n');

    if (values.work !== undefined || values.redis !== undefined) {  // docs/scale.md
      if (indexIn !== undefined || indexOut !== undefined) throw new UsageError('--index and --index-out are not supported with --work/--redis: run exact with --index without --work');
      if (values.work === undefined) throw new UsageError('--redis needs --work DIR (a folder every worker can read and write)');
      return runStagedExact(values, positionals, hashing, { ...input, ...(idField !== undefined ? { idField } : {}) }, memory, tmp, key);
    }
    const indexLock = indexOut === undefined ? null : lockIndexFile(indexOut, '--index-out: the index');
    const start = Date.now();
    const unwatch = memory > 0 ? watchSpillFolders(tmp) : () => undefined;
    const { urlRules, ...dedupOptions } = hashing;
    // with --url-normalize the keys are rewritten here, and Unicode normalisation with them
    let exact: ExactDedup;
    try {
      exact = new ExactDedup({ ...dedupOptions, ...(urlRules ? { unicode: 'none' } : {}), memory, tmp, indexOut: indexOut !== undefined });
    } catch (e) {
      unwatch();
      indexLock?.release();
      throw e;
    }
    let prior: { entries: number; documents: number } | undefined;
    const progress = new Progress('neardup exact');
    const log = new DocumentLog(positionals);
    const open: { abort(): void }[] = [];
    let bytes = 0;
    try {
      if (indexIn !== undefined) prior = await exact.loadIndex(indexIn);
      const offset = prior?.documents ?? 0;  // line numbers continue the index's
      const pending: Promise<unknown>[] = [];
      for await (const batch of readDocuments(positionals, {
        ...input, idField, ...(memory > 0 ? { memoryLimit: Math.min(Math.max(memory, MIN_LIMIT_BUDGET), documentMemory()) } : {}),
        onProgress: (n, fraction) => { bytes = n; progress.update({ bytes: n, docs: log.documents, fraction }); },
      })) {
        const texts = urlRules ? urlKeys(batch.packed, batch.count, hashing.unicode, urlRules) : batch.packed;
        const p = exact.add(texts, batch.valid);
        p.catch(() => undefined);  // awaited below
        pending.push(p);
        log.record(batch);
        if (pending.length >= 2) await pending.shift();
      }
      await Promise.all(pending);
      log.end();
      progress.update({ bytes, docs: log.documents, extra: 'writing' }, true);
      const res = await exact.finish();
      const rep = res.representative;
      const dropped = droppedDocuments(rep, dropAll);
      let droppedCount = 0;
      for (let i = 0; i < dropped.length; i++) droppedCount += dropped[i];
      // lines found in the index: the indexed document's key, its number or its id (JSON text)
      const indexRep = new Map<number, string>();
      const im = res.indexMatches;
      im.docs.forEach((d, k) => indexRep.set(d, idKeys ? im.ids![k] : String(im.indexDocs[k])));
      const repNumber = (d: number) => (rep[d] === ExactDedup.INDEX_MATCH ? (idKeys ? 'null' : indexRep.get(d)!) : String(offset + rep[d]));
      const keptId = (d: number) => (rep[d] === ExactDedup.INDEX_MATCH ? (idKeys ? indexRep.get(d)! : 'null') : log.idOf(rep[d]));
      await writeClusterOutputs(log, rep, dropped, {
        flags: values.flags as string | undefined, clusters: values.clusters as string | undefined, removedIds: values['removed-ids'] as string | undefined,
        kept: values.kept as string | undefined, keptDir, removed: values.removed as string | undefined, annotate: Boolean(values.annotate), idField, parquetPlan,
      }, open, { repNumber, keptId, indexKey: (d) => indexRep.get(d)! });
      // the index last: a run whose outputs failed leaves the earlier index as it was
      let entriesAfter: number | null = null;
      if (indexOut !== undefined) {
        progress.update({ bytes, docs: log.documents, extra: 'writing the index' }, true);
        const isBad = new Uint8Array(rep.length);
        for (const d of log.badLines) isBad[d] = 1;
        let fresh = 0;
        for (let d = 0; d < rep.length; d++) if (rep[d] === d && !isBad[d]) fresh++;
        const meta = JSON.stringify({ format: 'neardup exact index', neardup: version, settings: settingsOf(hashing, key !== undefined), keys: idKeys ? 'id' : 'number' });
        await writeNative(indexOut, (p) => exact.saveIndex(p, {
          meta, firstDoc: offset, ...(idKeys ? { ids: Array.from({ length: log.documents }, (_, d) => (isBad[d] ? 'null' : log.idOf(d))) } : {}),
        }));
        entriesAfter = (prior?.entries ?? 0) + fresh;
      }
      progress.done({ bytes, docs: log.documents, fraction: 1 });
      const seconds = (Date.now() - start) / 1000;
      const summary = {
        bad_lines: log.bad, kept: log.documents - droppedCount, duplicates: res.duplicates, distinct: res.distinct, drop_all: dropAll, dropped: droppedCount,
        ...settingsSummary(hashing, key, input.field),
        input_bytes: bytes, seconds: +seconds.toFixed(3), mb_per_s: +(bytes / 1e6 / Math.max(seconds, 1e-9)).toFixed(2),
        spilled_bytes: res.spilledBytes, runs: res.runs, table_mb: +(res.tableBytes / 2 ** 20).toFixed(1), memory_bytes: memory > 0 ? memory : null,
        ...(indexIn !== undefined || indexOut !== undefined ? {
          index: {
            read: indexIn ?? null, written: indexOut ?? null, keys: idKeys ? 'id' : 'number', documents_before: offset,
            entries_before: prior?.entries ?? 0, matched: res.indexMatched, entries_after: entriesAfter,
          },
        } : {}),
      };
      if (memory > 0 && memory < MIN_LIMIT_BUDGET) process.stderr.write(`neardup exact: --memory ${formatBytes(memory)}: the table spills at it; an input unit is still allowed ${formatBytes(MIN_LIMIT_BUDGET)}\n`);
      process.stderr.write(JSON.stringify(summaryObject({ command: 'exact', inputs: positionals, documents: log.documents }, summary)) + '\n');
      return 0;
    } finally {
      for (const f of open) f.abort();
      exact.close();
      unwatch();
      indexLock?.release();
    }
  },
};
