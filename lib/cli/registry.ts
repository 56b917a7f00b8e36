// Every CLI command, in the order `neardup --help` lists them. Engines add theirs here.
//
// A command's module is loaded only when it runs (or prints its help): a run loads the code of one command,
// not of all of them, which keeps Node's start-up, a large part of short runs such as `passages extract`, at
// its minimum. `require` (not `import()`) keeps the loading synchronous and off Node's ESM loader.
import type { Command } from './common';

export interface CommandEntry {
  name: string;
  /** The line `neardup --help` shows. */
  summary: string;
  load(): Command;
}

export const commands: CommandEntry[] = [
  {
    name: 'shingles', summary: 'print the shingle hashes of each JSONL line',
    load: () => (require('./commands/shingles') as typeof import('./commands/shingles')).shinglesCommand,
  },
  {
    name: 'minhash', summary: 'MinHash signatures of each JSONL line (fast, doubri-v1 or datasketch profile)',
    load: () => (require('./commands/minhash') as typeof import('./commands/minhash')).minhashCommand,
  },
  {
    name: 'exact', summary: 'remove exact duplicate JSONL lines (the text, normalised or not, or a key field such as a URL)',
    load: () => (require('./commands/exact') as typeof import('./commands/exact')).exactCommand,
  },
  {
    name: 'dedup', summary: 'remove near-duplicate JSONL lines (MinHash LSH), keeping first occurrences',
    load: () => (require('./commands/dedup') as typeof import('./commands/dedup')).dedupCommand,
  },
  {
    name: 'doubri', summary: 'doubri 1.0 drop-in commands (neardup doubri --help)',
    load: () => (require('./commands/doubri') as typeof import('./commands/doubri')).doubriCommand,
  },
  {
    name: 'simhash', summary: 'SimHash fingerprints and pairs within k bits (seomoz simhash drop-ins)',
    load: () => (require('./commands/simhash') as typeof import('./commands/simhash')).simhashCommand,
  },
  {
    name: 'paragraphs', summary: 'remove duplicate paragraphs (Onion semantics) from vertical text, plain text or JSONL',
    load: () => (require('./commands/paragraphs') as typeof import('./commands/paragraphs')).paragraphsCommand,
  },
  {
    name: 'substrings', summary: 'remove repeated substrings of L bytes or more (ExactSubstr: suffix array), keeping first occurrences',
    load: () => (require('./commands/substrings') as typeof import('./commands/substrings')).substringsCommand,
  },
  {
    name: 'onion', summary: 'drop-in for Onion 1.2: mark or strip duplicate paragraphs of vertical text (and its hashgen, hashdup)',
    load: () => (require('./commands/onion') as typeof import('./commands/onion')).onionCommand,
  },
  {
    name: 'dupi', summary: "go-air/dupi's index/extract/like/unblot/blot/inspect on the posting store",
    load: () => (require('./commands/dupi') as typeof import('./commands/dupi')).dupiCommand,
  },
  {
    name: 'passages', summary: 'passages shared between documents: index, extract, query, pairs (posting lists of word windows)',
    load: () => (require('./commands/passages') as typeof import('./commands/passages')).passagesCommand,
  },
  {
    name: 'similar', summary: 'similar documents in a growing archive (chunk similarity, incremental updates, SQLite table)',
    load: () => (require('./commands/similar') as typeof import('./commands/similar')).similarCommand,
  },
  {
    name: 'code', summary: 'copied code between source files or submissions (winnowed token fingerprints, line ranges)',
    load: () => (require('./commands/code') as typeof import('./commands/code')).codeCommand,
  },
  {
    name: 'decontaminate', summary: 'find (and remove) corpus documents that share 13-grams with benchmark files',
    load: () => (require('./commands/decontaminate') as typeof import('./commands/decontaminate')).decontaminateCommand,
  },
  {
    name: 'pipeline', summary: 'a corpus through exact, near-duplicate and substring dedup and decontamination, resumable (docs/pipeline.md)',
    load: () => (require('./commands/pipeline') as typeof import('./commands/pipeline')).pipelineCommand,
  },
  {
    name: 'dedup-stage', summary: 'one task of a sharded dedup (plan, signatures, buckets, verify, clusters, filter, kept): docs/scale.md',
    load: () => (require('./commands/dedup-stage') as typeof import('./commands/dedup-stage')).dedupStageCommand,
  },
  {
    name: 'worker', summary: 'serve sharded dedup stage tasks from a BullMQ queue on Redis (docs/scale.md)',
    load: () => (require('./commands/worker') as typeof import('./commands/worker')).workerCommand,
  },
];
