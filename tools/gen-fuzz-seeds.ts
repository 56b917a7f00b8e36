// Writes the small seed corpora of the libFuzzer targets (native/fuzz/seeds/<target>/): real files from
// the writers, a few hand-made edge cases. Run once after a format change: node --import tsx tools/gen-fuzz-seeds.ts
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChunkIndex, LshIndex, ParagraphFilter, SignatureWriter, SimhashIndex, SubstringFinder, chunkStages, dedup, minhashSync } from '../lib/index';
import { native } from '../lib/native/addon';

const root = path.join(__dirname, '..', 'native', 'fuzz', 'seeds');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-seeds-'));
const put = (target: string, name: string, bytes: Uint8Array) => {
  fs.mkdirSync(path.join(root, target), { recursive: true });
  fs.writeFileSync(path.join(root, target, name), bytes);
};
const fixCrcs = (b: Buffer) => {
  b.writeUInt32LE(native.crc32c(b.subarray(64)), 32);
  b.writeUInt32LE(native.crc32c(b.subarray(0, 60)), 60);
  return b;
};

(async () => {
  const texts = ['the quick brown fox', 'the quick brown fox', 'jumps over the lazy dog', 'lorem ipsum dolor'];
  for (const [name, numPerm, b, r] of [['small', 16, 4, 4], ['one-band', 8, 1, 8]] as const) {
    const ix = new LshIndex({ numPerm, b, r });
    await ix.insert([1, 2, 3, 4], minhashSync(texts, { numPerm }).signatures);
    const f = path.join(tmp, `${name}.lsh`);
    await ix.save(f);
    ix.close();
    put('lsh_index_fuzz', name, fs.readFileSync(f));
  }
  const empty = new LshIndex({ numPerm: 4, b: 2, r: 2 });
  await empty.save(path.join(tmp, 'empty.lsh'));
  empty.close();
  put('lsh_index_fuzz', 'empty', fs.readFileSync(path.join(tmp, 'empty.lsh')));
  // string keys, one removed after a save and load (the merged file)
  const strings = new LshIndex<string>({ numPerm: 8, b: 4, r: 2, keyType: 'string' });
  await strings.insert(['a', 'bb', '', 'ключ'], minhashSync(texts, { numPerm: 8 }).signatures);
  await strings.save(path.join(tmp, 'strings.lsh'));
  strings.close();
  const merged = LshIndex.load<string>(path.join(tmp, 'strings.lsh'));
  merged.remove('bb');
  await merged.insert(['z'], minhashSync(['zzz zzz'], { numPerm: 8 }).signatures);
  await merged.save(path.join(tmp, 'strings.lsh'));
  merged.close();
  put('lsh_index_fuzz', 'strings', fs.readFileSync(path.join(tmp, 'strings.lsh')));
  // a dedup index: signatures, texts, metadata
  await dedup(texts, { numPerm: 8, b: 4, r: 2, saveIndex: path.join(tmp, 'dedup.lsh') });
  put('lsh_index_fuzz', 'dedup', fs.readFileSync(path.join(tmp, 'dedup.lsh')));
  // version 1 (written by earlier releases; read and converted)
  put('lsh_index_fuzz', 'v1-fast64', fs.readFileSync(path.join(__dirname, '..', 'test', 'fixtures', 'lsh-v1', 'fast64.lsh')));

  for (const [name, n] of [['empty', 0], ['three', 3], ['twenty', 20]] as const) {
    const six = new SimhashIndex({ distance: 3 });
    if (n > 0) six.insert(Array.from({ length: n }, (_, i) => BigInt(i + 1)), Array.from({ length: n }, (_, i) => BigInt(i) * 0x9e3779b97f4a7c15n % 2n ** 64n));
    six.saveSync(path.join(tmp, `${name}.simh`));
    six.close();
    put('simhash_index_fuzz', name, fs.readFileSync(path.join(tmp, `${name}.simh`)));
  }

  const pf = new ParagraphFilter({ n: 2 });
  await pf.pushDocuments([['one two three four', 'five six seven']]);
  await pf.saveSeen(path.join(tmp, 'exact.psen'));
  pf.close();
  put('seen_set_fuzz', 'exact', fs.readFileSync(path.join(tmp, 'exact.psen')));
  // An approximate set with one tiny stage (capacity 512, one 64-byte block) and one with no stage yet.
  const approx = (stages: number) => {
    const b = Buffer.alloc(64 + 16 + stages * (48 + 64));
    Buffer.from([0x4e, 0x44, 0x55, 0x50, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
    b.write('PSEN', 8, 'latin1');
    b.writeUInt32LE(2, 12);
    b.writeUInt32LE(0x01020304, 16);
    b.writeUInt32LE(64, 20);
    b.writeBigUInt64LE(BigInt(b.length - 64), 24);
    b.writeUInt32LE(1, 36);
    b.writeBigUInt64LE(3n, 40);
    b.writeDoubleLE(0.01, 48);
    b.writeBigUInt64LE(BigInt(stages), 64);
    b.writeBigUInt64LE(1024n, 72);
    if (stages) {
      b.writeBigUInt64LE(512n, 80);
      b.writeBigUInt64LE(3n, 88);
      b.writeBigUInt64LE(1n, 96);
      b.writeBigUInt64LE(7n | (2n << 32n), 104);
      b.writeDoubleLE(0.005, 112);
      b.writeBigUInt64LE(12345n, 120);
      b.fill(0x11, 128);
    }
    return fixCrcs(b);
  };
  put('seen_set_fuzz', 'approx-empty', approx(0));
  put('seen_set_fuzz', 'approx-one-stage', approx(1));

  const w = new SignatureWriter(path.join(tmp, 'a.mhsg'), { numPerm: 8, meta: { seed: 1 } });
  w.append(minhashSync(texts, { numPerm: 8 }).signatures);
  w.commit();
  put('signature_file_fuzz', 'neardup', fs.readFileSync(path.join(tmp, 'a.mhsg')));
  const d = new SignatureWriter(path.join(tmp, 'a.hash'), { numPerm: 8, format: 'doubri' });
  d.append(minhashSync(texts.slice(0, 2), { numPerm: 8 }).signatures);
  d.commit();
  put('signature_file_fuzz', 'doubri', fs.readFileSync(path.join(tmp, 'a.hash')));

  // doubri: mode byte, record count byte, then bytes spread over the 40 index files (80-byte entries).
  const entries = Buffer.alloc(40 * 80 * 2);
  for (let j = 0; j < 40; j++) entries.fill(j, j * 160, j * 160 + 80).fill(j + 1, j * 160 + 80, j * 160 + 160);
  put('doubri_index_fuzz', 'sorted', Buffer.concat([Buffer.from([0, 2]), entries]));
  put('doubri_index_fuzz', 'header', Buffer.concat([Buffer.from([1]), Buffer.from('MinHash\x04', 'latin1'), Buffer.alloc(16)]));

  put('vertical_fuzz', 'docs', Buffer.from('<doc>\n<p>\na\nb\nc\n</p>\n</doc>\n<doc id="2">\n<p>\na\nb\nc\n</p>\n<p>\nx\ty\n</p>\n</doc>\nloose\n'));
  put('vertical_fuzz', 'unterminated', Buffer.from('<doc>\n<p x>\none\ntwo\n</p>\n<doc>\nthree'));

  // chunk index files, whole (mode byte 0x80 | kind: 0 manifest, 1 directory, 2/3 chunk lists of 4/8-byte
  // ids, 4 top lists, 5 pairs); ids with an update (tombstones, two record files) and a 64-bit index.
  const docs = [
    { id: 'a', text: 'the quick brown fox jumps over the lazy dog again' },
    { id: 2, text: 'the quick brown fox jumps over the lazy cat' },
    { id: 'c', text: 'a lazy dog sleeps all day long' },
  ];
  const seed = (name: string, mode: number, file: string) => put('chunks_fuzz', name, Buffer.concat([Buffer.from([0x80 | mode]), fs.readFileSync(file)]));
  const files = (dir: string) => fs.readdirSync(dir);
  for (const bits of [32, 64]) {
    const dir = path.join(tmp, `ck${bits}`);
    const ix = await ChunkIndex.build(dir, docs, { n: 3, bits, k: 2 });
    await ix.update([{ id: 'c', text: 'the quick brown fox sleeps' }, { id: 'e', text: 'jumps over the lazy dog' }]);
    ix.close();
    for (const f of files(dir)) {
      if (f === 'MANIFEST') seed(`manifest-${bits}`, 0, path.join(dir, f));
      else if (f.startsWith('dir-')) seed(`directory-${bits}`, 1, path.join(dir, f));
      else if (f.startsWith('docs-')) seed(`${f}-${bits}`, bits === 32 ? 2 : 3, path.join(dir, f));
      else if (f.startsWith('tops-')) seed(`${f}-${bits}`, 4, path.join(dir, f));
    }
  }
  const staged = path.join(tmp, 'staged');
  await chunkStages.prepare(staged, docs, { n: 3, parts: 2 });
  seed('pairs', 5, await chunkStages.part(staged, 0));
  // substring indexes (SUBX): three documents with a repeat, and no document at all
  for (const [name, docsIn] of [['three', ['the quick brown fox', 'a quick brown fox', 'é€😀']], ['empty', []]] as const) {
    const f = new SubstringFinder();
    await f.add([...docsIn]);
    await f.find({ minLength: 4, indexPath: path.join(tmp, `${name}.subx`) });
    f.close();
    put('substr_index_fuzz', name, fs.readFileSync(path.join(tmp, `${name}.subx`)));
  }
  fs.rmSync(tmp, { recursive: true, force: true });
})();
