// CLI: neardup minhash (jsonl and binary output) and neardup doubri minhash/init against the vectors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { minhashSync, readSignatureFile } from '../lib/index';
import { TSX_FLAGS } from './support/tsx';

const ROOT = path.join(__dirname, '..');
const VECTORS = path.join(ROOT, 'test', 'fixtures', 'vectors');
const DOUBRI = path.join(VECTORS, 'doubri-v1');
const DS_DIR = path.join(VECTORS, 'datasketch-legacy');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-mhcli-'));

function cli(args: string[], input?: Buffer | string) {
  const r = spawnSync(process.execPath, [...TSX_FLAGS, path.join(ROOT, 'lib', 'cli', 'main.ts'), ...args], {
    cwd: ROOT, input, maxBuffer: 1 << 28,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

test('doubri minhash + init: every group byte for byte', () => {
  for (const g of ['groupA', 'groupB', 'edge']) {
    const out = path.join(TMP, `${g}.hash`);
    const r = cli(['doubri', 'minhash', out], fs.readFileSync(path.join(DOUBRI, `${g}.jsonl`)));
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.length, 0);
    assert.ok(fs.readFileSync(out).equals(fs.readFileSync(path.join(DOUBRI, `${g}.hash`))), g);
    const init = cli(['doubri', 'init', out]);
    assert.is(init.code, 0, init.stderr);
    assert.ok(init.stdout.equals(fs.readFileSync(path.join(DOUBRI, `${g}.hash.f.init`))), `${g} init`);
  }
});

test('doubri minhash: a final line without newline is processed', () => {
  const input = fs.readFileSync(path.join(DOUBRI, 'edge.jsonl'));
  assert.is(input[input.length - 1], 0x0a);
  const out = path.join(TMP, 'nonl.hash');
  const r = cli(['doubri', 'minhash', out], input.subarray(0, input.length - 1));
  assert.is(r.code, 0, r.stderr);
  assert.ok(fs.readFileSync(out).equals(fs.readFileSync(path.join(DOUBRI, 'edge.hash'))));
});

test('doubri minhash: a bad line is a clear error, or follows --on-bad-line', () => {
  const out = path.join(TMP, 'bad.hash');
  const input = '{"text":"hello world"}\n{"text": 5}\n{"text":"abcdefgh"}\n';
  const r = cli(['doubri', 'minhash', out], input);
  assert.is(r.code, 1);
  assert.match(r.stderr, /<stdin>:2: field 'text' is number/);
  assert.not.ok(fs.existsSync(out), 'no partial file');
  const s = cli(['doubri', 'minhash', '--on-bad-line', 'skip', out], input);
  assert.is(s.code, 0, s.stderr);
  const f = readSignatureFile(out);
  assert.is(f.count, 3);
  assert.ok(f.signatures.subarray(800, 1600).every((v) => v === 0xffffffff));
  const e = cli(['doubri', 'minhash', '--on-bad-line', 'empty', out], input);
  assert.is(e.code, 0, e.stderr);
  const want = minhashSync(['', 'abcdefgh'], { profile: 'doubri-v1' }).signatures;
  assert.equal(Array.from(readSignatureFile(out).signatures.subarray(800)), Array.from(want));
});

test('doubri: usage errors exit 2', () => {
  assert.is(cli(['doubri']).code, 2);
  assert.is(cli(['doubri', 'nope']).code, 2);
  assert.is(cli(['doubri', 'minhash']).code, 2);
  const r = cli(['doubri', 'init', path.join(DOUBRI, 'edge.jsonl')]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /not a doubri \.hash file/);
});

test('doubri init and readSignatureFile: a bad .hash header is a clear error naming the file', () => {
  const head = (n: bigint, k: bigint) => {
    const h = Buffer.alloc(24);
    h.write('MinHash', 0, 'latin1');
    h[7] = 4;
    h.writeBigUInt64LE(n, 8);
    h.writeBigUInt64LE(k, 16);
    return h;
  };
  // [file, contents, init's error, readSignatureFile's error]
  const cases: [string, Buffer, RegExp, RegExp][] = [
    ['short.hash', head(0n, 800n).subarray(0, 20), /not a doubri \.hash file/, /not a signature file/],
    ['size.hash', Buffer.concat([head(2n, 800n), Buffer.alloc(3200)]), /announces 2 records of 800 values .* 3224 bytes/, /announces 2 records/],
    // 2^62 records of 0 values matches the size of a bare header: without the k check init would print 2^62 flags
    ['zero-k.hash', head(1n << 62n, 0n), /0 values per record/, /0 values per record/],
  ];
  for (const [name, bytes, why, readWhy] of cases) {
    const f = path.join(TMP, name);
    fs.writeFileSync(f, bytes);
    const r = cli(['doubri', 'init', f]);
    assert.is(r.code, 1, name);
    assert.is(r.stdout.length, 0, name);
    assert.match(r.stderr, why, name);
    assert.match(r.stderr, new RegExp(name.replace('.', '\\.')), name);
    assert.throws(() => readSignatureFile(f), (e: unknown) => (e as Error).message.includes(name) && readWhy.test((e as Error).message), name);
  }
});

test('minhash --profile datasketch --output jsonl: every case of the vectors', () => {
  const ds = JSON.parse(fs.readFileSync(path.join(DS_DIR, 'vectors.json'), 'utf8')) as {
    cases: { shingles: string; num_perm: number; seed: number; signatures: number[][] }[];
  };
  for (const c of ds.cases) {
    const r = cli(['minhash', '--profile', 'datasketch', '--num-perm', String(c.num_perm), '--seed', String(c.seed),
      '--shingle', c.shingles === 'word5' ? 'word' : 'char', '--ngram', '5', '--output', 'jsonl',
      path.join(DS_DIR, 'sample.jsonl')]);
    assert.is(r.code, 0, r.stderr);
    const lines = r.stdout.toString().trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines, c.signatures, `${c.shingles} ${c.num_perm} ${c.seed}`);
  }
});

test('minhash: binary output (neardup and doubri formats) equals the API', () => {
  const input = fs.readFileSync(path.join(DOUBRI, 'edge.jsonl'), 'utf8');
  const texts = input.trimEnd().split('\n').map((l) => JSON.parse(l).text as string);
  const out = path.join(TMP, 'edge.mhsg');
  const r = cli(['minhash', '--num-perm', '64', '--seed', '7', '-o', out], input);
  assert.is(r.code, 0, r.stderr);
  const f = readSignatureFile(out);
  assert.is(f.format, 'neardup');
  assert.is(f.profile, 'fast');
  assert.equal((f.meta as { seed: string }).seed, '7');
  assert.equal(Array.from(f.signatures), Array.from(minhashSync(texts, { numPerm: 64, seed: 7 }).signatures));
  const d = cli(['minhash', '--profile', 'doubri-v1', '--format', 'doubri', '-o', path.join(TMP, 'e.hash')], input);
  assert.is(d.code, 0, d.stderr);
  assert.ok(fs.readFileSync(path.join(TMP, 'e.hash')).equals(fs.readFileSync(path.join(DOUBRI, 'edge.hash'))));
  // jsonl: null for a skipped line.
  const j = cli(['minhash', '--num-perm', '4', '--on-bad-line', 'skip'], '{"text":"abcdef"}\n[1]\n');
  assert.is(j.code, 0, j.stderr);
  assert.is(j.stdout.toString().split('\n')[1], 'null');
});

test('minhash: usage errors', () => {
  assert.is(cli(['minhash', '--num-perm', '2000'], '').code, 2);
  assert.is(cli(['minhash', '--profile', 'datasketch', '--seed', String(2 ** 33)], '').code, 2);
  assert.is(cli(['minhash', '--profile', 'x'], '').code, 2);
  assert.is(cli(['minhash', '--format', 'doubri'], '').code, 2);
});

test.after(() => fs.rmSync(TMP, { recursive: true, force: true }));
test.run();
