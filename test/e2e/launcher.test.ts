/**
 * Issue 34, a multi-user instance, with real users: a daemon started as root with
 * `[daemon] user = "jtlsvc"` drops to that service user and starts every job through its
 * privileged launcher. Two guests (jtl1, in group jtlg; jtl2) run the real CLI. Also: the
 * launcher SIGKILLed and a daemon SIGKILLed with jobs running, root's jobs refused, a user
 * deleted before its job starts, a missing service user, and the launcher's own refusal of
 * a uid never authorised for a job. Skipped unless root.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, requireBuild, waitFor } from "./harness.js";

const SERVICE = "jtlsvc";
const GROUP = "jtlg";

interface User {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** Runs a user/group admin command, retrying while another helper holds /etc/passwd's lock. */
function admin(argv: string[]): boolean {
  for (let i = 0; i < 20; i++) {
    if (spawnSync(argv[0]!, argv.slice(1)).status === 0) return true;
    spawnSync("sleep", ["0.2"]);
  }
  return false;
}

function userOf(name: string): User | undefined {
  const r = spawnSync("getent", ["passwd", name], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  const f = r.stdout.trim().split(":");
  return { name, uid: Number(f[2]), gid: Number(f[3]), home: f[5]! };
}

function makeUser(name: string, extra: string[] = []): User | undefined {
  if (!userOf(name)) admin(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ...extra, name]);
  return userOf(name);
}

function users(): { svc: User; a: User; b: User } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync("getent", ["group", GROUP]).status !== 0) admin(["groupadd", "--system", GROUP]);
  const svc = makeUser(SERVICE);
  const a = makeUser("jtl1", ["--home-dir", "/home/jtl1"]);
  const b = makeUser("jtl2");
  admin(["usermod", "-a", "-G", GROUP, "jtl1"]);
  return svc && a && b ? { svc, a, b } : undefined;
}

