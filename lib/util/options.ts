// Checks of option values, for the command line's flags and for the plans that store them (a staged run's
// tasks read their options back from the plan): a bad value is a UsageError naming the flag as the user
// writes it. lib/cli/common.ts re-exports these for the commands; lib/io/documents.ts checks the input options.

/** A mistake in the command line (or in the option values a plan stores): printed with the command's usage, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** How the user writes the option: -n for one letter, -n/--ngram with its short form, --name otherwise. */
export const flag = (name: string) => (name.length === 1 ? `-${name}` : name === 'ngram' ? '-n/--ngram' : `--${name}`);

export function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[], def: T): T {
  if (v === undefined) return def;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw new UsageError(`${flag(name)} must be one of ${allowed.join(', ')}, got '${String(v)}'`);
  return v as T;
}

export function intOption(name: string, v: unknown, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  const s = String(v);
  if (!/^\d+$/.test(s)) throw new UsageError(`${flag(name)} must be an integer, got '${s}'`);
  const n = Number(s);
  if (n < min || n > max) throw new UsageError(`${flag(name)} must be from ${min} to ${max}, got ${n}`);
  return n;
}

export function floatOption(name: string, v: unknown, def: number, min: number, max: number): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isFinite(n) || String(v).trim() === '') throw new UsageError(`${flag(name)} must be a number, got '${String(v)}'`);
  if (n < min || n > max) throw new UsageError(`${flag(name)} must be from ${min} to ${max}, got ${n}`);
  return n;
}
