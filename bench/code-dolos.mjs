// Runs Dolos (the library @dodona/dolos-lib, installed OUTSIDE this project: npm install @dodona/dolos-lib in a
// temporary folder) on a list of files, for bench/code.ts's side-by-side table; prints one JSON line:
// { files, pairs, pairs_with_shared (similarity > 0), pairs_half (similarity >= 0.5), seconds }. Its defaults are kept (k-grams of 23 tokens, windows of 17; no fingerprint cap).
//   node bench/code-dolos.mjs DOLOS_LIB_DIR LIST_FILE LANGUAGE
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const [libDir, list, language] = process.argv.slice(2);
const { Dolos } = await import(pathToFileURL(path.join(libDir, 'dist', 'index.js')).href);
const files = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean);
const t0 = Date.now();
const dolos = new Dolos({ language });
const report = await dolos.analyzePaths(files);
const pairs = report.allPairs();
const shared = pairs.filter((p) => p.similarity > 0).length;
const half = pairs.filter((p) => p.similarity >= 0.5).length;
console.log(JSON.stringify({ files: report.files.length, pairs: pairs.length, pairs_with_shared: shared, pairs_half: half, seconds: (Date.now() - t0) / 1000 }));
