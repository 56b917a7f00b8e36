// The API inside a worker_threads Worker (issue 36): every class and async function of test/helpers/api-cases.ts
// (PassageIndex create/add, ChunkIndex, LshIndex save/load, PostingIndex, ParagraphFilter, dedup, readers...)
// run once in a Worker and once here on the main thread; each must work there and give the same result.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Worker } from 'node:worker_threads';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as nd from '../lib/index';
import { CASES } from './helpers/api-cases';
import { OutputFile } from '../lib/io/files';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-worker-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

async function inWorker(dir: string): Promise<Record<string, string>> {
  const code = `
    require(${JSON.stringify(require.resolve('tsx/cjs'))});
    const { parentPort, workerData } = require('node:worker_threads');
    const { CASES } = require(${JSON.stringify(path.join(__dirname, 'helpers', 'api-cases.ts'))});
    const nd = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.ts'))});
    const json = ${json.toString()};
    (async () => {
      const out = {};
      for (const c of CASES) {
        try {
          out[c.name] = json(await (await c.setup(nd, workerData.dir))());
        } catch (e) {
          out[c.name] = 'failed: ' + ((e && e.code) || '') + ' ' + ((e && e.message) || e);
        }
      }
      parentPort.postMessage(out);
    })();`;
  const w = new Worker(code, { eval: true, workerData: { dir } });
  try {
    return await new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
      w.once('exit', (c) => reject(new Error(`the worker exited (${c}) before it answered`)));
    });
  } finally {
    await w.terminate();
  }
}

test('every API case works inside a Worker and gives what it gives on the main thread', async () => {
  const wd = path.join(tmp, 'worker'), md = path.join(tmp, 'main');
  fs.mkdirSync(wd);
  fs.mkdirSync(md);
  const got = await inWorker(wd);
  for (const c of CASES) {
    const here = json(await (await c.setup(nd, md))());
    assert.is(got[c.name], here, c.name);
  }
  assert.is(Object.keys(got).length, CASES.length);
});

test('a new output file gets 0666 minus the umask, in a Worker as on the main thread (no process.umask(m) call)', async () => {
  if (process.platform === 'win32') return;
  const old = process.umask(0o027);
  try {
    const files = path.join(__dirname, '..', 'lib', 'io', 'files.ts');
    const write = async (f: string) => {
      const o = OutputFile.open(f);
      o.write('x\n');
      await o.commit();
    };
    await write(path.join(tmp, 'main.txt'));
    const w = new Worker(`
      require(${JSON.stringify(require.resolve('tsx/cjs'))});
      const { OutputFile } = require(${JSON.stringify(files)});
      const o = OutputFile.open(${JSON.stringify(path.join(tmp, 'worker.txt'))});
      o.write('x\\n');
      o.commit().then(() => require('node:worker_threads').parentPort.postMessage('ok'),
        (e) => require('node:worker_threads').parentPort.postMessage(String(e && e.message)));`, { eval: true });
    const m = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await w.terminate();
    assert.is(m, 'ok');
    for (const f of ['main.txt', 'worker.txt']) assert.is(fs.statSync(path.join(tmp, f)).mode & 0o777, 0o640, f);
    assert.is(fs.readFileSync(path.join(tmp, 'worker.txt'), 'utf8'), 'x\n');
  } finally {
    process.umask(old);
  }
});

test.run();
