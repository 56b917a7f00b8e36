// Estimator quality of the fast profile vs exact Jaccard (brute force over char 5-gram sets), next to
// k-permutation MinHash (the datasketch profile), on synthetic pairs. Run: node --import tsx bench/minhash-accuracy.ts
import { minhashSync, signatureAt, estimateJaccard } from '../lib/index';
import { pyShingles } from '../test/reference/minhash';
function rng(seed: number) { let s = seed >>> 0; return () => { s = (s + 0x6d2b79f5) >>> 0; let t = Math.imul(s ^ (s >>> 15), 1 | s); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
const WORDS = Array.from({ length: 3000 }, (_, i) => `w${(i * 7919) % 10007}`);
function pairs(count: number, seed: number, maxn: number) { const r = rng(seed); const out: [string, string][] = []; for (let i = 0; i < count; i++) { const n = 3 + Math.floor(r() ** 2 * maxn); const change = r(); const a: string[] = [], b: string[] = []; for (let j = 0; j < n; j++) { const w = WORDS[Math.floor(r() * WORDS.length)]; a.push(w); b.push(r() < change ? WORDS[Math.floor(r() * WORDS.length)] : w); } out.push([a.join(' '), b.join(' ')]); } return out; }
function J(a: string, b: string) { const sa = new Set(pyShingles(a, 'char', 5, false)), sb = new Set(pyShingles(b, 'char', 5, false)); let i = 0; for (const x of sa) if (sb.has(x)) i++; const u = sa.size + sb.size - i; return u ? i / u : 1; }
for (const [label, ps] of [['mixed 3..800 words', pairs(2000, 7, 800)], ['short 1..12 words', pairs(2000, 8, 10)]] as const) {
  const truth = ps.map(([a, b]) => J(a, b));
  for (const k of [64, 128, 256, 512]) {
    const row: string[] = [];
    for (const [name, o] of [['fast', { profile: 'fast' }], ['k-perm (datasketch)', { profile: 'datasketch', unit: 'char', lowercase: false }]] as const) {
      const r = minhashSync(ps.flat(), { ...(o as object), numPerm: k });
      let s = 0, q = 0, e = 0;
      ps.forEach((_, i) => { const d = estimateJaccard(signatureAt(r, 2 * i), signatureAt(r, 2 * i + 1)) - truth[i]; s += d; q += d * d; e += truth[i] * (1 - truth[i]) / k; });
      row.push(`${name}: bias ${(s / ps.length).toFixed(4)} rmse ${Math.sqrt(q / ps.length).toFixed(4)} mse/ideal ${(q / e).toFixed(2)}`);
    }
    console.log(`${label} k=${k} | ${row.join(' | ')}`);
  }
}
