/**
 * A job's output as the daemon's `output` method serves it (the files the executor writes:
 * by default `<statedir>/jobs/<ID>/stdout` and `stderr` for the owner's jobs and
 * `<cwd>/jobtap-<ID>.out`/`.err` for a guest's, or the job's `--output`/`--error` paths). Shared by `submit --watch`, `job output` and `job attach`; what the daemon may
 * read is its business, this side only copies what it gets and names the job on a refusal.
 */
import { ErrorCode, isJobtapError, JobtapError } from "../errors.js";
import type { DaemonClient } from "../server/client.js";
import type { CliIO } from "./io.js";

/** How often a follower asks for new output while a job is quiet. */
const POLL_MS = 100;

/**
 * Copies job `id`'s stdout and stderr to ours from the start; with `follow`, polls until
 * the job has ended and everything it wrote is copied (`submit --watch`, `job attach`).
 */
export async function copyOutput(client: DaemonClient, io: CliIO, id: string, follow: boolean): Promise<void> {
  const offsets = { stdout: 0, stderr: 0 };
  for (;;) {
    let ended = false;
    let got = false;
    for (const stream of ["stdout", "stderr"] as const) {
      const r = await read(client, id, stream, offsets[stream], follow);
      offsets[stream] = r.offset;
      // Ended before the first read of this round: both files are complete now.
      if (stream === "stdout") ended = r.done;
      if (r.data.length > 0) {
        got = true;
        (stream === "stdout" ? io.stdout : io.stderr)(r.data);
      }
    }
    // Without follow, a round that read something may have stopped at the reply's size cap.
    if (!got && (ended || !follow)) return;
    if (!got) await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One `output` call. A follower takes BAD_STATE (the job ended without ever starting) as
 *  the end of its output; `job output` reports it. */
async function read(client: DaemonClient, id: string, stream: "stdout" | "stderr", offset: number, follow: boolean) {
  try {
    return await client.call("output", { id, stream, offset });
  } catch (e) {
    if (!isJobtapError(e)) throw e;
    if (follow && e.code === ErrorCode.BAD_STATE) return { data: "", offset, done: true };
    throw new JobtapError(e.code, `cannot read ${id}'s ${stream}: ${e.message}`, e.details);
  }
}
