/**
 * Issue 31, "files opened with the daemon's rights", with real users: a root daemon (its own
 * process, holding a secret in its environment) with `[daemon] guests = true`; the guest
 * jtexec1 (member of jtexecg) runs the real CLI; jtexec2 owns a directory the guest may not
 * write, and runs a daemon of its own (not root) that must refuse the guest's local jobs.
 * Skipped unless root.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { BIN, requireBuild, waitFor } from "./harness.js";

const GUEST = "jtexec1";
const OTHER = "jtexec2";
const GROUP = "jtexecg";
const SECRET = "jtexec-daemon-secret-4242";

interface User {
  uid: number;
  gid: number;
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
  const id = (flag: string) => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
  if (spawnSync("id", ["-u", name]).status !== 0) return undefined;
  return { uid: id("-u"), gid: id("-g") };
}

/** The two test users (created if missing), or undefined when not root. */
function users(): { guest: User; other: User } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync("getent", ["group", GROUP]).status !== 0) admin(["groupadd", "--system", GROUP]);
  for (const name of [GUEST, OTHER]) {
    if (!userOf(name)) admin(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
  }
  admin(["usermod", "-a", "-G", GROUP, GUEST]);
  const guest = userOf(GUEST);
  const other = userOf(OTHER);
  return guest && other ? { guest, other } : undefined;
}

const who = users();
if (!who) console.warn("security-files tests skipped: they need root (to create and become second users)");

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `jobtap ARGS` as `user` (a real uid) in `cwd`, against `socket`. */
function cliAs(user: User | undefined, socket: string, cwd: string, args: string[]): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", JOBTAP_SOCKET: socket, HOME: cwd },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A daemon process as `user` (undefined: root, with the secret in its environment). */
async function daemonAs(user: User | undefined, statedir: string, config: string, socket: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, "daemon", "--statedir", statedir, "--config", config], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", JTEXEC_SECRET: SECRET },
    stdio: ["ignore", "ignore", "inherit"],
  });
  let exited = false;
  child.once("exit", () => (exited = true));
  await waitFor(() => exited || (existsSync(socket) && cliAs(user, socket, "/", ["jobs"]).status === 0), 30_000, "daemon to answer");
  if (exited) throw new Error("daemon exited at start");
  return child;
}

/** SIGTERM; SIGKILL if it is still there 10 s later (a daemon wedged in open() never leaks). */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.once("close", r));
  child.kill("SIGTERM");
  const late = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await closed;
  clearTimeout(late);
}

