// neardup pipeline CONFIG.json: a corpus through the stages of a cleaning pipeline (exact -> near -> substring
// -> decontaminate, or any of them in any order), each stage's kept documents the next one's input, resumable
// stage by stage (docs/pipeline.md).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { NeardupError } from '../../util/errors';
import { OutputFile, checkFiles } from '../../io/files';
import { summaryObject } from '../summary';
import { Progress } from '../progress';
import { UsageError, parse, type Command } from '../common';

/** The commands a stage may run, and where each writes its JSON summary. */
const STAGE_COMMANDS: Record<string, { summary: 'stdout' | 'stderr' }> = {
  exact: { summary: 'stderr' }, dedup: { summary: 'stdout' }, substrings: { summary: 'stderr' }, decontaminate: { summary: 'stderr' },
  paragraphs: { summary: 'stderr' },
};

interface StageConfig {
  /** The command: exact, dedup, substrings, decontaminate, paragraphs. */
  run: string;
  /** Its options, as on its command line (inputs and --kept are the pipeline's). */
  args?: string[];
  /** A name for its files in the work folder (default: its number and command). */
  name?: string;
}

interface PipelineConfig {
  /** Input files, or folders (their *.jsonl, *.jsonl.gz, *.jsonl.zst and *.parquet files, sorted by name). */
  inputs: string[];
  /** The corpus the last stage keeps (JSONL; .gz/.zst compressed by name). */
  output: string;
  /** The folder of the stages' outputs and records (default: CONFIG without .json, plus .work). */
  work?: string;
  /** Passed to every stage: the text field and the id field. */
  field?: string;
  id_field?: string;
  stages: StageConfig[];
}

const INPUT_NAME = /\.(jsonl|jsonl\.gz|jsonl\.zst|parquet)$/;

/** The config file, checked: every mistake names the key. */
export function readPipelineConfig(file: string): { config: PipelineConfig; base: string } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read the pipeline config '${file}': ${(e as Error).message}`, { file });
  }
  let c: PipelineConfig;
  try {
    c = JSON.parse(text) as PipelineConfig;
  } catch (e) {
    throw new UsageError(`the pipeline config '${file}' is not JSON: ${(e as Error).message}`);
  }
  const bad = (what: string) => new UsageError(`the pipeline config '${file}': ${what}`);
  if (c === null || typeof c !== 'object' || Array.isArray(c)) throw bad('it must be a JSON object');
  const known = new Set(['inputs', 'output', 'work', 'field', 'id_field', 'stages']);
  for (const k of Object.keys(c)) if (!known.has(k)) throw bad(`unknown key "${k}" (known: ${[...known].join(', ')})`);
  if (!Array.isArray(c.inputs) || c.inputs.length === 0 || !c.inputs.every((x) => typeof x === 'string')) throw bad('"inputs" must be a non-empty list of files or folders');
  if (typeof c.output !== 'string' || c.output === '') throw bad('"output" must be a file name');
  for (const k of ['work', 'field', 'id_field'] as const) if (c[k] !== undefined && typeof c[k] !== 'string') throw bad(`"${k}" must be a string`);
  if (!Array.isArray(c.stages) || c.stages.length === 0) throw bad('"stages" must be a non-empty list');
  const names = new Set<string>();
  c.stages.forEach((st, k) => {
    if (st === null || typeof st !== 'object') throw bad(`stages[${k}] must be an object {"run": ..., "args": [...]}`);
    for (const key of Object.keys(st)) if (!['run', 'args', 'name'].includes(key)) throw bad(`stages[${k}]: unknown key "${key}" (known: run, args, name)`);
    if (!(st.run in STAGE_COMMANDS)) throw bad(`stages[${k}].run must be one of ${Object.keys(STAGE_COMMANDS).join(', ')}, got ${JSON.stringify(st.run)}`);
    if (st.args !== undefined && (!Array.isArray(st.args) || !st.args.every((a) => typeof a === 'string'))) throw bad(`stages[${k}].args must be a list of strings`);
    for (const a of st.args ?? []) {
      if (['--kept', '--kept-dir', '--flags', '--clusters', '--removed', '--index-out', '--field', '--id-field'].includes(a))
        throw bad(`stages[${k}].args: ${a} is the pipeline's (the kept corpus goes to the next stage; give "field"/"id_field" at the top)`);
    }
    if (st.name !== undefined && (typeof st.name !== 'string' || !/^[\w.-]+$/.test(st.name))) throw bad(`stages[${k}].name must be letters, digits, '_', '.', '-'`);
    const name = st.name ?? `${k + 1}-${st.run}`;
    if (names.has(name)) throw bad(`two stages are named "${name}"`);
    names.add(name);
  });
  return { config: c, base: path.dirname(path.resolve(file)) };
}

