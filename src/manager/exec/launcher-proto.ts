/**
 * The privileged launcher's channel: newline-separated JSON on the launcher's stdin (the
 * daemon's requests) and stdout (its answers), pipes inherited at spawn and never a path in
 * the filesystem. One line per message, each well under PIPE_BUF, so a line written by a
 * launcher that then dies is whole or absent.
 *
 * After a (re)start the launcher ignores its input until a `sync` line: bytes a dead
 * launcher had not consumed are stale, and the daemon failed their requests already.
 */

/** The daemon to the launcher. `req` numbers a start; answers carry it back. */
export type LauncherRequest =
  | { op: "sync"; n: number }
  | { op: "authorise"; job: string; uid: number }
  | { op: "forget"; job: string }
  | {
      op: "start";
      req: number;
      job: string;
      uid: number;
      argv: string[];
      cwd: string;
      env: Record<string, string>;
      stdout: string;
      stderr: string;
      umask?: number;
      stdin?: string;
    }
  | {
      op: "hook";
      req: number;
      /** The job the hook is for (f58); "" for a root hook (perilog). */
      job: string;
      uid: number;
      path: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      /** stdin bytes, base64. */
      stdin?: string;
      /** Bytes of each stream sent back; null: all of it. */
      caps: { stdout: number | null; stderr: number };
    }
  | { op: "signal"; pid: number; starttime: number | undefined; signal: string | number }
  | { op: "adopt"; job: string; uid: number; tasks: Array<{ pid: number; starttime: number }> };

/** The launcher (or its keeper) to the daemon. */
export type LauncherAnswer =
  | { op: "launcher"; pid: number }
  | { op: "died"; pid: number; why: string }
  | { op: "synced"; n: number }
  | { op: "spawned"; req: number; pid: number; starttime: number | undefined }
  | { op: "error"; req: number; message: string; code?: string }
  | { op: "setup"; req: number; why: string }
  | { op: "exit"; req: number; code: number | null; signal: string | null }
  /** A hook's output (base64, at most OUT_CHUNK bytes a line), its end, and its pipes closed. */
  | { op: "out"; req: number; stream: "stdout" | "stderr"; data: string }
  | { op: "hookexit"; req: number; code: number | null; signal: string | null }
  | { op: "closed"; req: number; dropped: { stdout: number; stderr: number } }
  | { op: "log"; level: "info" | "warn" | "error"; message: string };

/** Raw bytes of hook output per `out` line: base64 keeps the line well under PIPE_BUF. */
export const OUT_CHUNK = 2048;

/** Splits a byte stream into lines; calls `line` for each complete one. */
export function lineReader(line: (text: string) => void): (chunk: Buffer | string) => void {
  let rest = "";
  return (chunk) => {
    rest += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    let at: number;
    while ((at = rest.indexOf("\n")) >= 0) {
      const text = rest.slice(0, at);
      rest = rest.slice(at + 1);
      if (text !== "") line(text);
    }
  };
}

/** Parses one line; undefined when it is not a JSON object with a string `op`. */
export function parseMessage<T extends { op: string }>(text: string): T | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && typeof (v as { op?: unknown }).op === "string" ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}
