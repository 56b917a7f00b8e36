// Child-process scenario for test/crash.test.ts (issue 25): for each async call of the public API
// (test/helpers/api-cases.ts), a Worker loops the call and is terminated 20-150 ms into the loop, ROUNDS
// times. This thread never loads the addon: only the Workers do, so each termination frees the last
// environment that loaded it, which is when Node unloads an addon (the case the older scenarios, which load
// the addon here too, could not reach). Prints "survived N" when every Worker ended and this process lived,
// after "addon still mapped: yes|no" (Linux).
// argv: [rounds] [case-name regex] [repro terminations, 12].
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

if (isMainThread) {
  const rounds = Number(process.argv[2] ?? 2);
  const only = new RegExp(process.argv[3] ?? '');
  const repro = Number(process.argv[4] ?? 12);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-terminate-'));
  let x = 12345;
  const delay = () => 20 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 131);
  (async () => {
    // api-cases.ts only imports the API's types: reading the table does not load the addon here.
    const { CASES } = require('./api-cases') as typeof import('./api-cases');
    const names = CASES.map((c) => c.name).filter((name) => only.test(name));
    let n = 0;
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        const t0 = Date.now();
        const w = spawn({ name, dir });
        await new Promise<void>((resolve, reject) => {
          w.once('error', reject);
          w.on('message', (m) => {
            if (m === 'started') resolve();
            else reject(new Error(`${name}: ${m}`));
          });
        });
        await new Promise((r) => setTimeout(r, delay()));
        const t1 = Date.now();
        await w.terminate();
        if (process.env.NEARDUP_TEST_VERBOSE) process.stderr.write(`${name}: started in ${t1 - t0} ms, terminated in ${Date.now() - t1} ms\n`);
        n++;
      }
    }
    // Then issue 25's repro itself, where the race shows most: twelve Workers looping minhash over 20,000
    // short texts (the binding's call that lib's minhash() makes, loaded without tsx: a Worker starts in a
    // fraction of the time), each terminated 20-300 ms in.
    for (let i = 0; i < repro; i++) {
      const w = new Worker(`
        const { parentPort } = require('node:worker_threads');
        const addon = require('node-gyp-build')(${JSON.stringify(path.join(__dirname, '..', '..'))});
        const texts = Array.from({ length: 20000 }, (_, i) => 'short text number ' + i + ' with a few words ' + (i % 97));
        parentPort.postMessage('started');
        (async () => { for (;;) await addon.minhash(texts, { numPerm: 64 }); })();`, { eval: true });
      await new Promise<void>((resolve, reject) => {
        w.once('error', reject);
        w.once('message', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 20 + (delay() * 2) % 281));
      await w.terminate();
      n++;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    // The addon stays mapped once the last environment that loaded it is gone (Linux tells: /proc).
    if (fs.existsSync('/proc/self/maps')) {
      const mapped = fs.readFileSync('/proc/self/maps', 'utf8').includes('neardup.node');
      process.stdout.write(`addon still mapped: ${mapped ? 'yes' : 'no'}\n`);
    }
    process.stdout.write(`survived ${n}\n`);
  })().catch((e) => {
    process.stderr.write(String((e && e.stack) || e) + '\n');
    process.exit(1);
  });
} else {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { CASES } = require('./api-cases') as typeof import('./api-cases');
  const c = CASES.find((k) => k.name === workerData.name)!;
  (async () => {
    const op = await c.setup(require('../../lib/index'), workerData.dir);
    parentPort!.postMessage('started');
    for (;;) await op();
  })().catch((e) => parentPort!.postMessage(`failed: ${(e && e.stack) || e}`));
}

function spawn(data: object): Worker {
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(__filename)});`;
  return new Worker(code, { eval: true, workerData: data });
}
