// The one summary every command of neardup's own writes at the end of a successful run: a JSON object on one
// line, snake_case keys, always with command, version, inputs, documents, seconds, cpu_seconds and
// peak_rss_mb, then the command's counts (docs/cli.md "Summaries"). It goes to stderr, except where a
// command's stdout has always been its summary (dedup, the stage commands), which keeps it there. The seed
// tools' drop-ins (doubri, onion, dupi, simhash's seomoz commands) keep the tools' own output instead.
import { version } from '../util/version';

export interface SummaryBase {
  /** The command as typed after `neardup` ("similar build"). */
  command: string;
  /** The input files as given ('-': standard input). */
  inputs: readonly string[];
  /** Documents (lines) read; null when the command reads none. */
  documents: number | null;
}

/** The summary object: the base fields, the command's own, then seconds (of the command's work when it gives them, else since the process started), cpu_seconds and peak_rss_mb. */
export function summaryObject(base: SummaryBase, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const cpu = process.cpuUsage();
  const o: Record<string, unknown> = { command: base.command, version, inputs: [...base.inputs], documents: base.documents, ...fields };
  if (typeof o.seconds !== 'number') o.seconds = +process.uptime().toFixed(3);
  o.cpu_seconds = +((cpu.user + cpu.system) / 1e6).toFixed(3);
  o.peak_rss_mb = +(process.resourceUsage().maxRSS / 1024).toFixed(1);
  return o;
}

export function writeSummary(base: SummaryBase, fields: Record<string, unknown> = {}, stream: NodeJS.WritableStream = process.stderr): void {
  stream.write(JSON.stringify(summaryObject(base, fields)) + '\n');
}
