/**
 * The one-line progress bar of `submit --progress` (`flux submit --progress`): jobs done
 * out of the total, a bar, and the elapsed time or, with `--jps`, the jobs per second. It
 * redraws in place with a carriage return, fits the window's width, and draws nothing when
 * stdout is not a terminal.
 */
import type { CliIO } from "./io.js";
import { ESC, fit } from "./terminal.js";

/** A progress line for `total` jobs; `what` names the count ("submitted", "done"). */
export class ProgressBar {
  private readonly t0 = Date.now();
  private count = 0;
  private last = 0;

  constructor(
    private readonly io: CliIO,
    private readonly total: number,
    private readonly jps: boolean,
    private readonly what: string,
  ) {}

  /** True when anything is drawn (stdout is a terminal). */
  get visible(): boolean {
    return this.io.terminal !== undefined;
  }

  /** `n` more jobs are done; redraws at most every 50 ms, and always at the end. */
  advance(n = 1): void {
    this.count += n;
    const now = Date.now();
    if (this.count < this.total && now - this.last < 50) return;
    this.last = now;
    this.draw();
  }

  /** Removes the line (before printing something else); `advance` draws it again. */
  clear(): void {
    if (this.visible) this.io.stdout(`\r${ESC.clearLine}`);
  }

  /** Leaves the final line on the screen. */
  finish(): void {
    if (!this.visible) return;
    this.draw();
    this.io.stdout("\n");
  }

  /** The text of the line at `columns` columns. */
  line(columns: number, elapsedMs = Date.now() - this.t0): string {
    const width = String(this.total).length;
    const head = `${String(this.count).padStart(width)}/${this.total} ${this.what}`;
    const seconds = elapsedMs / 1000;
    const tail = this.jps ? `${(seconds > 0 ? this.count / seconds : 0).toFixed(1)} job/s` : elapsedText(seconds);
    const room = columns - head.length - tail.length - 4;
    if (room < 5) return fit(`${head} ${tail}`, columns);
    const filled = Math.round((room * this.count) / Math.max(1, this.total));
    return `${head} [${"#".repeat(filled)}${" ".repeat(room - filled)}] ${tail}`;
  }

  private draw(): void {
    const term = this.io.terminal;
    if (term === undefined) return;
    this.io.stdout(`\r${ESC.clearLine}${this.line(term.size().columns - 1)}`);
  }
}

/** `h:mm:ss` of elapsed seconds. */
function elapsedText(seconds: number): string {
  const s = Math.floor(seconds);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}
