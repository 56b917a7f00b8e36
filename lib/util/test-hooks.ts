// Test hooks read from the environment (HACKING.md, "Test hooks"). Each costs one comparison
// when unset.

/** The signal NEARDUP_TEST_KILL_AT asks for at `point` (NAME or NAME:SIGNAL), or undefined. */
function killSignal(point: string): NodeJS.Signals | undefined {
  const at = process.env.NEARDUP_TEST_KILL_AT;
  if (at === undefined || at.split(':')[0] !== point) return undefined;
  return (at.split(':')[1] ?? 'SIGKILL') as NodeJS.Signals;
}

/**
 * NEARDUP_TEST_KILL_AT=<point>[:SIGNAL]: the process sends itself SIGKILL (no cleanup, no exit handlers: what a
 * power cut or the OOM killer leaves), or SIGNAL, when it reaches the named point. The points are listed in
 * HACKING.md.
 */
export function killAt(point: string): void {
  const signal = killSignal(point);
  if (signal !== undefined) process.kill(process.pid, signal);
}

/**
 * killAt for asynchronous code: when the point is named, also goes no further (a caught signal such as SIGTERM
 * runs its handler on a later turn of the event loop; the returned promise never settles, a timer keeps the
 * loop alive until the handler ends the process).
 */
export function killPoint(point: string): Promise<void> {
  const signal = killSignal(point);
  if (signal === undefined) return Promise.resolve();
  process.kill(process.pid, signal);
  return new Promise(() => { setInterval(() => undefined, 1000); });
}

/** NEARDUP_TEST_PAIR_BUFFER=N: dedup holds at most N candidate pairs before spilling them (0: unset). */
export function testPairBuffer(): number {
  const v = process.env.NEARDUP_TEST_PAIR_BUFFER;
  return v === undefined ? 0 : Number(v);
}
