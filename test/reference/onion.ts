// A small, slow, obviously-correct model of Onion 1.2's paragraph dedup (used only by tests).
// n-grams are kept as exact strings (token lines joined by '\u0000'), so it has no hash collisions and no
// false positives: it is the truth that native exact mode is compared with.

export interface RefOptions {
  n?: number;
  threshold?: number;
  smoothing?: boolean;
  maxStub?: number;
  withinDocument?: boolean;
  keepUniqueShort?: boolean;
}

/**
 * Drop-all needs two passes: 'collect' decides as 'keep-first' and also adds to `repeated` the seen n-grams
 * of every paragraph that is a duplicate by its coverage (before smoothing); 'drop-all' then decides with
 * "seen" meaning "in `repeated`" (no within-document repeats, nothing added).
 */
export type RefPhase = 'keep-first' | 'collect' | 'drop-all';

/** Decides one document given as paragraphs of tokens; updates `seen`. Returns per-paragraph dup flags. */
export function refDocument(paras: string[][], seen: Set<string>, o: RefOptions, phase: RefPhase = 'keep-first',
  repeated: Set<string> = new Set()): { dup: boolean[]; removed: boolean } {
  const n = o.n ?? 7;
  const t = Math.fround(o.threshold ?? 0.5);
  const toks: string[] = [];
  const parOf: number[] = [];
  paras.forEach((p, i) => p.forEach((tok) => { toks.push(tok); parOf.push(i); }));
  const bad = new Array<boolean>(toks.length).fill(false);
  const local = new Set<string>();
  const grams: { end: number; key: string; inGlobal: boolean; isSeen: boolean }[] = [];
  for (let i = n - 1; i < toks.length; i++) {
    const key = toks.slice(i - n + 1, i + 1).join('\u0000');
    const inGlobal = phase === 'drop-all' ? repeated.has(key) : seen.has(key);
    const isSeen = inGlobal || (phase !== 'drop-all' && (o.withinDocument ?? true) && local.has(key));
    local.add(key);
    grams.push({ end: i, key, inGlobal, isSeen });
    if (isSeen) for (let j = i - n + 1; j <= i; j++) if (parOf[j] === parOf[i]) bad[j] = true;
  }
  const total = paras.map((p) => p.length);
  const nbad = paras.map(() => 0);
  bad.forEach((b, j) => { if (b) nbad[parOf[j]]++; });
  const dup = paras.map((_, k) => total[k] > 0 && nbad[k] / total[k] > t);
  if (phase === 'collect') for (const g of grams) if (g.isSeen && dup[parOf[g.end]]) repeated.add(g.key);
  if (o.smoothing ?? true) {
    const L = o.maxStub ?? 20;
    for (let k = 0; k < dup.length;) {
      if (dup[k]) { k++; continue; }
      let j = k, s = 0;
      while (j < dup.length && !dup[j]) s += total[j++];
      const whole = k === 0 && j === dup.length;
      if (s <= L && !(whole && o.keepUniqueShort)) for (let q = k; q < j; q++) dup[q] = true;
      k = j;
    }
  }
  const withTokens = dup.filter((_, k) => total[k] > 0);
  const removed = dup.some((d) => d) && withTokens.every((d) => d);
  if (phase !== 'drop-all') for (const g of grams) if (!dup[parOf[g.end]] && !g.inGlobal) seen.add(g.key);
  return { dup, removed };
}

/** Onion over vertical text: one flag per line (1 = removed). `lines` are the lines without '\n'. */
export function refVertical(lines: string[], o: RefOptions & { dropAll?: boolean } = {}, tags = { doc: 'doc', par: 'p' }): number[] {
  const open = (l: string, name: string) => l.startsWith(`<${name}>`) || l.startsWith(`<${name} `);
  const docs: number[][][] = [];
  let doc: number[][] | null = null;
  let par: number[] | null = null;
  let newDoc = true, newPar = true;
  lines.forEach((l, i) => {
    if (open(l, tags.doc)) newDoc = true;
    if (open(l, tags.par)) newPar = true;
    if (newDoc || doc === null) { doc = []; docs.push(doc); newDoc = false; newPar = true; }
    if (newPar) { par = []; doc.push(par); newPar = false; }
    par!.push(i);
    if (l.startsWith(`</${tags.doc}>`)) newDoc = true;
    if (l.startsWith(`</${tags.par}>`)) newPar = true;
  });
  const seen = new Set<string>();
  const repeated = new Set<string>();
  const flags = new Array<number>(lines.length).fill(0);
  const parasOf = (d: number[][]) => d.map((p) => p.filter((i) => !lines[i].startsWith('<')).map((i) => lines[i]));
  if (o.dropAll) for (const d of docs) refDocument(parasOf(d), seen, o, 'collect', repeated);
  for (const d of docs) {
    const paras = parasOf(d);
    const { dup, removed } = refDocument(paras, seen, o, o.dropAll ? 'drop-all' : 'keep-first', repeated);
    d.forEach((p, k) => p.forEach((i) => {
      const tag = open(lines[i], tags.doc) || lines[i].startsWith(`</${tags.doc}>`);
      flags[i] = removed ? 1 : tag ? 0 : dup[k] ? 1 : 0;
    }));
  }
  return flags;
}