/** The input files: files as given, folders as their input files sorted by name. */
function inputFiles(c: PipelineConfig, base: string): string[] {
  const out: string[] = [];
  for (const x of c.inputs) {
    const p = path.resolve(base, x);
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch (e) {
      throw new NeardupError('ERR_NEARDUP_IO', `the pipeline input '${p}' cannot be read: ${(e as Error).message}`, { file: p });
    }
    if (st.isDirectory()) {
      const files = fs.readdirSync(p).filter((f) => INPUT_NAME.test(f)).sort().map((f) => path.join(p, f));
      if (files.length === 0) throw new NeardupError('ERR_NEARDUP_IO', `the pipeline input folder '${p}' holds no *.jsonl[.gz|.zst] or *.parquet file`, { file: p });
      out.push(...files);
    } else {
      out.push(p);
    }
  }
  return out;
}

/** Who a file is, for the records that make a stage's rerun a no-op: its size and modification time. */
function identity(file: string): string {
  const st = fs.statSync(file, { bigint: true });
  return `${st.size}:${st.mtimeNs}`;
}

interface StageRecord {
  key: string;
  output: string;
  output_identity: string;
  summary: Record<string, unknown>;
}

/** Runs one command as a child process; its progress lines pass through to stderr; returns its summary. */
function runChild(args: string[], summaryOn: 'stdout' | 'stderr'): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(__dirname, '..', 'main.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '', lastJson = '';
    p.stdout!.on('data', (d: Buffer) => { out += d.toString('utf8'); });
    p.stderr!.on('data', (d: Buffer) => {
      err += d.toString('utf8');
      let nl: number;
      while ((nl = err.indexOf('\n')) >= 0) {
        const line = err.slice(0, nl);
        err = err.slice(nl + 1);
        if (line.startsWith('{') && !line.startsWith('{"progress"')) lastJson = line;
        else process.stderr.write(line + '\n');
      }
    });
    const stop = (sig: NodeJS.Signals) => p.kill(sig);
    process.on('SIGINT', stop).on('SIGTERM', stop);
    p.on('error', reject);
    p.on('close', (code, signal) => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      if (err !== '') process.stderr.write(err);
      if (code !== 0) {
        reject(new NeardupError('ERR_NEARDUP_IO', `neardup ${args[0]} ${signal ? `was killed by ${signal}` : `exited with status ${code}`} (its message is above)`));
        return;
      }
      const text = summaryOn === 'stdout' ? out.trim().split('\n').pop() ?? '' : lastJson;
      try {
        resolve(JSON.parse(text) as Record<string, unknown>);
      } catch {
        reject(new NeardupError('ERR_NEARDUP_IO', `neardup ${args[0]} printed no JSON summary`));
      }
    });
  });
}

