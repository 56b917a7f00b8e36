// Inputs that used to be silently mishandled (issue 14): a UTF-8 byte-order mark, inherited properties as
// --field, a line over the reader's limit, SimHash fingerprints of skipped lines, --kept with bad lines.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { DedupSession, NeardupError, dedup, simhashFingerprintsSync } from '../lib/index';
import { dedupLimits, tooManyPairs } from '../lib/minhash/dedup';
import { MAX_LINE_BYTES, readJsonl, readLines } from '../lib/io/jsonl';
import { cli } from './cli-helper';
import { DOCUMENT_BYTES_PER_BYTE, INDEXED_DOCUMENT_BYTES_PER_BYTE, documentLimit, documentMemory, memoryDocumentLimit } from '../lib/cli/limits';

let dir = '';
test.before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-hardening-'));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const texts = async (file: string, o: Parameters<typeof readJsonl>[1] = {}) => {
  const got: (string | null)[] = [];
  for await (const b of readJsonl([file], o)) got.push(...b.texts);
  return got;
};

test('a UTF-8 byte-order mark at the start of a file is skipped (plain and gzip), only there', async () => {
  const f = path.join(dir, 'bom.jsonl');
  fs.writeFileSync(f, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"text": "a"}\n{"text": "b"}\n')]));
  assert.equal(await texts(f), ['a', 'b']);
  fs.writeFileSync(f + '.gz', (await import('node:zlib')).gzipSync(fs.readFileSync(f)));
  assert.equal(await texts(f + '.gz'), ['a', 'b']);
  // a BOM on line 2 is a bad line (an invisible character before the JSON), named as such
  const g = path.join(dir, 'bom2.jsonl');
  fs.writeFileSync(g, Buffer.concat([Buffer.from('{"text": "a"}\n'), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"text": "b"}\n')]));
  let err: unknown;
  await texts(g).catch((e) => { err = e; });
  assert.is((err as NeardupError).code, 'ERR_NEARDUP_BAD_LINE');
  assert.is((err as NeardupError).line, 2);
  // the CLI too
  const r = cli(dir, ['shingles', 'bom.jsonl']);
  assert.is(r.code, 0, r.stderr);
});

test('--field reads own properties only: constructor, toString, __proto__ are missing unless present', async () => {
  const f = path.join(dir, 'own.jsonl');
  fs.writeFileSync(f, '{"text": "a"}\n{"constructor": "own value"}\n');
  for (const field of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    let err: unknown;
    await texts(f, { field }).catch((e) => { err = e; });
    assert.is((err as NeardupError).code, 'ERR_NEARDUP_BAD_LINE', field);
    assert.match((err as Error).message, new RegExp(`:1: field '${field.replace(/_/g, '_')}' is missing`), field);
  }
  assert.equal(await texts(f, { field: 'constructor', onBadLine: 'skip' }), [null, 'own value']);
  const r = cli(dir, ['shingles', '--field', 'constructor', 'own.jsonl']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /own\.jsonl:1: field 'constructor' is missing/);
  assert.not.match(r.stderr, /function/);
});

test('a line over the limit is an error naming file:line and the limit, also with skip (never "not valid JSON")', async () => {
  assert.is(MAX_LINE_BYTES, 536870888);
  const f = path.join(dir, 'long.jsonl');
  const long = JSON.stringify({ text: 'x'.repeat(5000) });
  fs.writeFileSync(f, `{"text": "a"}\n${long}\n{"text": "b"}\n`);
  for (const onBadLine of ['error', 'skip', 'empty'] as const) {
    let err: unknown;
    await texts(f, { onBadLine, maxLineBytes: 4096 }).catch((e) => { err = e; });
    assert.instance(err, NeardupError, onBadLine);
    const e = err as NeardupError;
    assert.is(e.code, 'ERR_NEARDUP_INVALID_INPUT');
    assert.is(e.line, 2);
    assert.match(e.message, /long\.jsonl:2: the line is longer than 4096 bytes, the limit for one document/);
    assert.not.match(e.message, /JSON/);
  }
  assert.equal((await texts(f, { maxLineBytes: long.length })).length, 3);  // exactly the limit is fine
  // a final line without newline, and a line split over many chunks: stops buffering at the limit
  const chunks = Readable.from((function* () { for (let i = 0; i < 100; i++) yield Buffer.alloc(1000, 0x61); })());
  let err: unknown;
  try {
    for await (const _ of readLines(chunks, 'stream', 50_000)) void _;
  } catch (e) {
    err = e;
  }
  assert.match((err as Error).message, /^stream:1: the line is longer than 50000 bytes/);
});

test('simhash fingerprint: a skipped line prints an empty line; find-all never pairs it (also with --ids)', () => {
  const docs = ['{"text": "the same words in the same order here"}', '{oops', '{"text": "the same words in the same order here"}', '[1]'];
  fs.writeFileSync(path.join(dir, 'sh.jsonl'), docs.join('\n') + '\n');
  const r = cli(dir, ['simhash', 'fingerprint', '--on-bad-line', 'skip', 'sh.jsonl']);
  assert.is(r.code, 0, r.stderr);
  const fp = String(simhashFingerprintsSync(['the same words in the same order here'])[0]);
  assert.equal(r.stdout.toString().split('\n'), [fp, '', fp, '', '']);
  fs.writeFileSync(path.join(dir, 'fps.txt'), r.stdout);
  const all = cli(dir, ['simhash', 'find-all', 'fps.txt']);
  assert.is(all.code, 0, all.stderr);
  assert.is(all.stdout.toString(), '');  // one distinct fingerprint: no pairs; the skipped lines are not 0s
  const withIds = r.stdout.toString().split('\n').slice(0, 4).map((v, i) => `${i} ${v}`).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'ids.txt'), withIds);
  const ids = cli(dir, ['simhash', 'find-all', '--ids', 'ids.txt']);
  assert.is(ids.code, 0, ids.stderr);
  assert.is(ids.stdout.toString(), '0 2\n');
});

