// neardup doubri <sub>: drop-in replacements for doubri 1.0's commands. Sub-commands live in one table so
// that each engine can add its own (self/other/apply here; minhash/init in ./doubri-minhash.ts).
import * as fs from 'node:fs';
import { NeardupError } from '../../util/errors';
import { doubriOther, doubriSelf, parseFileList, readFlags } from '../../minhash/doubri-dedup';
import { openInput, readLines } from '../../io/jsonl';
import { Output, UsageError, didYouMean, parse, usageErrorText, type Command, type Subcommand } from '../common';
import { checkFiles } from '../../io/files';
import { doubriInitCommand, doubriMinhashCommand } from './doubri-minhash';

/** doubri's 40 index files of a prefix: PREFIX.00000 .. PREFIX.00039. */
const indexFiles = (prefix: string) => Array.from({ length: 40 }, (_, i) => `${prefix}.${String(i).padStart(5, '0')}`);

async function readStdinText(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function readListFile(file: string): string[] {
  try {
    return parseFileList(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read the list file '${file}': ${(e as Error).message}`, { file, cause: e });
  }
}

function help(cmd: Command, args: string[]): { values: Record<string, unknown>; positionals: string[] } | null {
  const r = parse(args, {});
  if (r.values.help) {
    process.stdout.write(cmd.usage + '\n');
    return null;
  }
  return r;
}

export const doubriSelfCommand: Subcommand = {
  name: 'self',
  summary: 'deduplicate hash files against each other and write the index (doubri-self)',
  usage: `Usage: neardup doubri self INDEX < LIST

LIST (stdin) names .hash files, one per line, processed in order. Each record flagged 1 in <file>.f whose
band equals a band of an earlier kept record is flagged 0 (in place). Writes INDEX.00000 .. INDEX.00039
(the sorted bands of kept records) and prints one stats line (JSON) per hash file.`,
  async run(args) {
    const r = help(this, args);
    if (!r) return 0;
    if (r.positionals.length !== 1) throw new UsageError('expected exactly one argument: INDEX');
    checkFiles({ inputs: ['-'], outputs: indexFiles(r.positionals[0]).map((f) => ({ option: 'INDEX', file: f })), stdout: true });
    const files = parseFileList(await readStdinText());
    // The hash and flag files (flags are updated in place, as doubri does) must not be an index file.
    checkFiles({
      inputs: [...files, ...files.map((f) => `${f}.f`)],
      outputs: indexFiles(r.positionals[0]).map((f) => ({ option: 'INDEX', file: f })), stdout: true,
    });
    const stats = await doubriSelf(files, r.positionals[0]);
    const out = new Output();
    for (const s of stats) await out.write(s.line + '\n');
    await out.flush();
    return 0;
  },
};

export const doubriOtherCommand: Subcommand = {
  name: 'other',
  summary: 'mark records of other groups found in an index (doubri-other)',
  usage: `Usage: neardup doubri other INDEX GROUP...

Each GROUP is a file listing .hash files, one per line. Every record flagged 1 whose band is found in the
index INDEX.00000 .. INDEX.00039 (written by 'doubri self') is flagged 0 in place. Records are neither added
to the index nor compared with each other: run 'doubri self' on the group afterwards. Prints one stats line
per hash file. All 40 index files must exist (doubri 1.0 reads a missing one as empty).`,
  async run(args) {
    const r = help(this, args);
    if (!r) return 0;
    if (r.positionals.length < 2) throw new UsageError('expected INDEX and at least one GROUP list file');
    const [index, ...groups] = r.positionals;
    checkFiles({ inputs: [...indexFiles(index), ...groups], outputs: [], stdout: true });
    const out = new Output();
    for (const g of groups) {
      const stats = await doubriOther(index, readListFile(g));
      for (const s of stats) await out.write(s.line + '\n');
    }
    await out.flush();
    return 0;
  },
};

export const doubriApplyCommand: Subcommand = {
  name: 'apply',
  summary: 'print the lines whose flag is 1 (doubri-apply)',
  usage: `Usage: neardup doubri apply FLAGS < JSONL

Prints the input lines (stdin, plain, gzip or zstd) whose flag in FLAGS is 1, unchanged. The number of
lines must equal the number of flags. A final line without a newline is processed (doubri 1.0 drops it)
and printed with one.`,
  async run(args) {
    const r = help(this, args);
    if (!r) return 0;
    if (r.positionals.length !== 1) throw new UsageError('expected exactly one argument: FLAGS');
    const flagsFile = r.positionals[0];
    checkFiles({ inputs: [flagsFile, '-'], outputs: [], stdout: true });
    const flags = readFlags(flagsFile);
    const stream = await openInput('-');
    let line = 0;
    const out = process.stdout;
    let pending: Buffer[] = [];
    let size = 0;
    const flush = async () => {
      if (pending.length === 0) return;
      const data = Buffer.concat(pending, size);
      pending = [];
      size = 0;
      if (!out.write(data)) await new Promise<void>((res) => out.once('drain', () => res()));
    };
    for await (const raw of readLines(stream, '<stdin>')) {
      if (line >= flags.length) {
        throw new NeardupError('ERR_NEARDUP_INVALID_INPUT',
          `<stdin> has more lines than '${flagsFile}' has flags (${flags.length})`, { file: '<stdin>', line: line + 1 });
      }
      if (flags[line] === 0x31) {
        pending.push(raw, NL);
        size += raw.length + 1;
        if (size >= 1 << 20) await flush();
      }
      line++;
    }
    await flush();
    if (line !== flags.length) {
      throw new NeardupError('ERR_NEARDUP_INVALID_INPUT',
        `<stdin> has ${line} lines but '${flagsFile}' has ${flags.length} flags`, { file: '<stdin>' });
    }
    return 0;
  },
};

const NL = Buffer.from('\n');

/** The sub-commands of `neardup doubri`, by name. */
export const subcommands: Record<string, Subcommand> = {
  minhash: doubriMinhashCommand,
  init: doubriInitCommand,
  self: doubriSelfCommand,
  other: doubriOtherCommand,
  apply: doubriApplyCommand,
};

function usage(): string {
  const names = Object.keys(subcommands);
  const width = Math.max(...names.map((n) => n.length));
  return `Usage: neardup doubri <command> [args]

Drop-in replacements for doubri 1.0's commands (same arguments, files and output).

Commands:
${names.map((n) => `  ${n.padEnd(width)}  ${subcommands[n].summary}`).join('\n')}`;
}

export const doubriCommand: Command = {
  name: 'doubri',
  get usage() {
    return usage();
  },
  async run(args) {
    const [name, ...rest] = args;
    if (name === undefined || name === '-h' || name === '--help') {
      // a missing sub-command is a usage error: the usage goes to stderr
      (name === undefined ? process.stderr : process.stdout).write(usage() + '\n');
      return name === undefined ? 2 : 0;
    }
    const sub = subcommands[name];
    if (!sub) throw new UsageError(`unknown doubri command '${name}'${didYouMean(name, Object.keys(subcommands))}`);
    try {
      return await sub.run(rest);
    } catch (e) {
      if (e instanceof UsageError) {
        process.stderr.write(usageErrorText(`neardup doubri ${name}`, e));
        return 2;
      }
      throw e;
    }
  },
};
