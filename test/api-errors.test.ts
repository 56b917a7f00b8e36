// Every exported function and class method, called with bad arguments, fails with a TypeError or RangeError
// carrying code ERR_NEARDUP_INVALID_ARGUMENT (thrown, or for promise-returning calls, thrown or rejected),
// never a plain Error, a crash or a silent success. The table must name every export and every method.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as neardup from '../lib/index';

const {
  LshIndex, SimhashIndex, DedupSession, SignatureWriter, ParagraphFilter, PostingIndex, PassageIndex, ChunkIndex, DecontaminationIndex, SubstringFinder, CodeIndex,
} = neardup;

type Call = () => unknown;

/** Runs f; returns the error it throws or its promise rejects with (undefined if it succeeds). */
async function failure(f: Call): Promise<unknown> {
  try {
    const r = f();
    if (r && typeof (r as Promise<unknown>).then === 'function') await r;
    else if (r && typeof (r as AsyncIterator<unknown>).next === 'function' && Symbol.asyncIterator in (r as object)) await (r as AsyncIterator<unknown>).next();
  } catch (e) {
    return e;
  }
  return undefined;
}

async function expectInvalid(name: string, calls: Call[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, f] of calls.entries()) {
    const e = await failure(f);
    const code = (e as { code?: unknown } | undefined)?.code;
    if (e === undefined) problems.push(`${name} #${i}: accepted`);
    else if (!(e instanceof TypeError || e instanceof RangeError) || code !== 'ERR_NEARDUP_INVALID_ARGUMENT')
      problems.push(`${name} #${i}: ${(e as Error)?.constructor?.name} ${String(code)}: ${(e as Error)?.message}`);
  }
  return problems;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-api-errors-'));
const bad = { notArray: 42, notString: 42 as unknown as string, sym: Symbol('x') as unknown as string };

// exported values that are not callables with arguments to check
const NOT_CHECKED = new Set(['NeardupError', 'version', 'DEFAULT_MAX_RESULTS', 'getThreads', 'runtimeInfo', 'URL_RULES', 'URL_DEFAULT_RULES', 'CODE_LANGUAGES', 'CODE_EXTENSIONS']);

