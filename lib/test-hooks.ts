// Test hooks read from the environment (HACKING.md, "Test hooks"). Each costs one comparison when unset.

/**
 * NEARDUP_TEST_KILL_AT=<point>: the process kills itself with SIGKILL (no cleanup, no exit handlers: what a
 * power cut or the OOM killer leaves) when it reaches the named point. The points are listed in HACKING.md.
 */
export function killAt(point: string): void {
  if (process.env.NEARDUP_TEST_KILL_AT === point) process.kill(process.pid, 'SIGKILL');
}
