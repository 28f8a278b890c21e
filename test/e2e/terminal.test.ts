/**
 * `jobtap top` and `submit --progress` in a real pseudo-terminal: each runs in its own tmux
 * session (tmux is the terminal), and the assertions read what the screen shows through
 * `tmux capture-pane`. Without a terminal both degrade to plain output.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, DaemonUnderTest, requireBuild, waitFor } from "./harness.js";

const sessions: string[] = [];
let seq = 0;

function tmux(...args: string[]): string {
  return execFileSync("tmux", args, { encoding: "utf8" });
}

/** Starts `shell` in a new detached session of the given size; returns the session name. */
function session(d: DaemonUnderTest, columns: number, rows: number, shell: string): string {
  const name = `jobtap-test-${process.pid}-${++seq}`;
  tmux("new-session", "-d", "-x", String(columns), "-y", String(rows), "-s", name, "-e", `JOBTAP_SOCKET=${d.socket}`, shell);
  sessions.push(name);
  return name;
}

const screen = (name: string) => tmux("capture-pane", "-p", "-t", name);
const cli = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;

async function shows(name: string, re: RegExp, what: string): Promise<string> {
  let last = "";
  try {
    await waitFor(() => re.test((last = screen(name))), 30_000, what);
  } catch (e) {
    throw new Error(`${(e as Error).message}; the screen:\n${last}`);
  }
  return last;
}

describe("in a terminal (tmux)", { timeout: 120_000 }, () => {
  let d: DaemonUnderTest;
  beforeAll(async () => {
    requireBuild();
    if (spawnSync("tmux", ["-V"]).status !== 0) throw new Error("tmux is required for these tests (.ci/run installs it)");
    d = new DaemonUnderTest();
    await d.start();
  }, 60_000);
  afterEach(() => {
    for (const s of sessions.splice(0)) spawnSync("tmux", ["kill-session", "-t", s]);
  });
  afterAll(async () => {
    await d?.dispose();
  });

  // Long test-executor jobs: released ones stay in RUN, so they stay on the screen.
  const submit = (...args: string[]) => d.cli(["submit", "--setattr", "exec.test.run_duration=1h", ...args]).stdout.trim();

  it("top redraws in place, sorted by priority, and quits on q", async () => {
    const held = submit("--urgency", "0", "true");
    const normal = submit("--urgency", "0", "true");
    d.cli(["urgency", normal, "16"]);
    const s = session(d, 80, 24, `${cli} top --interval 0.2; echo TOP-EXIT=$?; sleep 60`);
    let text = await shows(s, new RegExp(`${normal}[\\s\\S]*${held}`), "both jobs, the priority-16 one first");
    expect(text).toMatch(/^jobtap top {2}\d+ pending {2}\d+ running {2}\(q quits, j\/k select\)/);
    expect(text).toMatch(/JOBID/);
    const expedited = submit("--urgency", "31", "true");
    text = await shows(s, new RegExp(`${expedited}[\\s\\S]*${normal}[\\s\\S]*${held}`), "the new expedited job on top");
    expect(text.match(/jobtap top/g)).toHaveLength(1); // redrawn in place, not scrolled
    // j moves the selection down: the held job (third) shows its first `job why` reason.
    tmux("send-keys", "-t", s, "j");
    tmux("send-keys", "-t", s, "j");
    await shows(s, new RegExp(`why ${held}: held \\(urgency 0\\) by `), "the held job's reason");
    tmux("send-keys", "-t", s, "q");
    text = await shows(s, /TOP-EXIT=0/, "top to quit");
    expect(text).not.toMatch(/JOBID/); // the alternate screen is gone
    d.cli(["cancel", held, normal, expedited]);
  });

  it("top survives a 20-column terminal and a terminal that closes; the daemon carries on", async () => {
    const id = submit("--urgency", "0", "true");
    const s = session(d, 20, 8, `${cli} top --interval 0.2`);
    const text = await shows(s, new RegExp(id), "the job in a narrow window");
    expect(text.split("\n").every((l) => l.length <= 20)).toBe(true);
    const pid = Number(tmux("display-message", "-p", "-t", s, "#{pane_pid}").trim());
    spawnSync("tmux", ["kill-session", "-t", s]);
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 20_000, "top to exit when its terminal closed");
    expect(d.cli(["jobs"]).status).toBe(0);
    d.cli(["cancel", id]);
  });

  it("submit --watch whose terminal closes exits; the job runs on and the daemon carries on", async () => {
    const loop = "while :; do echo tick; sleep 0.1; done";
    const s = session(d, 40, 8, `${cli} submit --watch sh -c '${loop}'`);
    const text = await shows(s, /^(\S+)\n(tick\n)+/m, "the job id, then its output");
    const id = (text.split("\n")[0] as string).trim();
    const pid = Number(tmux("display-message", "-p", "-t", s, "#{pane_pid}").trim());
    spawnSync("tmux", ["kill-session", "-t", s]);
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 20_000, "submit --watch to exit when its terminal closed");
    expect(d.job(id)?.state).toBe("RUN");
    expect(d.cli(["jobs"]).status).toBe(0);
    expect(d.cli(["cancel", id]).status).toBe(0);
    await waitFor(() => d.job(id)?.state === "INACTIVE", 30_000, "the job to end after cancel");
  });

  it("top without a terminal prints one listing, sorted by priority, and exits", () => {
    const low = submit("--urgency", "0", "true");
    const high = submit("--urgency", "0", "true");
    d.cli(["urgency", high, "20"]);
    const r = d.cli(["top"]);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stdout).toMatch(new RegExp(`^jobtap top {2}\\d+ pending {2}\\d+ running\\nwhy [^\\n]*\\n\\n +JOBID[^\\n]*\\n[\\s\\S]*${high}[\\s\\S]*${low}`));
    expect(d.cli(["top", "--interval", "0"]).stderr).toContain("--interval");
    d.cli(["cancel", low, high]);
  });

  it("submit --progress --jps draws a live bar on a terminal, and nothing when piped", async () => {
    const s = session(d, 70, 10, `${cli} submit --cc 1-300 --progress --jps --wait --setattr exec.test.run_duration=0s true; echo EXIT=$?; sleep 60`);
    const text = await shows(s, /EXIT=0/, "the batch to finish");
    expect(text).toMatch(/^300\/300 submitted \[#+\] \d+\.\d job\/s$/m);
    expect(text).toMatch(/^300\/300 done \[#+\] \d+\.\d job\/s$/m);
    expect(text.split("\n").every((l) => l.length <= 70)).toBe(true);
    const piped = d.cli(["submit", "--cc", "1-3", "--progress", "--setattr", "exec.test.run_duration=0s", "true"]);
    expect(piped.status).toBe(0);
    expect(piped.stdout.trim().split("\n")).toHaveLength(3);
    expect(piped.stdout).not.toMatch(/submitted|\x1b/);
  });
});