const FUNCTIONS: Record<string, Call[]> = {
  exactDuplicates: [() => neardup.exactDuplicates(bad.notArray as never), () => neardup.exactDuplicates([5 as never]), () => neardup.exactDuplicates(['a'], { unicode: 'x' as never })],
  normalizeUrl: [() => neardup.normalizeUrl(bad.notString, new Set()), () => neardup.normalizeUrl('http://a', ['www'] as never), () => neardup.normalizeUrl('http://a', new Set(['host' as never]))],
  shingleHashes: [() => neardup.shingleHashes(bad.notArray as never), () => neardup.shingleHashes(['a'], { n: 0 }), () => neardup.shingleHashes(['a'], { unit: 'byte' as never }), () => neardup.shingleHashes(['a'], 5 as never)],
  shingleHashesSync: [() => neardup.shingleHashesSync(bad.notArray as never), () => neardup.shingleHashesSync(['a'], { n: -1 }), () => neardup.shingleHashesSync([5 as never])],
  packTexts: [() => neardup.packTexts(bad.notArray as never), () => neardup.packTexts([5 as never])],
  normalizeTextSync: [() => neardup.normalizeTextSync(bad.notArray as never, 'nfc'), () => neardup.normalizeTextSync(['a'], 'NFC' as never),
    () => neardup.normalizeTextSync(['a'], undefined as never), () => neardup.normalizeTextSync([5 as never], 'nfkc')],
  optimalParam: [() => neardup.optimalParam(2, 128), () => neardup.optimalParam(0.5, 0), () => neardup.optimalParam('x' as never, 128), () => neardup.optimalParam(0.5, 128, 'w' as never)],
  optimalParamAsync: [() => neardup.optimalParamAsync(2, 128), () => neardup.optimalParamAsync(0.5, 1.5)],
  recallParam: [() => neardup.recallParam(0, 128), () => neardup.recallParam(0.5, 0), () => neardup.recallParam(0.5, 128, 1)],
  collisionProbability: [() => neardup.collisionProbability(2, 1, 1), () => neardup.collisionProbability(0.5, 0, 1), () => neardup.collisionProbability('x' as never, 1, 1)],
  dedup: [() => neardup.dedup(bad.notArray as never), () => neardup.dedup(['a'], { threshold: 5 }), () => neardup.dedup(['a'], { verify: 'x' as never }), () => neardup.dedup(['a'], { banding: 'x' as never }),
    () => neardup.dedup(['a'], { saveIndex: 5 as never }), () => neardup.dedup(['a'], { index: 5 as never })],
  doubriSelf: [() => neardup.doubriSelf(bad.notArray as never, 'x'), () => neardup.doubriSelf(['a'], bad.notString)],
  doubriOther: [() => neardup.doubriOther(bad.notString, ['a']), () => neardup.doubriOther('x', bad.notArray as never)],
  simhashFingerprints: [() => neardup.simhashFingerprints(bad.notArray as never), () => neardup.simhashFingerprints(['a'], { hash: 'sha9' as never })],
  simhashFingerprintsSync: [() => neardup.simhashFingerprintsSync(bad.notArray as never), () => neardup.simhashFingerprintsSync(['a'], { weighting: 'x' as never })],
  simhashCompute: [() => neardup.simhashCompute(bad.notArray as never), () => neardup.simhashCompute([1n, 2n], [1])],
  hammingDistance: [() => neardup.hammingDistance(1 as never, 2n), () => neardup.hammingDistance(-1n, 2n), () => neardup.hammingDistance(1n << 64n, 2n)],
  pickSimhashBlocks: [() => neardup.pickSimhashBlocks(-1, 3), () => neardup.pickSimhashBlocks(10, 99), () => neardup.pickSimhashBlocks('x' as never, 3)],
  simhashFindAll: [() => neardup.simhashFindAll(bad.notArray as never), () => neardup.simhashFindAll([1n], { distance: 99 }), () => neardup.simhashFindAll([1n], { blocks: 2, distance: 3 }), () => neardup.simhashFindAll([1n], { maxPairs: 0.5 })],
  simhashFindAllSync: [() => neardup.simhashFindAllSync(bad.notArray as never), () => neardup.simhashFindAllSync([1n], { distance: -1 }), () => neardup.simhashFindAllSync([1n], { ids: [1n, 2n] }), () => neardup.simhashFindAllSync([1n], { maxPairs: -1 })],
  simhashFindAllStream: [() => neardup.simhashFindAllStream(bad.notArray as never), () => neardup.simhashFindAllStream([1n], { distance: 99 }), () => neardup.simhashFindAllStream([1n], { chunkPairs: 0 }), () => neardup.simhashFindAllStream([1n], { ids: [1n, 2n] })],
  minhash: [() => neardup.minhash(bad.notArray as never), () => neardup.minhash(['a'], { numPerm: 0 }), () => neardup.minhash(['a'], { profile: 'x' as never })],
  minhashSync: [() => neardup.minhashSync(bad.notArray as never), () => neardup.minhashSync(['a'], { numPerm: 1e9 })],
  minhashOfShingles: [() => neardup.minhashOfShingles(bad.notArray as never, new Uint32Array([1])), () => neardup.minhashOfShingles(['a'], 'x' as never)],
  minhashStream: [() => neardup.minhashStream(bad.notArray as never), () => neardup.minhashStream((async function* () { yield ['a']; })(), { numPerm: 0 })],
  datasketchPermutations: [() => neardup.datasketchPermutations(-1), () => neardup.datasketchPermutations(1, 0), () => neardup.datasketchPermutations('x' as never)],
  signatureAt: [() => neardup.signatureAt({ signatures: new Uint32Array(4), numPerm: 2 }, 5), () => neardup.signatureAt({ signatures: new Uint32Array(4), numPerm: 2 }, -1), () => neardup.signatureAt(null as never, 0)],
  estimateJaccard: [() => neardup.estimateJaccard(new Uint32Array(2), new Uint32Array(3)), () => neardup.estimateJaccard([1] as never, new Uint32Array(1))],
  readSignatureFile: [() => neardup.readSignatureFile(bad.notString)],
  removeSpans: [() => neardup.removeSpans('x' as never, [0], [1]), () => neardup.removeSpans(Buffer.from('abc'), [2], [1]), () => neardup.removeSpans(Buffer.from('abc'), 5 as never, [1]),
    () => neardup.removeSpans(Buffer.from('abc'), [0], [9])],
  countSubstrings: [() => neardup.countSubstrings(bad.notString, ['a']), () => neardup.countSubstrings('x.subx', bad.notArray as never), () => neardup.countSubstrings(path.join(dir, 'none.subx'), ['']),
    () => neardup.countSubstrings('x.subx', ['a'], 5 as never)],
  removeRepeatedSubstrings: [() => neardup.removeRepeatedSubstrings(bad.notArray as never), () => neardup.removeRepeatedSubstrings(['a'], { minLength: 3 }), () => neardup.removeRepeatedSubstrings([5 as never])],
  dedupVertical: [() => neardup.dedupVertical(bad.notArray as never), () => neardup.dedupVertical('a\n', { n: 0 })],
  addBenchmarkFiles: [() => neardup.addBenchmarkFiles({} as never, []), () => neardup.addBenchmarkFiles(new DecontaminationIndex(), bad.notArray as never),
    () => neardup.addBenchmarkFiles(new DecontaminationIndex(), [], { fields: [] }), () => neardup.addBenchmarkFiles(new DecontaminationIndex(), [], { format: 'csv' as never })],
  benchmarkRow: [() => neardup.benchmarkRow([], 0), () => neardup.benchmarkRow([{ file: 'b', format: 'text', firstRow: 0, rows: 2 }], 2), () => neardup.benchmarkRow(bad.notArray as never, 0)],
  readJsonl: [() => neardup.readJsonl(bad.notArray as never), () => neardup.readJsonl([5 as never]), () => neardup.readJsonl(['x'], 5 as never)],
  readDocuments: [() => neardup.readDocuments(bad.notArray as never), () => neardup.readDocuments([5 as never]), () => neardup.readDocuments(['x'], 5 as never),
    () => neardup.readDocuments(['x'], { field: 'a..b' }), () => neardup.readDocuments(['x'], { idField: '' }), () => neardup.readDocuments(['x'], { onBadLine: 'x' as never })],
  sniffInput: [() => neardup.sniffInput('PAR1' as never), () => neardup.sniffInput(5 as never)],
  blot: [() => neardup.blot(bad.notArray as never), () => neardup.blot([5 as never]), () => neardup.blot(['a'], { seqLen: 0 }), () => neardup.blot(['a'], { profile: 'x' as never }), () => neardup.blot(['a'], 5 as never)],
  setThreads: [() => neardup.setThreads(-1), () => neardup.setThreads('x' as never), () => neardup.setThreads(1.5)],
  findCopiedCode: [() => neardup.findCopiedCode(bad.notArray as never), () => neardup.findCopiedCode([{ text: 'a', lang: 'cobol' as never }]),
    () => neardup.findCopiedCode([], { minTokens: 0 }), () => neardup.findCopiedCode([5 as never]), () => neardup.findCopiedCode([], 5 as never)],
  codeTokens: [() => neardup.codeTokens(5 as never, 'c'), () => neardup.codeTokens('a', 'cobol' as never), () => neardup.codeTokens('a', 'c', 5 as never)],
  languageOf: [() => neardup.languageOf(5 as never)],
  winnowParameters: [() => neardup.winnowParameters({ minTokens: 0 }), () => neardup.winnowParameters({ minTokens: 30, k: 40 }), () => neardup.winnowParameters(5 as never)],
  chunkIds: [() => neardup.chunkIds(bad.notArray as never), () => neardup.chunkIds(['a'], { bits: 27 }), () => neardup.chunkIds(['a'], { n: 0 }), () => neardup.chunkIds(['a'], { split: 'x' as never })],
};

