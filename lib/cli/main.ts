#!/usr/bin/env node
// lib/cli/ - the command line and nothing a library caller needs (no file outside lib/cli imports it):
//   main.ts (this file), registry.ts (the commands), common.ts (argument parsing, shingle and input options,
//   Output), progress.ts, limits.ts (document size limits), commands/<name>.ts (one file per command).
//
// The neardup command line: `neardup <command> [options]`. Results go to stdout (machine-readable);
// progress (only on a terminal) and errors go to stderr. Exit status: 0 success, 1 failure, 2 usage error,
// 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (temporary files removed), 141 standard output closed early (EPIPE).
import { NeardupError } from '../util/errors';
import { version } from '../util/version';
import { UsageError, checkThreadsEnv, didYouMean, usageErrorText, type Command } from './common';
import { installCleanup, isSystemError, systemMessage } from '../io/files';
import { commands } from './registry';
import { checkProgressEnv } from './progress';

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: neardup <command> [options]

Finds duplicate and near-duplicate documents in large text collections.

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Options:
  -h, --help     show help (also: neardup <command> --help)
  -v, --version  print the version
  --threads N    (every command) threads of the native pool; default: NEARDUP_THREADS, else all cores
  --progress auto|tty|json|none
                 (every command) progress on stderr: a bar on a terminal, JSON lines (at most one every
                 10 s) in a pipe or a log (auto, the default; NEARDUP_PROGRESS), the bar, JSON, or nothing

Results are written to stdout; progress, errors and the JSON summary to stderr (dedup and its stage
commands print their summary on stdout, as they always have).`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    if (name === 'help' && rest[0]) return main([rest[0], '--help']);
    // a missing sub-command is a usage error: the usage goes to stderr
    (name === undefined ? process.stderr : process.stdout).write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '-v' || name === '--version') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`neardup: unknown command '${name}'${didYouMean(name, commands.map((c) => c.name))}\nRun 'neardup --help' for the commands.\n`);
    return 2;
  }
  try {
    checkThreadsEnv();
    checkProgressEnv();
    const cmd: Command = entry.load();
    return await cmd.run(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(usageErrorText(`neardup ${name}`, e));
      return 2;
    }
    if (e instanceof NeardupError || e instanceof TypeError || e instanceof RangeError) {
      process.stderr.write(`neardup ${name}: ${e.message}\n`);
      return 1;
    }
    // A failed write to standard output (a file on a full disk: Node writes files synchronously and throws).
    if (isSystemError(e)) {
      if (e.code === 'EPIPE') return 141;
      const where = e.path ? `'${e.path}'` : e.syscall === 'write' ? 'standard output' : e.syscall;
      process.stderr.write(`neardup ${name}: cannot ${e.syscall === 'write' ? 'write' : 'use'} ${where}: ${systemMessage(e)}\n`);
      return 1;
    }
    throw e;
  }
}

if (require.main === module) {
  installCleanup();
  // The reader of standard output went away: quiet, but not a success (128 + SIGPIPE, as a shell reports it).
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(141);
    process.stderr.write(`neardup: cannot write standard output: ${systemMessage(e)}\n`);
    process.exit(1);
  });
  // A failure lets the work already under way finish (a native writer removing its temporary file, the output
  // draining), then exits within 2 s: no open handle (a Redis client still reconnecting, a worker pool, a
  // timer) may keep a failed batch job alive. The timer is unref'd: it never holds the process itself.
  const finish = (code: number) => {
    process.exitCode = code;
    if (code !== 0) setTimeout(() => process.exit(code), 2000).unref();
  };
  main(process.argv.slice(2)).then(finish, (e) => {
    process.stderr.write(`neardup: internal error: ${(e as Error).stack ?? String(e)}\n`);
    finish(1);
  });
}