const who = users();
if (!who) console.warn("launcher tests skipped: they need root (to create and become other users)");

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `jobtap ARGS` as `user` (undefined: root) in `cwd`, with `umask`. */
function cliAs(user: User | undefined, socket: string, cwd: string, args: string[], umask = "022"): Run {
  const r = spawnSync("/bin/sh", ["-c", `umask ${umask}; exec "$@"`, "sh", process.execPath, BIN, ...args], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", JOBTAP_SOCKET: socket, HOME: "/nonexistent-submit-home" },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A directory owned by `user`, mode 0755. */
function dirFor(path: string, user: User): string {
  mkdirSync(path);
  chownSync(path, user.uid, user.gid);
  chmodSync(path, 0o755);
  return path;
}

function pidsOf(pattern: string): number[] {
  const r = spawnSync("pgrep", ["-f", pattern], { encoding: "utf8" });
  return r.stdout.trim().split("\n").filter(Boolean).map(Number);
}

function uidOfPid(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("Uid:"))!;
  return Number(line.split(/\s+/)[1]);
}

describe.skipIf(!who)("a multi-user instance: [daemon] user and the privileged launcher", () => {
  const { svc, a, b } = who as { svc: User; a: User; b: User };
  let top: string;
  let socket: string;
  let config: string;
  let homeA: string;
  let homeB: string;
  let daemon: ChildProcess | undefined;
  let log = "";
  const as = (u: User | undefined, args: string[], cwd?: string, umask?: string) =>
    cliAs(u, socket, cwd ?? (u === a ? homeA : u === b ? homeB : top), args, umask);

  async function start(): Promise<void> {
    if (existsSync(socket)) rmSync(socket);
    const child = spawn(process.execPath, [BIN, "daemon", "--statedir", join(top, "state"), "--config", config], {
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr!.on("data", (d) => (log += d.toString()));
    let exited = false;
    child.once("exit", () => (exited = true));
    daemon = child;
    await waitFor(() => exited || (existsSync(socket) && as(a, ["jobs"]).status === 0), 30_000, "daemon to answer");
    if (exited) throw new Error(`daemon exited at start:\n${log}`);
  }

  async function stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const d = daemon;
    if (!d || d.exitCode !== null || d.signalCode !== null) return;
    const closed = new Promise((r) => d.once("close", r));
    d.kill(signal);
    await closed;
  }

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-jtl-"));
    chmodSync(top, 0o755);
    socket = join(top, "run", "jobtap.sock");
    homeA = dirFor(join(top, "a"), a);
    homeB = dirFor(join(top, "b"), b);
    chmodSync(dirFor(join(homeB, "private"), b), 0o700);
    config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nuser = "${SERVICE}"\nguests = true\nsocket = ${JSON.stringify(socket)}\n`);
    await start();
  }, 60_000);
  afterAll(async () => {
    await stop();
    if (top) rmSync(top, { recursive: true, force: true });
  });

  it("the daemon runs as the service user; the launcher and its keeper are root; the socket directory is the service user's", () => {
    const pid = daemon!.pid!;
    expect(uidOfPid(pid)).toBe(svc.uid);
    const launchers = [...pidsOf("launcher-main.js"), ...pidsOf("launcher-keeper.js")].filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes(ROOT));
    expect(launchers.length).toBeGreaterThanOrEqual(2);
    for (const p of launchers) expect(uidOfPid(p)).toBe(0);
    expect(statSync(join(top, "run")).uid).toBe(svc.uid);
    expect(statSync(join(top, "state")).uid).toBe(svc.uid);
  });

  it("two guests' jobs run as themselves: uid, groups, HOME/USER from passwd, cwd, umask; output files are theirs", () => {
    const script = 'id -u; id -G; echo "$HOME $USER $LOGNAME"; pwd; umask';
    // umask 027: the output file is the guest's, 0640, so read here rather than through --watch.
    const ra = as(a, ["submit", "--wait", "--output", join(homeA, "id.out"), "sh", "-c", script], homeA, "027");
    expect(ra.stderr).toBe("");
    expect(statSync(join(homeA, "id.out")).mode & 0o777).toBe(0o640);
    const [uid, groups, env, cwd, umask] = readFileSync(join(homeA, "id.out"), "utf8").trim().split("\n");
    expect(Number(uid)).toBe(a.uid);
    const gid = Number(spawnSync("getent", ["group", GROUP], { encoding: "utf8" }).stdout.split(":")[2]);
    expect(groups!.split(" ").map(Number)).toContain(gid);
    expect(env).toBe(`${a.home} jtl1 jtl1`);
    expect(cwd).toBe(homeA);
    expect(umask).toBe("0027");
    const rb = as(b, ["submit", "--watch", "id", "-u"]);
    expect(rb.stdout.trim().split("\n")[1]).toBe(String(b.uid));
    expect(statSync(join(homeA, "id.out")).uid).toBe(a.uid);
    const files = spawnSync("sh", ["-c", `ls ${homeB}/jobtap-*.out`], { encoding: "utf8" }).stdout.trim().split("\n");
    expect(files.length).toBe(1);
    expect(statSync(files[0]!).uid).toBe(b.uid);
  });

  it("a guest cannot write where it could not write itself; a cwd it cannot enter is its job's exception naming the path", () => {
    const planted = join(homeB, "planted");
    const r = as(a, ["submit", "--output", planted, "--wait", "echo", "x"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`output "${planted}": cannot open it: Permission denied`);
    const private_ = join(homeB, "private");
    const cwd = as(a, ["submit", "--cwd", private_, "--wait", "true"], homeA);
    expect(cwd.status).not.toBe(0);
    expect(cwd.stderr).toContain(`cannot enter working directory "${private_}"`);
  });

  it("root is a guest: its jobs are refused at submit ([exec] allow-root is false), naming docs/site.md", () => {
    const r = as(undefined, ["submit", "--wait", "id", "-u"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("this instance runs no job as root: [exec] allow-root is false (see docs/site.md)");
  });

  it("a user deleted between submit and start: that job's exception; nothing runs as anyone else", async () => {
    const gone = makeUser("jtl3")!;
    const dir = dirFor(join(top, "c"), gone);
    const held = as(gone, ["submit", "--urgency", "0", "sh", "-c", "id -u > ran"], dir);
    expect(held.stderr).toBe("");
    const id = held.stdout.trim();
    expect(admin(["userdel", "jtl3"])).toBe(true);
    // The instance owner (the service user) releases it: root is a guest here.
    expect(as(svc, ["urgency", id, "16"]).status).toBe(0);
    const w = as(svc, ["wait", id]);
    expect(w.status).not.toBe(0);
    expect(w.stderr).toContain(`the job's user (uid ${gone.uid}) is not in the password database`);
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  it("a SIGKILLed launcher: the daemon logs it, a new one starts, jobs go on, a running job is still cancelled by its pid", async () => {
    const r = as(a, ["submit", "sleep", "301"]);
    const id = r.stdout.trim();
    await waitFor(() => pidsOf("sleep 301").length === 1, 30_000, "job to run");
    const [victim] = pidsOf("launcher-main.js").filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes(ROOT));
    process.kill(victim!, "SIGKILL");
    await waitFor(() => log.includes(`launcher pid ${victim} killed by SIGKILL: no job starts until it is back`), 30_000, "the death in the log");
    const next = as(b, ["submit", "--watch", "id", "-u"]);
    expect(next.stdout.trim().split("\n")[1]).toBe(String(b.uid));
    await waitFor(() => log.includes("started again; starting jobs again"), 30_000, "the restart in the log");
    expect(as(a, ["cancel", id]).status).toBe(0);
    await waitFor(() => pidsOf("sleep 301").length === 0, 30_000, "the job's process to be killed");
  }, 60_000);

  it("a SIGKILLed daemon: the next one reattaches a guest's job and its kill still reaches it", async () => {
    const r = as(a, ["submit", "sleep", "302"]);
    const id = r.stdout.trim();
    await waitFor(() => pidsOf("sleep 302").length === 1, 30_000, "job to run");
    // The launcher tells the daemon the pid after the process exists: a daemon killed in
    // between has no pid to reattach (that job's exception, docs/site.md).
    await waitFor(() => as(a, ["eventlog", "--json", "--path", "exec", id]).stdout.includes('"exec-state"'), 30_000, "the pid to be recorded");
    await stop("SIGKILL");
    await waitFor(() => pidsOf("launcher-main.js").filter((p) => existsSync(`/proc/${p}/cmdline`) && readFileSync(`/proc/${p}/cmdline`, "utf8").includes(ROOT)).length === 0, 30_000, "launcher to exit");
    expect(pidsOf("sleep 302").length).toBe(1);
    await start();
    const cancel = as(a, ["cancel", id]);
    expect(cancel.status, `${cancel.stderr}\n${log}`).toBe(0);
    await waitFor(() => pidsOf("sleep 302").length === 0, 30_000, "the reattached job's process to be killed");
  }, 90_000);
});

describe.skipIf(!who)("a multi-user instance: bad input", () => {
  it("a service user that does not exist: the daemon does not start and says why", () => {
    const top = mkdtempSync(join(tmpdir(), "jobtap-jtl-"));
    const config = join(top, "jobtap.toml");
    writeFileSync(config, '[daemon]\nuser = "jtl-no-such-user"\n');
    const r = spawnSync(process.execPath, [BIN, "daemon", "--statedir", join(top, "state"), "--config", config], { encoding: "utf8", timeout: 30_000 });
    rmSync(top, { recursive: true, force: true });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('[daemon].user = "jtl-no-such-user": no such user in the password database');
  });

  it("the launcher refuses a task for a uid never authorised for its job, and root without --allow-root", async () => {
    const { a } = who as { a: User };
    const main = join(ROOT, "dist", "src", "manager", "exec", "launcher-main.js");
    const child = spawn(process.execPath, [main], { stdio: ["pipe", "pipe", "inherit"] });
    const lines: string[] = [];
    let rest = "";
    child.stdout!.on("data", (d) => {
      rest += d.toString();
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines.push(...parts);
    });
    const send = (m: object) => child.stdin!.write(`${JSON.stringify(m)}\n`);
    const task = { argv: ["touch", "/tmp/jtl-never"], cwd: "/", env: { PATH: "/usr/bin:/bin" }, stdout: "/dev/null", stderr: "/dev/null" };
    send({ op: "start", req: 9, job: "f1", uid: a.uid, ...task }); // before sync: ignored
    send({ op: "sync", n: 1 });
    send({ op: "authorise", job: "f1", uid: a.uid });
    send({ op: "start", req: 1, job: "f1", uid: 0, ...task });
    send({ op: "start", req: 2, job: "f2", uid: a.uid, ...task });
    send({ op: "authorise", job: "f3", uid: 0 });
    send({ op: "start", req: 3, job: "f3", uid: 0, ...task });
    await waitFor(() => lines.length >= 4, 30_000, "the launcher's answers");
    child.stdin!.end();
    const answers = lines.map((l) => JSON.parse(l) as { op: string; req?: number; message?: string });
    expect(answers[0]).toEqual({ op: "synced", n: 1 });
    expect(answers.slice(1).map((x) => [x.req, x.op])).toEqual([[1, "error"], [2, "error"], [3, "error"]]);
    expect(answers[1]!.message).toBe(`launcher: job f1 is not authorised to run as uid 0 (its user is uid ${a.uid})`);
    expect(answers[2]!.message).toBe(`launcher: job f2 is not authorised to run as uid ${a.uid}`);
    expect(answers[3]!.message).toContain("jobs of root are refused");
    expect(existsSync("/tmp/jtl-never")).toBe(false);
  });
});
