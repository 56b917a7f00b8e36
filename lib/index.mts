// ESM entry: the same single instance as the CommonJS build (no dual-package hazard).
import cjs from './index.js';

export const {
  NeardupError, shingleHashes, shingleHashesSync, packTexts, getThreads, setThreads, runtimeInfo, version,
  doubriSelf, doubriOther, LshIndex, DEFAULT_MAX_RESULTS, optimalParam, optimalParamAsync, recallParam, collisionProbability, dedup, DedupSession,
  simhashFingerprints, simhashFingerprintsSync, simhashCompute, hammingDistance, pickSimhashBlocks, simhashFindAll,
  simhashFindAllSync, SimhashIndex,
  minhash, minhashSync, minhashOfShingles, minhashStream, datasketchPermutations, signatureAt, estimateJaccard,
  SignatureWriter, readSignatureFile,
  ParagraphFilter, dedupVertical,
} = cjs;
export type * from './index.js';
