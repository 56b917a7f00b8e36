// For the suites that start servers and workers (queue.test.ts, queue-jobs.test.ts): a free loopback port, and
// waiting for a child process to print a line.
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on (as of now). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until `proc`'s stderr or stdout has printed a line matching re; rejects on a timeout or its exit. */
export function waitFor(proc: ChildProcess, re: RegExp, what: string, ms = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${what}: timed out; output: ${seen}`)), ms);
    const on = (d: Buffer) => {
      seen += d.toString();
      if (re.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout?.on('data', on);
    proc.stderr?.on('data', on);
    proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${what}: exited (${code}): ${seen}`)); });
  });
}
