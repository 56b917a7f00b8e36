// neardup: duplicate and near-duplicate detection for large text collections.
export { NeardupError, type NeardupErrorCode } from './errors';
export {
  shingleHashes, shingleHashesSync, packTexts,
  type ShingleOptions, type ShingleHashOptions, type ShingleHashKind, type ShingleHashResult,
  type TextInput, type PackedTexts,
} from './shingles';
export {
  ParagraphFilter, dedupVertical,
  type ParagraphFilterOptions, type ParagraphFilterStats, type VerticalChunkResult, type ParagraphResult,
} from './paragraphs';
export { getThreads, setThreads, runtimeInfo } from './runtime';
export { version } from './version';
