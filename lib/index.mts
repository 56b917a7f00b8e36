// ESM entry: the same single instance as the CommonJS build (no dual-package hazard).
import cjs from './index.js';

export const {
  NeardupError, shingleHashes, shingleHashesSync, packTexts, getThreads, setThreads, runtimeInfo, version,
  ParagraphFilter, dedupVertical,
} = cjs;
export type * from './index.js';
