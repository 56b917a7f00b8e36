// neardup: duplicate and near-duplicate detection for large text collections.
export { NeardupError, type NeardupErrorCode } from './util/errors';
export {
  shingleHashes, shingleHashesSync, packTexts, normalizeTextSync, NORMALIZE_FORMS, WORD_SPLITS, CLUSTER_UNITS,
  type NormalizeForm, type WordSplit, type ClusterUnit, type ShingleOptions, type ShingleHashOptions, type ShingleHashKind, type ShingleHashResult,
  type TextInput, type PackedTexts, type ShingleHash32Options, type ShingleHash64Options,
} from './text/shingles';
export {
  LshIndex, DEFAULT_MAX_RESULTS, optimalParam, optimalParamAsync, recallParam, collisionProbability, type LshParams, type LshProfile,
  type LshKey, type LshKeys, type LshKeyType, type LshIndexInfo,
} from './minhash/lsh';
export {
  dedup, DedupSession, INDEX_REPRESENTATIVE, type DedupOptions, type DedupCallOptions, type DedupResult, type DedupProfile, type DedupVerify,
} from './minhash/dedup';
export { type DedupIndexKeys, type DedupIndexMeta, type DedupSettingsJson } from './minhash/dedup-index';
export type { DocumentInput, DocumentSource, BatchProgress, LongCallOptions } from './io/batching';
export { doubriSelf, doubriOther, type DoubriStats } from './minhash/doubri-dedup';
export {
  simhashFingerprints, simhashFingerprintsSync, simhashCompute, hammingDistance, pickSimhashBlocks, simhashFindAll,
  simhashFindAllSync, simhashFindAllStream, SimhashIndex,
  type SimhashOptions, type SimhashFindAllOptions, type SimhashFindAllStreamOptions, type SimhashFindAllResult, type SimhashIndexOptions,
  type SimhashIndexStats, type SimhashFirstMatches, type SimhashAllMatches, type U64Input,
} from './simhash/simhash';
export {
  minhash, minhashSync, minhashOfShingles, minhashStream, datasketchPermutations, signatureAt, estimateJaccard,
  SignatureWriter, readSignatureFile,
  type MinHashOptions, type MinHashProfile, type MinHashResult, type SignatureFile, type SignatureFileFormat,
} from './minhash/minhash';
export {
  ParagraphFilter, dedupVertical,
  type ParagraphFilterOptions, type ParagraphFilterStats, type VerticalChunkResult, type ParagraphResult,
} from './filter/paragraphs';
export {
  ExactDedup, exactDuplicates, normalizeUrl, URL_RULES, URL_DEFAULT_RULES,
  type ExactDedupOptions, type ExactDedupResult, type UrlRule,
} from './exact/exact';
export {
  DecontaminationIndex, addBenchmarkFiles, benchmarkRow,
  type DecontaminationOptions, type DecontaminationProbeOptions, type DecontaminationProbe, type DecontaminationStats,
  type Contamination, type BenchmarkFile, type BenchmarkFileOptions, type BenchmarkFormat,
} from './filter/decontaminate';
export {
  SubstringFinder, removeSpans, removeRepeatedSubstrings, countSubstrings, type SubstringOptions, type SubstringSpans,
} from './substr/substrings';
export {
  CodeIndex, findCopiedCode, codeTokens, languageOf, winnowParameters, CODE_LANGUAGES, CODE_EXTENSIONS,
  type CodeIndexOptions, type CodeMatchOptions, type CodeSource, type CodeSourceState, type CodeRegion, type CodePair,
  type CodeMatches, type CodeLanguage, type CodeToken, type CodeTokenKind,
} from './code/code';
export { getThreads, setThreads, runtimeInfo } from './native/runtime';
export { version } from './util/version';
// The CLI's input layer: JSONL (plain, gzip, zstd) and Parquet, line-aligned batches of packed UTF-8 parsed on
// the native pool (readDocuments), or of strings (readJsonl); bad lines reported with file:line.
export { readJsonl, type JsonlOptions, type JsonlBatch } from './io/jsonl';
export {
  readDocuments, sniffInput, type ReadDocumentsOptions, type DocumentBatch, type DocumentIds, type OnBadLine,
  type InputFormat, type InputCompression,
} from './io/input';
export {
  PostingIndex, blot, type BlotOptions, type BlotProfile, type WindowHash, type BlotResult, type PostingIndexInfo,
  type AppendOptions, type AppendTextsOptions, PostingAppender, type AppenderOptions, type KeyList,
} from './postings/postings';
export { PassageIndex, type PairSummary, type PairsOptions, type Passage, type PassageDoc, type QueryMatch, type QueryPassage, type PassageIndexOptions } from './postings/passages';
export {
  ChunkIndex, stages as chunkStages, chunkIds,
  type ChunkDocument, type ChunkOptions, type ChunkIndexOptions, type DocId, type SimilarEntry, type UpdateSummary,
  type RunOptions as ChunkRunOptions,
} from './chunks/chunks';