export const pipelineCommand: Command = {
  name: 'pipeline',
  usage: `Usage: neardup pipeline CONFIG.json [--from NAME] [--dry-run]

Runs a corpus through the stages of a cleaning pipeline, one after the other: each stage's kept documents
are the next one's input, the last one's are "output". A stage already done (its record in the work folder
names the same command, options and input, and its output is there unchanged) is not run again, so an
interrupted pipeline is resumed by running the same command. docs/pipeline.md walks a corpus through it.

CONFIG.json:
  {
    "inputs": ["shards/"],                   files, or folders (their *.jsonl[.gz|.zst], *.parquet)
    "output": "clean.jsonl.zst",             the corpus the last stage keeps
    "work": "clean.work",                    the stages' outputs and records (default: CONFIG.work)
    "field": "text", "id_field": "id",       given to every stage
    "stages": [
      {"run": "exact", "args": ["--normalize", "fold-whitespace"]},
      {"run": "dedup"},
      {"run": "substrings"},
      {"run": "decontaminate", "args": ["--against", "benchmarks/test.jsonl"]}
    ]
  }
  A stage runs 'neardup RUN INPUTS... ARGS --kept OUT' (decontaminate: also --report WORK/NAME.report.jsonl),
  with paths in "args" as written (relative to the folder you run in); run: exact, dedup, substrings,
  decontaminate, paragraphs. "args" may hold a stage's own --work/--shards/--redis (docs/scale.md).

Options:
  --from NAME       run again from this stage (its name: "2-dedup", or the stage's "name"), the later ones too
  --dry-run         print the commands, run nothing
  -h, --help        this help

Prints a JSON summary on stderr: per stage its command, documents in and kept, seconds, and whether it was
done before (skipped); then documents (read by the first stage) and kept (written by the last).`,
  async run(args) {
    const { values, positionals } = parse(args, { from: { type: 'string' }, 'dry-run': { type: 'boolean' } });
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('give one CONFIG.json');
    const configFile = positionals[0];
    const { config: c, base } = readPipelineConfig(configFile);
    const inputs = inputFiles(c, base);
    const output = path.resolve(base, c.output);
    const work = path.resolve(base, c.work ?? `${configFile.replace(/\.json$/, '')}.work`);
    checkFiles({ inputs, outputs: [{ option: '"output"', file: output }], stdout: false });
    const names = c.stages.map((st, k) => st.name ?? `${k + 1}-${st.run}`);
    const from = values.from === undefined ? -1 : names.indexOf(String(values.from));
    if (values.from !== undefined && from < 0) throw new UsageError(`--from: no stage is named '${String(values.from)}' (stages: ${names.join(', ')})`);
    fs.mkdirSync(work, { recursive: true });
    const start = Date.now();
    const progress = new Progress('neardup pipeline');
    const report: Record<string, unknown>[] = [];
    let current = inputs, documents: unknown = null, kept: unknown = null;
    let rerun = false;  // once a stage runs, every later one runs too (its input changed)
    for (const [k, st] of c.stages.entries()) {
      const name = names[k];
      const last = k === c.stages.length - 1;
      const out = last ? output : path.join(work, `${name}.jsonl`);
      const stageArgs = [st.run, ...current, ...(st.args ?? []), ...(c.field !== undefined ? ['--field', c.field] : []),
        ...(c.id_field !== undefined ? ['--id-field', c.id_field] : []), '--kept', out,
        ...(st.run === 'decontaminate' ? ['--report', path.join(work, `${name}.report.jsonl`)] : [])];
      const recordFile = path.join(work, `${name}.done.json`);
      const key = crypto.createHash('sha256').update(JSON.stringify({ args: stageArgs, inputs: current.map(identity) })).digest('hex');
      let record: StageRecord | undefined;
      try {
        record = JSON.parse(fs.readFileSync(recordFile, 'utf8')) as StageRecord;
      } catch { /* not done yet */ }
      const done = !rerun && k < (from < 0 ? Infinity : from) && record !== undefined && record.key === key && record.output === out &&
        fs.existsSync(out) && identity(out) === record.output_identity;
      if (values['dry-run']) {
        process.stdout.write(`${done ? '# done: ' : ''}neardup ${stageArgs.map((a) => (/^[\w./=:-]+$/.test(a) ? a : JSON.stringify(a))).join(' ')}\n`);
      } else if (!done) {
        rerun = true;
        progress.update({ docs: 0, extra: `stage ${name}` }, true);
        const t0 = Date.now();
        const summary = await runChild(stageArgs, STAGE_COMMANDS[st.run].summary);
        record = { key, output: out, output_identity: identity(out), summary: { ...summary, pipeline_seconds: (Date.now() - t0) / 1000 } };
        const f = OutputFile.open(recordFile);
        try {
          await f.write(JSON.stringify(record, null, 2) + '\n');
          await f.commit();
        } finally {
          f.abort();
        }
      }
      if (!values['dry-run']) {
        const s = record!.summary;
        const docsIn = s.documents ?? null;
        // substrings keeps every document (it cuts their text): its documents; paragraphs: those not removed whole
        const keptOut = s.kept ?? (typeof s.documents === 'number' && typeof s.removed_documents === 'number' ? s.documents - s.removed_documents
          : st.run === 'substrings' ? docsIn : null);
        if (k === 0) documents = docsIn;
        kept = keptOut;
        report.push({
          stage: name, run: st.run, documents: docsIn, kept: keptOut, ...(s.bytes_removed !== undefined ? { bytes_removed: s.bytes_removed } : {}),
          seconds: s.pipeline_seconds ?? s.seconds ?? null, cpu_seconds: s.cpu_seconds ?? null, peak_rss_mb: s.peak_rss_mb ?? null, skipped: done, output: out,
        });
      }
      current = [out];
    }
    if (values['dry-run']) return 0;
    progress.done({ docs: typeof kept === 'number' ? kept : 0, fraction: 1 });
    process.stderr.write(JSON.stringify(summaryObject({ command: 'pipeline', inputs, documents: typeof documents === 'number' ? documents : 0 },
      { kept, output, work, seconds: +((Date.now() - start) / 1000).toFixed(3), stages: report })) + '\n');
    return 0;
  },
};
