// neardup: duplicate and near-duplicate detection for large text collections.
export { NeardupError, type NeardupErrorCode } from './errors';
export {
  shingleHashes, shingleHashesSync, packTexts,
  type ShingleOptions, type ShingleHashOptions, type ShingleHashKind, type ShingleHashResult,
  type TextInput, type PackedTexts,
} from './shingles';
export {
  minhash, minhashSync, minhashOfShingles, minhashStream, datasketchPermutations, signatureAt, estimateJaccard,
  SignatureWriter, readSignatureFile,
  type MinHashOptions, type MinHashProfile, type MinHashResult, type SignatureFile, type SignatureFileFormat,
} from './minhash';
export { getThreads, setThreads, runtimeInfo } from './runtime';
export { version } from './version';
