// ESM entry: the same single instance as the CommonJS build (no dual-package hazard). Re-exported by name, not
// re-declared as consts: classes stay classes (usable as types, documented on hover) and functions keep their
// overloads. Node finds these names in the CommonJS build statically; test/package.test.ts checks that the two
// entry points export the same names, so a name added to index.ts must be added here too.
export {
  NeardupError, shingleHashes, shingleHashesSync, packTexts, normalizeTextSync, NORMALIZE_FORMS, WORD_SPLITS, CLUSTER_UNITS, getThreads, setThreads, runtimeInfo, version,
  doubriSelf, doubriOther, LshIndex, DEFAULT_MAX_RESULTS, optimalParam, optimalParamAsync, recallParam, collisionProbability, dedup, DedupSession, INDEX_REPRESENTATIVE,
  simhashFingerprints, simhashFingerprintsSync, simhashCompute, hammingDistance, pickSimhashBlocks, simhashFindAll,
  simhashFindAllSync, simhashFindAllStream, SimhashIndex,
  minhash, minhashSync, minhashOfShingles, minhashStream, datasketchPermutations, signatureAt, estimateJaccard,
  SignatureWriter, readSignatureFile,
  ParagraphFilter, dedupVertical,
  ExactDedup, exactDuplicates, normalizeUrl, URL_RULES, URL_DEFAULT_RULES,
  DecontaminationIndex, addBenchmarkFiles, benchmarkRow,
  SubstringFinder, removeSpans, removeRepeatedSubstrings, countSubstrings,
  CodeIndex, findCopiedCode, codeTokens, languageOf, winnowParameters, CODE_LANGUAGES, CODE_EXTENSIONS,
  readJsonl, readDocuments, sniffInput,
  PostingIndex, PostingAppender, blot, PassageIndex,
  ChunkIndex, chunkStages, chunkIds,
} from './index.js';
export type * from './index.js';