test('dedup --kept never copies bad lines (skip and empty)', () => {
  const good = JSON.stringify({ text: 'one two three four five six seven eight nine ten' });
  fs.writeFileSync(path.join(dir, 'k.jsonl'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${good}\n{bad\n\n${good}\n"str"\n`)]));
  for (const mode of ['skip', 'empty']) {
    const r = cli(dir, ['dedup', '--on-bad-line', mode, '--kept', 'kept.jsonl', 'k.jsonl']);
    assert.is(r.code, 0, r.stderr);
    assert.is(fs.readFileSync(path.join(dir, 'kept.jsonl'), 'utf8'), `${good}\n`, mode);
  }
});

test('--memory bounds per-document work: an oversized document or too many documents stop with the limit stated', async () => {
  assert.equal(dedupLimits({}), { documentBytes: Infinity, documents: Infinity, pairs: Infinity });
  assert.is(dedupLimits({ memory: 128 * 2 ** 20 }).documentBytes, 2 * 2 ** 20);  // verify 'exact' is the default
  const lim = dedupLimits({ memory: 128 * 2 ** 20, verify: 'none' });
  assert.equal(lim, { documentBytes: Math.floor((128 * 2 ** 20) / 6), documents: 8 * 2 ** 20, pairs: 8 * 2 ** 20 });
  assert.is(dedupLimits({ memory: 4096, verify: 'none' }).documentBytes, Math.floor((64 * 2 ** 20) / 6));  // small budgets count as 64 MiB
  assert.is(dedupLimits({ memory: 128 * 2 ** 20, verify: 'exact' }).documentBytes, 2 * 2 ** 20);
  // 1.2 MiB document, verify exact, 64 MiB budget (1 MiB documents at most): refused, before any work
  const big = 'word '.repeat(250_000);
  const s = new DedupSession({ memory: 64 * 2 ** 20, verify: 'exact' });
  try {
    const e = await s.add(['small', big]).then(() => undefined, (x: NeardupError) => x);
    assert.instance(e, NeardupError);
    assert.is(e!.code, 'ERR_NEARDUP_INVALID_INPUT');
    assert.match(e!.message, /^document 1: a document of 1\.2 MiB needs about 64 bytes .* \(documents up to 1\.0 MiB\)/);
  } finally {
    s.close();
  }
  // without a budget it is fine
  const r = await dedup(['small', big], { verify: 'exact' });
  assert.is(r.representative.length, 2);
  // the CLI names file:line
  fs.writeFileSync(path.join(dir, 'm.jsonl'), `{"text": "a b c"}\n${JSON.stringify({ text: big })}\n`);
  const c = cli(dir, ['dedup', '--verify', 'exact', '--memory', '64M', 'm.jsonl']);
  assert.is(c.code, 1);
  assert.match(c.stderr, /m\.jsonl:2: a document of 1\.2 MiB needs about 64 bytes of working memory per byte/);
  const ok = cli(dir, ['dedup', '--fast', '--memory', '64M', 'm.jsonl']);
  assert.is(ok.code, 0, ok.stderr);
});

test('DedupSession pairs: maxPairs caps the reported pairs (ERR_NEARDUP_TOO_MANY_RESULTS), the CLI states the --memory limit', async () => {
  const docs = Array.from({ length: 30 }, () => 'the very same document text, copied thirty times over');  // 435 pairs
  for (const verify of ['none', 'exact'] as const) {
    const run = async (maxPairs?: number) => {
      const s = new DedupSession({ pairs: true, verify, ...(maxPairs === undefined ? {} : { maxPairs }) });
      try {
        await s.add(docs);
        return await s.finish();
      } finally {
        s.close();
      }
    };
    assert.is((await run()).pairA.length, 435);
    assert.is((await run(435)).pairA.length, 435);
    try {
      await run(434);
      assert.unreachable('maxPairs 434');
    } catch (e) {
      assert.is((e as NeardupError).code, 'ERR_NEARDUP_TOO_MANY_RESULTS', String(e));
      assert.match((e as Error).message, /more than 434 reported pairs \(435; raise maxPairs\)/);
    }
  }
  const r = await dedup(docs, { pairs: true, maxPairs: 1000 });
  assert.is(r.pairA.length, 435);
  assert.throws(() => new DedupSession({ pairs: true, maxPairs: -1 }), (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_ARGUMENT');
  assert.is(dedupLimits({ memory: 2 ** 30 }).pairs, 2 ** 26);
  assert.match(tooManyPairs({ memory: 2 ** 30 }).message, /--pairs: more than 67108864 reported pairs \(16 bytes each\).*1\.0 GiB.*--memory/);
});

test('minhash, simhash fingerprint, shingles, paragraphs, decontaminate, similar, passages: a document beyond the document memory stops with file:line (NEARDUP_DOCUMENT_MEMORY)', () => {
  const big = 'word '.repeat(60_000);  // 300,000 bytes
  // ids for similar (the other commands ignore them)
  fs.writeFileSync(path.join(dir, 'big.jsonl'), `{"id": "s", "text": "small one"}\n${JSON.stringify({ id: 'big', text: big })}\n`);
  fs.writeFileSync(path.join(dir, 'bench.txt'), 'a benchmark row\n');
  fs.writeFileSync(path.join(dir, 'small.jsonl'), '{"id": "q", "text": "a small document of a few words to chunk and index"}\n');
  // the indexes the update and query commands need, built without a limit
  fs.rmSync(path.join(dir, 'lim-sim'), { recursive: true, force: true });
  fs.rmSync(path.join(dir, 'lim-pst'), { recursive: true, force: true });
  assert.is(cli(dir, ['similar', 'build', 'small.jsonl', '--index', 'lim-sim']).code, 0);
  assert.is(cli(dir, ['passages', 'index', '-o', 'lim-pst', 'small.jsonl']).code, 0);
  const manifests = () => [fs.readFileSync(path.join(dir, 'lim-sim', 'MANIFEST')), fs.readFileSync(path.join(dir, 'lim-pst', 'passages.json'))];
  const before = manifests();
  // what a command needs besides its input
  const extra: Record<string, string[]> = {
    decontaminate: ['--against', 'bench.txt', '--report', '-'], 'similar build': ['--index', 'lim-new-sim'],
    'similar update': ['--index', 'lim-sim'], 'similar query': ['--index', 'lim-sim'], 'passages index': ['-o', 'lim-new-pst'],
    'passages query': ['lim-pst'],
  };
  assert.is(documentMemory({}), Math.floor(os.totalmem() / 2));
  assert.is(documentMemory({ NEARDUP_DOCUMENT_MEMORY: '1M' }), 2 ** 20);
  process.env.NEARDUP_DOCUMENT_MEMORY = '1M';
  try {
    for (const [cmd, f] of Object.entries(DOCUMENT_BYTES_PER_BYTE)) {
      const limit = documentLimit(cmd as keyof typeof DOCUMENT_BYTES_PER_BYTE);
      assert.is(limit, Math.floor(2 ** 20 / f));
      const r = cli(dir, [...cmd.split(' '), ...(extra[cmd] ?? []), 'big.jsonl']);
      if (limit >= big.length) {
        assert.is(r.code, 0, `${cmd}: ${r.stderr}`);
        continue;
      }
      assert.is(r.code, 1, `${cmd}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`big\\.jsonl:2: a document of 293\\.0 KiB|big\\.jsonl:2: a document of 300000 bytes`), cmd);
      assert.match(r.stderr, /NEARDUP_DOCUMENT_MEMORY/, cmd);
      assert.not.match(r.stderr, /internal error|    at /, cmd);
    }
    // refused before anything was committed: the indexes as they were, no new one
    assert.equal(manifests(), before);
    assert.not.ok(fs.existsSync(path.join(dir, 'lim-new-pst')));
    assert.not.ok(fs.existsSync(path.join(dir, 'lim-new-sim')));
    const bad = cli(dir, ['minhash', 'big.jsonl'], undefined);
    assert.is(bad.code, 1);
    process.env.NEARDUP_DOCUMENT_MEMORY = 'lots';
    const usage = cli(dir, ['minhash', 'big.jsonl']);
    assert.is(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /NEARDUP_DOCUMENT_MEMORY must be a size/);
  } finally {
    delete process.env.NEARDUP_DOCUMENT_MEMORY;
  }
  // without the variable: half of the physical memory, far above this document
  assert.is(cli(dir, ['minhash', 'big.jsonl']).code, 0);
});

