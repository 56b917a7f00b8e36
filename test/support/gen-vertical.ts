// Generated vertical text for the paragraph-dedup tests (seeded, deterministic).
import { rng } from '../reference/random';

/** Random vertical text (tags, TAB columns, empty paragraphs, text outside tags, near-repeats); lines without \n. */
export function generate(seed: number, docs: number, longDoc = 0): string[] {
  const r = rng(seed);
  const vocab = Array.from({ length: 40 }, (_, i) => (i % 5 === 0 ? `w${i}\tW${i}\tx` : `w${i}`));
  vocab.push('', '&lt;', 'a b');
  const pool: string[][][] = [];
  const lines: string[] = [];
  const para = (len: number) => Array.from({ length: len }, () => vocab[Math.floor(r() * r() * vocab.length)]);
  for (let d = 0; d < docs; d++) {
    let paras: string[][];
    if (pool.length && r() < 0.35) {
      paras = pool[Math.floor(r() * pool.length)].map((p) => (r() < 0.2 ? para(p.length) : r() < 0.2 ? p.slice(1) : p));
    } else {
      const np = 1 + Math.floor(r() * 6);
      paras = Array.from({ length: np }, () => para(r() < 0.3 ? Math.floor(r() * 4) : Math.floor(r() * 30)));
    }
    if (d === 3 && longDoc) paras = [para(longDoc), para(longDoc / 2)];
    pool.push(paras);
    const kind = r();
    if (kind < 0.1) {
      // text outside any tag
      for (const p of paras) lines.push(...p);
      continue;
    }
    lines.push(r() < 0.5 ? `<doc id="d${d}">` : '<doc>');
    if (r() < 0.2) lines.push(...para(3)); // tokens before the first <p>
    for (const p of paras) {
      if (r() < 0.1) { lines.push(...p); continue; } // paragraph without tags
      lines.push(r() < 0.5 ? '<p>' : '<p class="x">');
      for (const t of p) {
        lines.push(t);
        if (r() < 0.03) lines.push('<g/>');
      }
      if (r() < 0.9) lines.push('</p>');
      if (r() < 0.1) lines.push('<p>', '</p>'); // an empty paragraph
    }
    if (r() < 0.9) lines.push('</doc>');
  }
  return lines;
}