const sig16 = new Uint32Array(16);
const METHODS: Record<string, Record<string, (o: never) => Call[]>> = {
  LshIndex: {
    constructor: () => [() => new LshIndex({ numPerm: 0 }), () => new LshIndex({ b: 3 }), () => new LshIndex(5 as never), () => new LshIndex({ profile: 'x' as never })],
    load: () => [() => LshIndex.load(bad.notString), () => LshIndex.load('x', 5 as never)],
    loadAsync: () => [() => LshIndex.loadAsync(bad.notString), () => LshIndex.loadAsync('x', 5 as never)],
    has: (i: neardup.LshIndex) => [() => i.has('x' as never), () => i.has(-1), () => i.has(2n ** 64n)],
    insert: (i: neardup.LshIndex) => [() => i.insert([1n], new Uint32Array(3)), () => i.insert(bad.notArray as never, sig16), () => i.insert([1n, 2n], sig16)],
    insertSync: (i: neardup.LshIndex) => [() => i.insertSync([1n], new Float64Array(16) as never), () => i.insertSync(['x' as never], sig16)],
    query: (i: neardup.LshIndex) => [() => i.query(new Uint32Array(3)), () => i.query('x' as never)],
    queryBatch: (i: neardup.LshIndex) => [() => i.queryBatch(new Uint32Array(3)), () => i.queryBatch(sig16, { maxResults: -1 })],
    remove: (i: neardup.LshIndex) => [() => i.remove('x' as never), () => i.remove(-1)],
    candidatePairs: (i: neardup.LshIndex) => [() => i.candidatePairs({ maxPairs: -1 }), () => i.candidatePairs(5 as never)],
    candidatePairsStream: (i: neardup.LshIndex) => [() => i.candidatePairsStream({ chunkPairs: 0 }), () => i.candidatePairsStream(5 as never)],
    save: (i: neardup.LshIndex) => [() => i.save(bad.notString), () => i.save('x.lsh', { overwrite: 1 as never })],
    checkUnchanged: (i: neardup.LshIndex) => [() => i.checkUnchanged(bad.notString)],
  },
  SimhashIndex: {
    constructor: () => [() => new SimhashIndex({ distance: 99 }), () => new SimhashIndex(5 as never)],
    open: () => [() => SimhashIndex.open(bad.notString)],
    openAsync: () => [() => SimhashIndex.openAsync(bad.notString)],
    insert: (i: neardup.SimhashIndex) => [() => i.insert([1n, 2n], [1n]), () => i.insert(bad.notArray as never, [1n])],
    insertAsync: (i: neardup.SimhashIndex) => [() => i.insertAsync([1n, 2n], [1n])],
    remove: (i: neardup.SimhashIndex) => [() => i.remove(bad.notArray as never)],
    removeAsync: (i: neardup.SimhashIndex) => [() => i.removeAsync(bad.notArray as never)],
    has: (i: neardup.SimhashIndex) => [() => i.has('x' as never), () => i.has(-1n)],
    findFirst: (i: neardup.SimhashIndex) => [() => i.findFirst('x' as never), () => i.findFirst(1n << 64n)],
    findAll: (i: neardup.SimhashIndex) => [() => i.findAll(1 as never)],
    findFirstMany: (i: neardup.SimhashIndex) => [() => i.findFirstMany(bad.notArray as never)],
    findFirstManySync: (i: neardup.SimhashIndex) => [() => i.findFirstManySync(bad.notArray as never)],
    findAllMany: (i: neardup.SimhashIndex) => [() => i.findAllMany(bad.notArray as never)],
    findAllManySync: (i: neardup.SimhashIndex) => [() => i.findAllManySync(bad.notArray as never)],
    save: (i: neardup.SimhashIndex) => [() => i.save(bad.notString), () => i.save('x.simh', { overwrite: 1 as never }), () => i.save('x.simh', 5 as never)],
    saveSync: (i: neardup.SimhashIndex) => [() => i.saveSync(bad.notString), () => i.saveSync('x.simh', { overwrite: 'yes' as never })],
  },
  DedupSession: {
    constructor: () => [() => new DedupSession({ numPerm: 0 }), () => new DedupSession({ profile: 'x' as never }), () => new DedupSession({ memory: -5 }),
      () => new DedupSession({ index: 'x.lsh' as never }), () => new DedupSession({ indexOut: 1 as never }), () => new DedupSession({ indexKeys: 'id' }),
      () => new DedupSession({ indexOut: true, indexKeys: 'x' as never }), () => new DedupSession({ indexOut: true, clustering: 'components' })],
    add: (s: neardup.DedupSession) => [() => s.add(bad.notArray as never), () => s.add([5 as never]), () => s.add(['a'], ['x'])],
    saveIndex: (s: neardup.DedupSession) => [() => s.saveIndex(bad.notString), () => s.saveIndex('x', 5 as never)],
  },
  SignatureWriter: {
    constructor: () => [() => new SignatureWriter(bad.notString, { numPerm: 4 }), () => new SignatureWriter(path.join(dir, 'w'), { numPerm: 0 })],
    append: (w: neardup.SignatureWriter) => [() => w.append(new Uint32Array(3)), () => w.append([1, 2, 3, 4] as never)],
  },
  PostingIndex: {
    create: () => [() => PostingIndex.create(bad.notString)],
    open: () => [() => PostingIndex.open(bad.notString), () => PostingIndex.open(dir, 5 as never)],
    append: (i: neardup.PostingIndex) => [() => i.append(bad.notArray as never), () => i.append([[1, -1]]), () => i.append([['x' as never]]), () => i.append([[1]], { memory: -1 })],
    appendTexts: (i: neardup.PostingIndex) => [() => i.appendTexts(bad.notArray as never), () => i.appendTexts(['a'], { blot: { seqLen: 0 } }), () => i.appendTexts(['a'], { keyModulus: -1 })],
    delete: (i: neardup.PostingIndex) => [() => i.delete(bad.notArray as never), () => i.delete([1.5])],
    lookup: (i: neardup.PostingIndex) => [() => i.lookup(bad.notArray as never), () => i.lookup([-1])],
    appendIndexes: (i: neardup.PostingIndex) => [() => i.appendIndexes(bad.notArray as never), () => i.appendIndexes([5 as never]), () => i.appendIndexes([], 5 as never)],
    appendKeyRanges: (i: neardup.PostingIndex) => [() => i.appendKeyRanges(bad.notArray as never, 1), () => i.appendKeyRanges([5 as never], 1), () => i.appendKeyRanges([], -1), () => i.appendKeyRanges([], 0, 'x' as never)],
    writeKeyRange: () => [() => PostingIndex.writeKeyRange(bad.notArray as never, 'x', { range: 0, ranges: 1 }), () => PostingIndex.writeKeyRange([], 'x', { range: 0, ranges: 1 }),
      () => PostingIndex.writeKeyRange([dir], bad.notString, { range: 0, ranges: 1 }), () => PostingIndex.writeKeyRange([dir], 'x', { range: 1, ranges: 1 }),
      () => PostingIndex.writeKeyRange([dir], 'x', { range: 0, ranges: 0 }), () => PostingIndex.writeKeyRange([dir], 'x', { range: 0, ranges: 1, firstId: -1 })],
    appender: (i: neardup.PostingIndex) => [() => i.appender({ memory: -1 }), () => i.appender({ keyBits: 33 }), () => i.appender(5 as never)],
    formatLists: (i: neardup.PostingIndex) => [() => i.formatLists([1] as never, new Uint8Array(0), new Uint32Array(1), new Uint8Array(8)),
      () => i.formatLists(new Uint32Array(1), new Uint8Array(0), new Uint32Array([0, 5]), new Uint8Array(8)), () => i.formatLists(new Uint32Array(1), new Uint8Array(0), new Uint32Array(1), new Uint8Array(8), 2)],
  },
  PostingAppender: {
    add: (a: neardup.PostingAppender) => [() => a.add(bad.notArray as never), () => a.add([[-1]])],
    addTexts: (a: neardup.PostingAppender) => [() => a.addTexts(bad.notArray as never), () => a.addTexts(['a'], { blot: { seqLen: 0 } }), () => a.addTexts(['a'], { keyModulus: -1 })],
  },
  ChunkIndex: {
    build: () => [() => ChunkIndex.build(bad.notString, []), () => ChunkIndex.build(path.join(dir, 'cb'), bad.notArray as never),
      () => ChunkIndex.build(path.join(dir, 'cb'), [], { k: 0 }), () => ChunkIndex.build(path.join(dir, 'cb'), [{ id: 1.5, text: 'x' }])],
    open: () => [() => ChunkIndex.open(bad.notString), () => ChunkIndex.open(dir, { verify: 'yes' as never })],
    update: (i: neardup.ChunkIndex) => [() => i.update(bad.notArray as never), () => i.update([{ id: {} as never, text: 'x' }]), () => i.update([], { memory: -1 })],
    top: (i: neardup.ChunkIndex) => [() => i.top({} as never), () => i.top(1.5)],
    query: (i: neardup.ChunkIndex) => [() => i.query(bad.notArray as never), () => i.query([5 as never]), () => i.query(['a'], ['x', 'y'])],
    internalIds: (i: neardup.ChunkIndex) => [() => i.internalIds(bad.notArray as never), () => i.internalIds([5 as never])],
    topOf: (i: neardup.ChunkIndex) => [() => i.topOf([0] as never), () => i.topOf(Uint32Array.of(999))],
    topLines: (i: neardup.ChunkIndex) => [() => i.topLines('x' as never), () => i.topLines(Uint32Array.of(999))],
  },
  PassageIndex: {
    open: () => [() => PassageIndex.open(bad.notString), () => PassageIndex.open(dir, 5 as never), () => PassageIndex.open(dir, {}, 'yes' as never)],
    add: (p: neardup.PassageIndex) => [() => p.add(bad.notArray as never), () => p.add([{ id: 1, text: 'x' as never }]), () => p.add([], { memory: -1 })],
    text: (p: neardup.PassageIndex) => [() => p.text(-1), () => p.text('x' as never)],
    extract: (p: neardup.PassageIndex) => [() => p.extract({ minDocs: -1 }), () => p.extract(5 as never), () => p.extract({ memory: -1 }), () => p.extract({ tmp: 5 as never })],
    extractLines: (p: neardup.PassageIndex) => [() => p.extractLines({ minDocs: -1 }), () => p.extractLines(5 as never), () => p.extractLines({ memory: 0.5 })],
    query: (p: neardup.PassageIndex) => [() => p.query(bad.notArray as never), () => p.query(['x' as never]), () => p.query([], { minShared: 0 })],
    queryLines: (p: neardup.PassageIndex) => [() => p.queryLines(bad.notArray as never), () => p.queryLines(['x' as never]), () => p.queryLines([], { maxDocs: 0 })],
    pairs: (p: neardup.PassageIndex) => [() => p.pairs({ maxDocs: 0 }), () => p.pairs(5 as never), () => p.pairs({ memory: -1 }), () => p.pairs({ tmp: 5 as never })],
    pairsLines: (p: neardup.PassageIndex) => [() => p.pairsLines({ minShared: 0 }), () => p.pairsLines(5 as never), () => p.pairsLines({ memory: 0.5 })],
    addParts: (p: neardup.PassageIndex) => [() => p.addParts(bad.notArray as never), () => p.addParts([bad.notString]), () => p.addParts([], { keyRanges: 5 as never }), () => p.addParts([], 5 as never)],
    addRun: (p: neardup.PassageIndex) => [() => p.addRun([[{ id: 1, text: 'x' as never }]]), () => p.addRun([], { memory: -1 }), () => p.addRun([5 as never])],
  },
  DecontaminationIndex: {
    constructor: () => [() => new DecontaminationIndex({ n: 0 }), () => new DecontaminationIndex({ n: 5, minTokens: 6 }), () => new DecontaminationIndex({ approx: true, fpRate: 0 }), () => new DecontaminationIndex(5 as never)],
    add: (x: neardup.DecontaminationIndex) => [() => x.add(bad.notArray as never, []), () => x.add(['a'], [0, 1]), () => x.add(['a'], [-1]), () => x.add([5 as never], [0])],
    probe: (x: neardup.DecontaminationIndex) => [() => x.probe(bad.notArray as never), () => x.probe(['a'], { valid: new Uint8Array(2) }), () => x.probe(['a'], { maxSamples: -1 }), () => x.probe(['a'], 5 as never)],
    check: (x: neardup.DecontaminationIndex) => [() => x.check(bad.notArray as never), () => x.check([5 as never])],
  },
  ExactDedup: {
    constructor: () => [() => new neardup.ExactDedup({ unicode: 'nfd' as never }), () => new neardup.ExactDedup({ memory: -1 }), () => new neardup.ExactDedup({ unit: 'line' as never }),
      () => new neardup.ExactDedup(5 as never), () => new neardup.ExactDedup({ lowercase: 'yes' as never })],
    add: (x: neardup.ExactDedup) => [() => x.add(bad.notArray as never), () => x.add([5 as never]), () => x.add(['a'], new Uint8Array(2))],
    addHashes: (x: neardup.ExactDedup) => [() => x.addHashes([1n, 2n] as never), () => x.addHashes(new BigUint64Array(3)), () => x.addHashes(new BigUint64Array(2), new Uint8Array(3))],
    loadIndex: (x: neardup.ExactDedup) => [() => x.loadIndex(bad.notString)],
    saveIndex: (x: neardup.ExactDedup) => [() => x.saveIndex(bad.notString, { meta: '', firstDoc: 0 }), () => x.saveIndex('x', 5 as never), () => x.saveIndex('x', { meta: 5 as never, firstDoc: 0 })],
  },
  ParagraphFilter: {
    constructor: () => [() => new ParagraphFilter({ n: 0 }), () => new ParagraphFilter({ threshold: 2 }), () => new ParagraphFilter(5 as never)],
    pushVertical: (f: neardup.ParagraphFilter) => [() => f.pushVertical(5 as never), () => f.pushVertical('no newline at the end')],
    pushDocuments: (f: neardup.ParagraphFilter) => [() => f.pushDocuments(bad.notArray as never), () => f.pushDocuments([[5 as never]])],
    pushParagraphs: (f: neardup.ParagraphFilter) => [() => f.pushParagraphs(['a'], new Uint32Array([0, 5])), () => f.pushParagraphs(['a'], [0, 1] as never)],
    saveSeen: (f: neardup.ParagraphFilter) => [() => f.saveSeen(bad.notString), () => f.saveSeen('x.seen', { overwrite: 1 as never })],
    addDuplicateNgrams: (f: neardup.ParagraphFilter) => [() => f.addDuplicateNgrams(5 as never), () => f.addDuplicateNgrams([1, 2] as never)],
    loadSeen: (f: neardup.ParagraphFilter) => [() => f.loadSeen(bad.notString)],
  },
  CodeIndex: {
    constructor: () => [() => new CodeIndex({ minTokens: 0 }), () => new CodeIndex({ maxFileBytes: 0 }), () => new CodeIndex(5 as never), () => new CodeIndex({ k: 1.5 })],
    add: (i: neardup.CodeIndex) => [() => i.add(bad.notArray as never), () => i.add([{ text: 'a' }]), () => i.add([{ text: 5 as never, lang: 'c' }]),
      () => i.add([{ path: 'a.js' }, { text: 'x', lang: 'c' }]), () => i.add([{ text: 'a', lang: 'c', group: -1 }]), () => i.add([5 as never])],
    match: (i: neardup.CodeIndex) => [() => i.match(5 as never), () => i.match({ minShared: 2 }), () => i.match({ maxFiles: -1 }), () => i.match({ mergeGap: 0.5 })],
  },
  SubstringFinder: {
    add: (f: neardup.SubstringFinder) => [() => f.add(bad.notArray as never), () => f.add([5 as never])],
    addBatch: (f: neardup.SubstringFinder) => [() => f.addBatch(bad.notArray as never), () => f.addBatch({ data: Buffer.from('ab'), offsets: new Uint32Array([0, 5]) })],
    find: (f: neardup.SubstringFinder) => [() => f.find(5 as never), () => f.find({ minLength: 2 }), () => f.find({ minLength: 1.5 }), () => f.find({ unit: 'word' as never }),
      () => f.find({ unit: 'token', minLength: 0 }),
      () => f.find({ indexPath: 5 as never }), () => f.find({ unit: 'token', indexPath: 'x.subx' })],
  },
};
// TypeScript-private helpers (on the prototype at run time)
const PRIVATE = new Set(['open', 'call', 'checkKey', 'live', 'enqueue', 'addEncoded', 'checkLimits', 'blotsOf', 'docTable', 'extractChunks', 'queryNative', 'keyArray',
  // @internal PostingIndex helpers of PassageIndex and the dupi commands
  'packKeys', 'extractStart', 'extractNext', 'extractEnd', 'setDocIds', 'queryPassages', 'pairsStart', 'pairsNext', 'pairsChunks', 'pairsLinesInto', 'dupiOrder',
  // PassageIndex's writes under its lock (lib/io/index-commit.ts)
  'writing', 'run', 'putParts', 'commitMeta',
  // @internal: the sharded finish asks whether a staged batch is already committed (lib/scale/passages-stages.ts)
  'holdsBatch']);
