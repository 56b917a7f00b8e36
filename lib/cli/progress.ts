// Progress on stderr, in one of four modes (--progress, NEARDUP_PROGRESS):
//   auto  the bar on a terminal; JSON lines when stderr is a pipe or a file (a batch job's log)
//   tty   the bar, also off a terminal
//   json  one JSON object a line, at most one every 10 s (NEARDUP_PROGRESS_INTERVAL: seconds, for tests)
//   none  nothing
// The bar is redrawn at most 5 times a second. A JSON line: {"progress": LABEL, "stage"?, "documents"?,
// "bytes"?, "bytes_total"?, "fraction"?, "rate_bytes_per_s"?, "rate_docs_per_s"?, "eta_seconds"?,
// "seconds", "peak_rss_mb"} (docs/cli.md); none is written before the first interval has passed, so a short
// run writes none, and a run that wrote one ends with a last line marked "done": true.
import { progressMode } from '../util/progress-mode';

export { checkProgressEnv, progressMode, setProgressMode, type ProgressMode } from '../util/progress-mode';

export interface ProgressFields {
  bytes?: number;
  docs?: number;
  total?: number;
  fraction?: number;
  extra?: string;
  /** Records written so far, for commands whose work is their output (passages pairs|extract, simhash find-all's pairs). */
  written?: number;
}

export class Progress {
  private readonly mode: 'bar' | 'json' | 'none';
  private last = 0;
  private readonly start = Date.now();
  private shown = false;
  private readonly interval: number;
  private latest: ProgressFields = {};

  /**
   * enabled: false silences it whatever the mode (a command whose stderr is its output, -q). dropIn: a seed
   * tool's drop-in command keeps the tool's standard error in auto mode off a terminal (no JSON lines unless
   * --progress json asks for them).
   */
  constructor(
    private readonly label: string,
    enabled = true,
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
    dropIn = false,
  ) {
    const m = progressMode();
    this.mode = !enabled || m === 'none' ? 'none' : m === 'tty' || (m === 'auto' && stream.isTTY) ? 'bar' : m === 'auto' && dropIn ? 'none' : 'json';
    const env = Number(process.env.NEARDUP_PROGRESS_INTERVAL);
    this.interval = this.mode === 'bar' ? 200 : env > 0 ? env * 1000 : 10_000;
  }

  /**
   * fraction: how much of the input is done (0..1) when its size is known: shown as a percentage with the
   * estimated time left (from the rate so far).
   */
  update(fields: ProgressFields, force = false): void {
    if (this.mode === 'none') return;
    this.latest = fields;
    const now = Date.now();
    if (this.mode === 'json') {
      // the first line only after one interval: a short run stays quiet
      if (now - Math.max(this.last, this.start) < this.interval) return;
      this.last = now;
      this.writeJson(fields, now, false);
      return;
    }
    if (!force && now - this.last < this.interval) return;
    this.last = now;
    const secs = Math.max((now - this.start) / 1000, 1e-3);
    const parts: string[] = [this.label];
    if (fields.bytes !== undefined) {
      parts.push(`${formatBytes(fields.bytes)}${fields.total ? ` / ${formatBytes(fields.total)}` : ''}`);
      parts.push(`${formatBytes(fields.bytes / secs)}/s`);
    }
    if (fields.docs !== undefined) parts.push(`${fields.docs.toLocaleString('en-US')} docs`);
    if (fields.fraction !== undefined) parts.push(percentEta(fields.fraction, secs));
    if (fields.written !== undefined) parts.push(`${fields.written.toLocaleString('en-US')} written`);
    if (fields.extra) parts.push(fields.extra);
    this.stream.write(`\r\x1b[K${parts.join('  ')}`);
    this.shown = true;
  }

  /** Clears the bar; in JSON mode, a run that wrote a line ends with one marked done (with `final`'s counts when given). */
  done(final?: ProgressFields): void {
    if (this.mode === 'bar' && this.shown) this.stream.write('\r\x1b[K');
    if (this.mode === 'json' && this.shown) this.writeJson(final ?? this.latest, Date.now(), true);
    this.shown = false;
  }

  private writeJson(f: ProgressFields, now: number, done: boolean): void {
    const secs = Math.max((now - this.start) / 1000, 1e-3);
    const o: Record<string, unknown> = { progress: this.label };
    if (f.extra) o.stage = f.extra;
    if (f.docs !== undefined) o.documents = f.docs;
    if (f.bytes !== undefined) o.bytes = f.bytes;
    if (f.total) o.bytes_total = f.total;
    const fraction = f.fraction ?? (f.bytes !== undefined && f.total ? f.bytes / f.total : undefined);
    if (fraction !== undefined) o.fraction = +Math.min(Math.max(fraction, 0), 1).toFixed(4);
    if (f.written !== undefined) o.written = f.written;
    if (f.bytes !== undefined) o.rate_bytes_per_s = Math.round(f.bytes / secs);
    if (f.docs !== undefined) o.rate_docs_per_s = Math.round(f.docs / secs);
    if (!done && fraction !== undefined && fraction >= 0.01 && fraction < 1) o.eta_seconds = Math.round((secs * (1 - fraction)) / fraction);
    o.seconds = +secs.toFixed(1);
    o.peak_rss_mb = +(process.resourceUsage().maxRSS / 1024).toFixed(1);
    if (done) o.done = true;
    this.stream.write(JSON.stringify(o) + '\n');
    this.shown = true;
  }
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** "42.0%  ETA 1m05s" (no ETA before 1% or with nothing done yet). */
export function percentEta(fraction: number, elapsedSeconds: number): string {
  const f = Math.min(Math.max(fraction, 0), 1);
  const pct = `${(f * 100).toFixed(1)}%`;
  if (f < 0.01 || f >= 1) return pct;
  return `${pct}  ETA ${formatDuration((elapsedSeconds * (1 - f)) / f)}`;
}

export function formatDuration(s: number): string {
  const t = Math.round(s);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, '0')}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}m`;
}