test('similar and passages: under --memory a document beyond its share stops with file:line; pairs and query check the largest indexed document first', () => {
  // 3.5 MB: over the share of the 64 MiB floor (1M counts as 64 MiB) in similar build and passages index
  const big = 'word '.repeat(700_000);
  fs.writeFileSync(path.join(dir, 'big35.jsonl'), `{"id": "s", "text": "small one"}\n${JSON.stringify({ id: 'big', text: big })}\n`);
  for (const [cmd, out] of [['similar build', ['--index', 'mem-sim']], ['passages index', ['-o', 'mem-pst']]] as const) {
    const limit = memoryDocumentLimit(cmd, 2 ** 20);
    assert.is(limit.memory, 64 * 2 ** 20);
    assert.is(limit.bytes, Math.floor(32 * 2 ** 20 / DOCUMENT_BYTES_PER_BYTE[cmd]));  // what the process holds off first
    assert.ok(limit.bytes < big.length, `${cmd}: ${limit.bytes}`);
    const r = cli(dir, [...cmd.split(' '), ...out, '--memory', '1M', 'big35.jsonl']);
    assert.is(r.code, 1, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`big35\\.jsonl:2: a document of 3\\.3 MiB needs about ${DOCUMENT_BYTES_PER_BYTE[cmd]} bytes .*'neardup ${cmd}'.*64\\.0 MiB.*raise --memory`), cmd);
    // with room for it, the same run passes
    assert.is(cli(dir, [...cmd.split(' '), ...out, '--memory', '256M', 'big35.jsonl']).code, 0, cmd);
  }
  // a sharded build: the plan carries the limit to its parts
  const sharded = cli(dir, ['passages', 'index', '-o', 'mem-pst3', '--work', 'mem-w3', '--shards', '2', '--memory', '1M', 'big35.jsonl', 'small.jsonl']);
  assert.is(sharded.code, 1, sharded.stderr);
  assert.match(sharded.stderr, /passages part 0\/2: .*big35\.jsonl:2: a document of 3\.3 MiB needs about 23 bytes .*raise --memory/);
  assert.not.ok(fs.existsSync(path.join(dir, 'mem-pst3')));
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'mem-w3', 'passages-plan.json'), 'utf8')).documentLimit,
    memoryDocumentLimit('passages index', 2 ** 20));
  // a line far beyond the limit is refused as it is read, not held whole first (1M: 0.5 MiB for the documents,
  // lines up to six times their limit and 1 MiB); with the same reason
  process.env.NEARDUP_DOCUMENT_MEMORY = '1M';
  try {
    for (const [cmd, out] of [['similar build', ['--index', 'mem-sim2']], ['passages index', ['-o', 'mem-pst2']]] as const) {
      const r = cli(dir, [...cmd.split(' '), ...out, 'big35.jsonl']);
      assert.is(r.code, 1, `${cmd}: ${r.stderr}`);
      // (the native reader also caps a line at the document memory itself: 1 MiB here)
      const cap = Math.min(6 * memoryDocumentLimit(cmd, undefined).bytes + 2 ** 20, 2 ** 20 * (cmd === 'passages index' ? 1 : Infinity));
      assert.match(r.stderr, new RegExp(`big35\\.jsonl:2: the line is longer than ${cap} bytes.*'neardup ${cmd}'.*NEARDUP_DOCUMENT_MEMORY`), cmd);
      assert.not.ok(fs.existsSync(path.join(dir, out[1])), cmd);
    }
  } finally {
    delete process.env.NEARDUP_DOCUMENT_MEMORY;
  }
  // the index holds the 3.5 MB document: pairs within 1M (64 MiB) are refused before any work, naming it
  const f = INDEXED_DOCUMENT_BYTES_PER_BYTE['passages pairs'];
  const pairs = cli(dir, ['passages', 'pairs', 'mem-pst', '--memory', '1M']);
  assert.is(pairs.code, 1, pairs.stderr);
  assert.equal(pairs.stdout.length, 0);
  assert.match(pairs.stderr, new RegExp(`mem-pst: the indexed document "big35\\.jsonl:2": a document of 3\\.3 MiB needs about ${f} bytes`));
  assert.is(cli(dir, ['passages', 'pairs', 'mem-pst']).code, 0);
  // query: the indexed documents against the document memory, whatever the query's size
  process.env.NEARDUP_DOCUMENT_MEMORY = '64M';
  let q: ReturnType<typeof cli>;
  try {
    q = cli(dir, ['passages', 'query', 'mem-pst', 'small.jsonl']);
  } finally {
    delete process.env.NEARDUP_DOCUMENT_MEMORY;
  }
  assert.is(q.code, 1, q.stderr);
  assert.match(q.stderr, /the indexed document "big35\.jsonl:2".*'neardup passages query'.*NEARDUP_DOCUMENT_MEMORY/);
  assert.is(cli(dir, ['passages', 'query', 'mem-pst', 'small.jsonl']).code, 0);
});

test.run();