// methods without arguments (nothing to get wrong) and lifecycle calls
const NO_ARGUMENTS = new Set(['seal', 'size', 'params', 'clusters', 'close', 'compact', 'stats', 'finish', 'commit', 'abort', 'startSecondPass', 'merge', 'keyCounts', 'info', 'commitData', 'largestDocument']);

test('the table covers every export and every public method', () => {
  for (const [name, v] of Object.entries(neardup)) {
    if (NOT_CHECKED.has(name)) continue;
    if (typeof v !== 'function') continue;
    const isClass = /^class\b/.test(Function.prototype.toString.call(v));
    if (isClass) {
      assert.ok(METHODS[name], `class ${name} is not in the table`);
      for (const m of Object.getOwnPropertyNames(v.prototype)) {
        if (m === 'constructor' || NO_ARGUMENTS.has(m) || PRIVATE.has(m)) continue;
        const d = Object.getOwnPropertyDescriptor(v.prototype, m)!;
        if (typeof d.value !== 'function') continue;  // getters
        assert.ok(METHODS[name][m], `${name}.${m} is not in the table`);
      }
      for (const m of Object.getOwnPropertyNames(v)) {
        if (typeof (v as unknown as Record<string, unknown>)[m] === 'function') assert.ok(METHODS[name][m], `static ${name}.${m} is not in the table`);
      }
    } else {
      assert.ok(FUNCTIONS[name], `function ${name} is not in the table`);
    }
  }
});