/** A directory owned by `user`, mode 0755. */
function dirFor(path: string, user: User): string {
  mkdirSync(path);
  chownSync(path, user.uid, user.gid);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(!who)("security: a guest's job files, against a root daemon", () => {
  const { guest, other } = who as { guest: User; other: User };
  let top: string;
  let socket: string;
  let home: string;
  let otherDir: string;
  let daemon: ChildProcess | undefined;
  let owner: DaemonClient;
  const asGuest = (args: string[]) => cliAs(guest, socket, home, args);

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-jtexec-"));
    chmodSync(top, 0o755);
    const pub = join(top, "pub");
    mkdirSync(pub, { mode: 0o755 });
    chmodSync(pub, 0o755);
    socket = join(pub, "jobtap.sock");
    home = dirFor(join(top, "home"), guest);
    otherDir = dirFor(join(top, "other"), other);
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n`);
    daemon = await daemonAs(undefined, join(top, "state"), config, socket);
    owner = connectDaemon(socket);
  }, 60_000);
  afterAll(async () => {
    owner?.close();
    await stop(daemon);
    if (top) rmSync(top, { recursive: true, force: true });
  });

  it("a guest's job runs as the guest, with the guest's groups; its default output is in its cwd, the guest's own", () => {
    const r = asGuest(["submit", "--watch", "sh", "-c", "id -u; id -G"]);
    expect(r.stderr).toBe("");
    const [, uid, groups] = r.stdout.trim().split("\n"); // the job id first
    expect(Number(uid)).toBe(guest.uid);
    const gid = Number(spawnSync("getent", ["group", GROUP], { encoding: "utf8" }).stdout.split(":")[2]);
    expect(groups!.split(" ").map(Number)).toContain(gid);
    const files = spawnSync("sh", ["-c", `ls ${home}/jobtap-*.out`], { encoding: "utf8" }).stdout.trim().split("\n");
    expect(files.length).toBe(1);
    expect(statSync(files[0]!).uid).toBe(guest.uid);
  });

  it("--output /etc/shadow: the job cannot open it, and --watch never shows it", async () => {
    const watched = asGuest(["submit", "--output", "/etc/shadow", "--watch", "true"]);
    expect(watched.stdout).not.toContain("root:");
    expect(watched.status).not.toBe(0);
    expect(watched.stderr).toContain('output "/etc/shadow"');
    const waited = asGuest(["submit", "--output", "/etc/shadow", "--wait", "true"]);
    expect(waited.status).not.toBe(0);
    expect(waited.stderr).toContain('output "/etc/shadow": cannot open it: Permission denied');
  });

  it("a root-owned 0644 file (as /etc/passwd is) is not appended to; the job's exception names the path and the reason", () => {
    // A stand-in with /etc/passwd's owner and mode: on a broken daemon this test must not
    // write into the machine's real account database.
    const passwd = join(top, "passwd");
    writeFileSync(passwd, "root:x:0:0:root:/root:/bin/sh\n", { mode: 0o644 });
    const marker = "jtexec-planted-account";
    const r = asGuest(["submit", "--output", passwd, "--wait", "echo", marker]);
    expect(r.status).not.toBe(0);
    expect(readFileSync(passwd, "utf8")).not.toContain(marker);
    expect(r.stderr).toContain(`output "${passwd}": cannot open it: Permission denied`);
  });

  it("a file in another user's directory is not planted", () => {
    const planted = join(otherDir, "planted");
    const r = asGuest(["submit", "--output", planted, "--wait", "echo", "x"]);
    expect(r.status).not.toBe(0);
    expect(existsSync(planted)).toBe(false);
    expect(r.stderr).toContain(`output "${planted}": cannot open it: Permission denied`);
  });

  it("/proc/self/environ and /proc/self/mem are refused: the daemon's secret never shows", async () => {
    const env = asGuest(["submit", "--output", "/proc/self/environ", "--watch", "true"]);
    expect(env.stdout + env.stderr).not.toContain(SECRET);
    expect(env.status).not.toBe(0);
    const mem = asGuest(["submit", "--error", "/proc/self/mem", "--watch", "true"]);
    expect(mem.status).not.toBe(0);
    expect(mem.stderr).toMatch(/output "\/proc\/self\/mem": (a \/proc or \/sys file|cannot open it)/);
    // The owner's own job: refused too (the daemon would open its own /proc files).
    const mine = cliAs(undefined, socket, top, ["submit", "--output", "/proc/self/environ", "--wait", "true"]);
    expect(mine.status).not.toBe(0);
    expect(mine.stderr).toContain('output "/proc/self/environ": a /proc or /sys file (refused)');
  });

  it("a FIFO as output never blocks the daemon: the job is refused while the daemon answers", () => {
    const fifo = join(home, "fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    chownSync(fifo, guest.uid, guest.gid);
    const theirs = asGuest(["submit", "--output", fifo, "--wait", "true"]);
    expect(theirs.stderr).toContain(`output "${fifo}": not a regular file`);
    const mine = cliAs(undefined, socket, top, ["submit", "--output", fifo, "--wait", "true"]);
    expect(mine.stderr).toContain(`output "${fifo}": not a regular file`);
    expect(cliAs(undefined, socket, top, ["jobs", "-a"]).status).toBe(0);
  });

  it("output reads only the job's own file: a symlink swapped in afterwards is refused", async () => {
    const out = join(home, "swapped.out");
    const r = asGuest(["submit", "--output", out, "--wait", "echo", "mine"]);
    expect(r.status).toBe(0);
    const id = r.stdout.trim();
    expect((await owner.call("output", { id, stream: "stdout", offset: 0 })).data).toBe("mine\n");
    unlinkSync(out);
    symlinkSync("/etc/shadow", out);
    const read = asGuest(["submit", "--output", out, "--watch", "true"]);
    expect(read.stdout).not.toContain("root:");
    await expect(owner.call("output", { id, stream: "stdout", offset: 0 })).rejects.toThrow(`output "${out}": a symbolic link (refused)`);
  });

  it("a job that never started has no output; one not started yet has none so far", async () => {
    const held = cliAs(undefined, socket, top, ["submit", "--urgency", "0", "--output", "/etc/shadow", "true"]).stdout.trim();
    expect(await owner.call("output", { id: held, stream: "stdout", offset: 0 })).toEqual({ data: "", offset: 0, done: false });
    await owner.call("cancel", { ids: [held] });
    await owner.call("wait", { id: held });
    await expect(owner.call("output", { id: held, stream: "stdout", offset: 0 })).rejects.toThrow("never started a local process: it has no output");
  });

  it("a jobspec without environment runs with PATH only, never the daemon's environment", async () => {
    const spec = {
      version: 1,
      resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: 1 }] }],
      tasks: [{ command: ["sh", "-c", 'echo "secret=${JTEXEC_SECRET-none} path=$PATH"; env | wc -l'], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 0, cwd: top } },
    };
    const { ids: [id] } = await owner.call("submit", { jobspecs: [spec] });
    await owner.call("wait", { id: id as string });
    const { data } = await owner.call("output", { id: id as string, stream: "stdout", offset: 0 });
    expect(data).toContain("secret=none path=/usr/local/bin:/usr/bin:/bin\n");
    expect(data).not.toContain(SECRET);
  });

  it("a guest's running job survives a daemon SIGKILL and is reattached: it ends with its status, still as the guest", async () => {
    const go = join(home, "go");
    const r = asGuest(["submit", "sh", "-c", `while [ ! -e ${go} ]; do sleep 0.05; done; id -u`]);
    expect(r.stderr).toBe("");
    const id = r.stdout.trim();
    await waitFor(() => cliAs(undefined, socket, top, ["jobs", "-A", "--filter", "RUN"]).stdout.includes(id), 30_000, "job to run");
    const closed = new Promise((res) => daemon!.once("close", res));
    daemon!.kill("SIGKILL");
    await closed;
    owner.close();
    daemon = await daemonAs(undefined, join(top, "state"), join(top, "jobtap.toml"), socket);
    owner = connectDaemon(socket);
    writeFileSync(go, "");
    const waited = asGuest(["wait", id]);
    expect(waited.status).toBe(0);
    expect((await owner.call("output", { id, stream: "stdout", offset: 0 })).data).toBe(`${guest.uid}\n`);
  }, 60_000);
});

describe.skipIf(!who)("security: a daemon that is not root refuses a guest's local jobs", () => {
  const { guest, other } = who as { guest: User; other: User };
  let top: string;
  let socket: string;
  let daemon: ChildProcess | undefined;

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-jtexec-"));
    chmodSync(top, 0o755);
    const pub = dirFor(join(top, "pub"), other);
    socket = join(pub, "jobtap.sock");
    const config = join(pub, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n`);
    dirFor(join(top, "state"), other);
    chmodSync(join(top, "state"), 0o700);
    daemon = await daemonAs(other, join(top, "state"), config, socket);
  }, 60_000);
  afterAll(async () => {
    await stop(daemon);
    if (top) rmSync(top, { recursive: true, force: true });
  });

  it("refused at submit, naming why; test-executor jobs and the owner's own jobs still run", () => {
    const refused = cliAs(guest, socket, "/tmp", ["submit", "id", "-u"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(`this instance cannot run jobs as uid ${guest.uid}: its daemon runs as uid ${other.uid}, not root`);
    const test = cliAs(guest, socket, "/tmp", ["submit", "--setattr", "exec.test.run_duration=0", "--wait", "true"]);
    expect(test.stderr).toBe("");
    expect(test.status).toBe(0);
    const mine = cliAs(other, socket, join(top, "pub"), ["submit", "--watch", "id", "-u"]);
    expect(mine.stdout.trim().split("\n")[1]).toBe(String(other.uid));
  });
});
