// The progress mode of this process (--progress, NEARDUP_PROGRESS): read by the CLI's Progress (lib/cli/progress.ts)
// and by the queue worker's task lines (lib/scale/queue.ts).
import { UsageError } from './options';

export type ProgressMode = 'auto' | 'tty' | 'json' | 'none';
const MODES: readonly ProgressMode[] = ['auto', 'tty', 'json', 'none'];

let chosen: ProgressMode | undefined;

/** The mode of --progress (validated); undefined leaves the mode as it is, null goes back to NEARDUP_PROGRESS or auto. */
export function setProgressMode(value: unknown): void {
  if (value === undefined) return;
  if (value === null) {
    chosen = undefined;
    return;
  }
  chosen = parseMode(String(value), '--progress');
}

function parseMode(v: string, what: string): ProgressMode {
  if (!(MODES as readonly string[]).includes(v)) throw new UsageError(`${what} must be one of ${MODES.join(', ')}, got '${v}'`);
  return v as ProgressMode;
}

/** Checks NEARDUP_PROGRESS (and NEARDUP_PROGRESS_INTERVAL) before a command runs: a clear error for a bad value. */
export function checkProgressEnv(env: NodeJS.ProcessEnv = process.env): void {
  if (env.NEARDUP_PROGRESS) parseMode(env.NEARDUP_PROGRESS, 'NEARDUP_PROGRESS');
  const i = env.NEARDUP_PROGRESS_INTERVAL;
  if (i !== undefined && i !== '' && !(Number(i) > 0 && Number.isFinite(Number(i))))
    throw new UsageError(`NEARDUP_PROGRESS_INTERVAL must be a number of seconds above 0, got '${i}'`);
}

export function progressMode(env: NodeJS.ProcessEnv = process.env): ProgressMode {
  return chosen ?? (env.NEARDUP_PROGRESS ? parseMode(env.NEARDUP_PROGRESS, 'NEARDUP_PROGRESS') : 'auto');
}