test('every exported function: bad arguments give ERR_NEARDUP_INVALID_ARGUMENT', async () => {
  const problems: string[] = [];
  for (const [name, calls] of Object.entries(FUNCTIONS)) problems.push(...(await expectInvalid(name, calls)));
  assert.equal(problems, []);
});

test('every class method: bad arguments give ERR_NEARDUP_INVALID_ARGUMENT', async () => {
  const problems: string[] = [];
  let nIndex = 0;
  const make: Record<string, () => { obj: unknown; done: () => void } | Promise<{ obj: unknown; done: () => void }>> = {
    PostingIndex: async () => {
      const d = path.join(dir, `postings-${nIndex++}`);
      PostingIndex.create(d);
      const i = await PostingIndex.open(d);
      return { obj: i, done: () => i.close() };
    },
    PassageIndex: async () => {
      const p = await PassageIndex.open(path.join(dir, `passages-${nIndex++}`), {}, true);
      return { obj: p, done: () => p.close() };
    },
    PostingAppender: async () => {
      const d = path.join(dir, `postings-${nIndex++}`);
      PostingIndex.create(d);
      const i = await PostingIndex.open(d);
      const a = await i.appender();
      return { obj: a, done: () => i.close() };
    },
    ChunkIndex: async () => {
      const i = await ChunkIndex.build(path.join(dir, `chunks-${nIndex++}`), [{ id: 'a', text: 'one two three four five six' }]);
      return { obj: i, done: () => i.close() };
    },
    LshIndex: () => { const i = new LshIndex({ numPerm: 16, b: 4, r: 4 }); return { obj: i, done: () => i.close() }; },
    SimhashIndex: () => { const i = new SimhashIndex(); return { obj: i, done: () => i.close() }; },
    DedupSession: () => { const s = new DedupSession(); return { obj: s, done: () => s.close() }; },
    SignatureWriter: () => { const w = new SignatureWriter(path.join(dir, 'sigs'), { numPerm: 4 }); return { obj: w, done: () => w.abort() }; },
    ParagraphFilter: () => { const f = new ParagraphFilter(); return { obj: f, done: () => f.close() }; },
    DecontaminationIndex: () => { const x = new DecontaminationIndex(); return { obj: x, done: () => x.close() }; },
    ExactDedup: () => { const x = new neardup.ExactDedup(); return { obj: x, done: () => x.close() }; },
    SubstringFinder: () => { const f = new SubstringFinder(); return { obj: f, done: () => f.close() }; },
    CodeIndex: () => { const i = new CodeIndex(); return { obj: i, done: () => i.close() }; },
  };
  for (const [cls, methods] of Object.entries(METHODS)) {
    for (const [m, calls] of Object.entries(methods)) {
      const { obj, done } = await make[cls]();
      try {
        problems.push(...(await expectInvalid(`${cls}.${m}`, calls(obj as never))));
      } finally {
        done();
      }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(problems, []);
});

test.run();
