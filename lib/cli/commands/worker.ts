// neardup worker --redis URL: serves the dedup stage tasks submitted by `neardup dedup --work DIR --redis URL`.
import { UsageError, intOption, parse, type Command } from '../common';

export const workerCommand: Command = {
  name: 'worker',
  usage: `Usage: neardup worker --redis URL [--queue NAME] [--concurrency N] [--lock-duration MS]

Takes the stage tasks that 'neardup dedup --work DIR --redis URL' submits and runs them (see
'neardup dedup-stage'); runs until SIGINT or SIGTERM. Start any number, on any machine that sees DIR and the
inputs at the same paths. A task whose worker dies is taken again by another once its lock has expired
(BullMQ's stalled-job recovery); stage outputs are atomic, so a rerun is harmless.

Options:
  --redis URL               redis://[:password@]host[:port][/db]
  --queue NAME              the BullMQ queue (default neardup)
  --concurrency N           tasks at once (default 1: each task uses every core through the thread pool)
  --lock-duration MS        how long a task's lock lasts unrenewed (default 30000): a dead worker's task
                            is retried after about this long
  -h, --help                this help`,
  async run(args) {
    const { values } = parse(args, {
      redis: { type: 'string' }, queue: { type: 'string' }, concurrency: { type: 'string' }, 'lock-duration': { type: 'string' },
    }, false);
    if (values.help) {
      process.stdout.write(this.usage + '\n');
      return 0;
    }
    if (values.redis === undefined) throw new UsageError('worker needs --redis URL');
    const { serveWorker } = await import('../../scale/queue.js');
    await serveWorker(String(values.redis), {
      queue: values.queue === undefined ? 'neardup' : String(values.queue),
      concurrency: values.concurrency === undefined ? 1 : intOption('concurrency', values.concurrency, 1, 1, 256),
      lockDuration: values['lock-duration'] === undefined ? 30000 : intOption('lock-duration', values['lock-duration'], 30000, 200, 3_600_000),
    });
    return 0;
  },
};
