#!/usr/bin/env node
// The neardup command line: `neardup <command> [options]`. Results go to stdout (machine-readable);
// progress (only on a terminal) and errors go to stderr. Exit status: 0 success, 1 failure, 2 usage error.
import { NeardupError } from '../errors';
import { version } from '../version';
import { UsageError, checkThreadsEnv, usageErrorText, type Command } from './common';
import { commands } from './registry';

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

Results are written to stdout; progress (on a terminal) and errors to stderr.`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    if (name === 'help' && rest[0]) return main([rest[0], '--help']);
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '-v' || name === '--version') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const cmd: Command | undefined = commands.find((c) => c.name === name);
  if (!cmd) {
    process.stderr.write(`neardup: unknown command '${name}'\n\n${usage()}\n`);
    return 2;
  }
  try {
    checkThreadsEnv();
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
    throw e;
  }
}

if (require.main === module) {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (e) => {
      process.stderr.write(`neardup: internal error: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
