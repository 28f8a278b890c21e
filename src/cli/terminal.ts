/**
 * The interactive terminal a command may draw on (`jobtap top`, `submit --progress`). It is
 * present in CliIO only when stdout is a TTY, so every caller degrades to plain output when
 * it is piped, redirected or run without a terminal (cron, ssh without -t).
 */

/** A terminal: its size, keypresses, and notice of resize and hang-up. */
export interface Terminal {
  /** Columns and rows now (they change when the window is resized). */
  size(): { columns: number; rows: number };
  /** Raw keypresses (stdin in raw mode while anyone listens); returns the unsubscribe. */
  onKey(fn: (key: string) => void): () => void;
  onResize(fn: () => void): () => void;
  /** The terminal went away (SIGHUP, stdout or stdin closed): stop drawing. */
  onHangup(fn: () => void): () => void;
}

/** Escape sequences used to draw in place. */
export const ESC = {
  altScreen: "\x1b[?1049h",
  mainScreen: "\x1b[?1049l",
  hideCursor: "\x1b[?25l",
  showCursor: "\x1b[?25h",
  home: "\x1b[H",
  clearLine: "\x1b[2K",
  clearBelow: "\x1b[J",
} as const;

/** The process's terminal, or undefined when stdout is not a TTY. */
export function processTerminal(): Terminal | undefined {
  const out = process.stdout;
  if (!out.isTTY) return undefined;
  const stdin = process.stdin;
  return {
    size: () => ({ columns: out.columns || 80, rows: out.rows || 24 }),
    onKey(fn) {
      if (!stdin.isTTY) return () => undefined;
      const on = (d: Buffer) => fn(d.toString("utf8"));
      stdin.setRawMode(true);
      stdin.resume();
      stdin.on("data", on);
      return () => {
        stdin.off("data", on);
        try {
          if (stdin.isTTY) stdin.setRawMode(false);
        } catch {
          // The terminal is gone (EIO): there is no mode left to restore.
        }
        stdin.pause();
      };
    },
    onResize(fn) {
      out.on("resize", fn);
      return () => void out.off("resize", fn);
    },
    onHangup(fn) {
      const once = () => fn();
      process.on("SIGHUP", once);
      out.on("error", once);
      stdin.on("end", once);
      return () => {
        process.off("SIGHUP", once);
        out.off("error", once);
        stdin.off("end", once);
      };
    },
  };
}

/** `text` cut to `width` columns (jobtap's output is ASCII plus a few one-column symbols). */
export function fit(text: string, width: number): string {
  return text.length > width ? text.slice(0, Math.max(0, width)) : text;
}
