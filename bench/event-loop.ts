// The longest event-loop stall during dedup(texts, {verify: "exact"}): a 1 ms timer records the largest gap
// between its ticks. Run: node --import tsx bench/event-loop.ts (results: bench/RESULTS.md, "Event loop").
import { dedup } from '../lib/index';
function text(i: number, n: number) { let s = ''; let x = i * 2654435761 >>> 0; while (s.length < n) { x = (x * 1103515245 + 12345) >>> 0; s += 'w' + (x % 5000) + ' '; } return s; }
(async () => {
  for (const [count, size] of [[4096, 8192], [4096, 16384], [8192, 20480]]) {
    const texts = Array.from({ length: count }, (_, i) => text(i % (count / 2), size));
    let last = performance.now(), worst = 0;
    const t = setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; }, 1);
    const t0 = performance.now();
    await dedup(texts, { verify: 'exact' } as never);
    clearInterval(t);
    console.log(`${count} x ${size}: worst stall ${worst.toFixed(0)} ms, total ${(performance.now() - t0).toFixed(0)} ms`);
  }
})();
