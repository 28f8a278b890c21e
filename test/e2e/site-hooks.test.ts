/**
 * Who each hook runs as in a multi-user instance (docs/hooks.md, "Who hooks run as"): a
 * daemon started as root with `[daemon] user = "jtssvc"`, real guests jts1 (in group jtsg)
 * and jts2 made by useradd. The starter hooks (PREPARE_JOB, UPDATE_JOB_INFO, JOB_EXIT) run as
 * the job's user through the launcher; perilog's prolog and epilog as root; condor-cron's
 * jobs, FETCH_WORK and REPLY_FETCH as the service user; fetched work as its ad's Owner, and
 * an Owner that is unknown, root, or outside JOBTAP_ALLOWED_OWNERS rejected. Bad input: a hook for a uid never authorised (the launcher
 * refuses and logs), a user deleted between submit and PREPARE_JOB, a PREPARE_JOB the job's
 * user may not execute (both hold the job, as a failed PREPARE_JOB does). Skipped unless root.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, requireBuild, waitFor } from "./harness.js";
import { admin, cliAs, makeUser, type SiteUser } from "./site-users.js";

const SERVICE = "jtssvc";
const GROUP = "jtsg";

function users(): { svc: SiteUser; a: SiteUser; b: SiteUser } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  if (spawnSync("getent", ["group", GROUP]).status !== 0) admin(["groupadd", "--system", GROUP]);
  const svc = makeUser(SERVICE);
  const a = makeUser("jts1");
  const b = makeUser("jts2");
  admin(["usermod", "-a", "-G", GROUP, "jts1"]);
  return svc && a && b ? { svc, a, b } : undefined;
}

const who = users();
if (!who) console.warn("site hook tests skipped: they need root (to create and become other users)");

/** A root-owned hook script, mode `mode`, group `group`. */
function script(path: string, body: string, mode = 0o755, group = 0): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chownSync(path, 0, group);
  chmodSync(path, mode);
  return path;
}

describe.skipIf(!who)("a multi-user instance: each hook runs as the seeds' table says", () => {
  const { svc, a, b } = who as { svc: SiteUser; a: SiteUser; b: SiteUser };
  let top: string;
  let socket: string;
  let logdir: string;
  let spool: string;
  let daemon: ChildProcess | undefined;
  let log = "";
  /** Each user submits from a directory of its own (the job's output goes there). */
  const as = (u: SiteUser | undefined, args: string[]) => cliAs(u, socket, u === undefined ? top : dirOf(u), args);
  const dirOf = (u: SiteUser): string => {
    const d = join(top, u.name);
    if (!existsSync(d)) {
      mkdirSync(d);
      chownSync(d, u.uid, u.gid);
    }
    return d;
  };
  /** What the hooks that ran as `uid` wrote, one line each. */
  const wrote = (uid: number): string[] => (existsSync(join(logdir, String(uid))) ? readFileSync(join(logdir, String(uid)), "utf8").trim().split("\n") : []);

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-jts-"));
    chmodSync(top, 0o755);
    socket = join(top, "run", "jobtap.sock");
    logdir = join(top, "log");
    mkdirSync(logdir);
    chmodSync(logdir, 0o1777);
    const hooks = join(top, "hooks");
    mkdirSync(hooks);
    chmodSync(hooks, 0o755);
    const note = (what: string) => `echo "${what} $(id -u) $HOME" >> ${logdir}/$(id -u)`;
    const gid = Number(spawnSync("getent", ["group", GROUP], { encoding: "utf8" }).stdout.split(":")[2]);
    // PREPARE_JOB only members of jtsg may execute: jts2's job cannot run it.
    const prepare = script(join(hooks, "prepare"), `cat > /dev/null\n${note("prepare")}`, 0o750, gid);
    const update = script(join(hooks, "update"), `cat > /dev/null\n${note("update")}`);
    const exit = script(join(hooks, "exit"), `cat > /dev/null\n${note("job_exit $1")}`);
    const prolog = script(join(hooks, "prolog"), note("prolog"));
    const epilog = script(join(hooks, "epilog"), note("epilog"));
    const cron = script(join(hooks, "cron"), `${note("cron")}\necho Probe = 1`);
    spool = join(top, "spool");
    mkdirSync(spool);
    chownSync(spool, svc.uid, svc.gid);
    // FETCH_WORK hands out one queued ad per call; REPLY_FETCH notes the answer.
    const fetchWork = script(join(hooks, "fetch"), `f=$(ls ${spool}/*.ad 2>/dev/null | head -n 1)\n[ -n "$f" ] || exit 0\n${note("fetch")}\ncat "$f"\nrm -f "$f"`);
    const replyFetch = script(join(hooks, "reply"), `o=$(grep '^Owner' | head -n 1)\necho "reply $1 $(id -u) $o" >> ${logdir}/$(id -u)`);
    const fetchConf = `keyword = "F", fetch_work_delay = 1, allowed_owners = "jts1, jts2, root, jtsnobody", hooks = { F = { fetch_work = "${fetchWork}", reply_fetch = "${replyFetch}" }, `;
    const fetch = `{ starter_keyword = "T", starter_initial_update_interval = 1, ${fetchConf}T = { prepare_job = "${prepare}", update_job_info = "${update}", job_exit = "${exit}" } } }`;
    const cronConf = `{ startd = { jobs = { probe = { executable = "${cron}", period = "1h" } } } }`;
    const config = join(top, "jobtap.toml");
    writeFileSync(
      config,
      [
        `[daemon]\nuser = "${SERVICE}"\nguests = true\nsocket = ${JSON.stringify(socket)}`,
        "[resources]\ncores = 2\nslots = [ { count = 2, cores = 1 } ]",
        `[job-manager]\nplugins = [ { load = "condor-fetch", conf = ${fetch} }, { load = "perilog" }, { load = "condor-cron", conf = ${cronConf} } ]`,
        `[job-manager.prolog]\ncommand = [${JSON.stringify(prolog)}]`,
        `[job-manager.epilog]\ncommand = [${JSON.stringify(epilog)}]`,
        "",
      ].join("\n\n"),
    );
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
  }, 60_000);

  /** Queues one job ad for FETCH_WORK. */
  const queue = (name: string, lines: string[]) => {
    const tmp = join(spool, `.${name}`);
    writeFileSync(tmp, `${lines.join("\n")}\n`);
    renameSync(tmp, join(spool, `${name}.ad`));
  };

  afterAll(async () => {
    if (process.env.JTS_LOG) console.log(log);
    const d = daemon;
    if (d && d.exitCode === null && d.signalCode === null) {
      const closed = new Promise((r) => d.once("close", r));
      d.kill("SIGTERM");
      await closed;
    }
    if (top) rmSync(top, { recursive: true, force: true });
  });

  it("PREPARE_JOB, UPDATE_JOB_INFO and JOB_EXIT run as the job's user; perilog's prolog and epilog as root", async () => {
    // The job ends once UPDATE_JOB_INFO has run (as jts1, it can read what the hook wrote).
    const wait = `until grep -q update ${logdir}/$(id -u) 2>/dev/null; do sleep 0.1; done`;
    const r = as(a, ["submit", "--wait", "sh", "-c", wait]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    await waitFor(() => wrote(a.uid).some((l) => l.startsWith("job_exit")), 30_000, "JOB_EXIT");
    const mine = wrote(a.uid);
    expect(mine).toContain(`prepare ${a.uid} ${a.home}`);
    expect(mine).toContain(`update ${a.uid} ${a.home}`);
    expect(mine).toContain(`job_exit exit ${a.uid} ${a.home}`);
    await waitFor(() => wrote(0).some((l) => l.startsWith("epilog")), 30_000, "the epilog");
    expect(wrote(0).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual(["prolog 0", "epilog 0"]);
    expect(wrote(svc.uid).filter((l) => !l.startsWith("cron"))).toEqual([]);
  });

  it("condor-cron's jobs run as the service user", async () => {
    await waitFor(() => wrote(svc.uid).some((l) => l.startsWith("cron")), 30_000, "the cron job");
    // The daemon's own environment (no HOME here): the cron job is the service user's process.
    expect(wrote(svc.uid)[0]!.split(" ").slice(0, 2)).toEqual(["cron", String(svc.uid)]);
  });

  it("a PREPARE_JOB the job's user may not execute holds the job, naming the hook's failure", async () => {
    const r = as(b, ["submit", "true"]);
    expect(r.status).toBe(0);
    const id = r.stdout.trim();
    await waitFor(() => as(b, ["eventlog", id]).stdout.includes("exception"), 30_000, "the job's exception");
    const ev = as(b, ["eventlog", id]).stdout;
    // setpriv or the shell it falls back to says "Permission denied" (status 126 or 2): a failed PREPARE_JOB.
    expect(ev).toMatch(/PREPARE_JOB \(prepare\) failed \(exited with status \d+\)/);
    expect(ev).toContain("type=hold");
    expect(wrote(b.uid)).toEqual([]);
  });

  it("a user deleted between submit and PREPARE_JOB: the hook is not run as anyone, the job is held", async () => {
    const c = makeUser("jts3")!;
    expect(c).toBeDefined();
    admin(["usermod", "-a", "-G", GROUP, "jts3"]);
    const r = as(c, ["submit", "--urgency", "0", "true"]);
    expect(r.status).toBe(0);
    const id = r.stdout.trim();
    expect(admin(["userdel", "jts3"])).toBe(true);
    expect(as(svc, ["urgency", id, "16"]).status).toBe(0);
    await waitFor(() => as(svc, ["eventlog", id]).stdout.includes("exception"), 30_000, "the job's exception");
    const ev = as(svc, ["eventlog", id]).stdout;
    expect(ev).toContain(`the job's user (uid ${c.uid}) is not in the password database`);
    expect(ev).toContain("type=hold");
    expect(wrote(c.uid)).toEqual([]);
  });

  it("fetched work runs as its ad's Owner; FETCH_WORK and REPLY_FETCH run as the service user", async () => {
    const dir = dirOf(a);
    const out = join(dir, "fetched.out");
    queue("one", [`Owner = "jts1"`, `Cmd = "/bin/sh"`, `Arguments = "-c 'id -u > ${out}'"`, `Iwd = "${dir}"`, `Env = "PATH=/usr/bin:/bin"`, "RequestCpus = 1"]);
    await waitFor(() => existsSync(out) && readFileSync(out, "utf8").trim() !== "", 60_000, "the fetched job's output");
    expect(readFileSync(out, "utf8").trim()).toBe(String(a.uid));
    expect(statSync(out).uid).toBe(a.uid);
    await waitFor(() => wrote(svc.uid).some((l) => l.startsWith("reply")), 30_000, "REPLY_FETCH");
    expect(wrote(svc.uid).some((l) => l.startsWith(`fetch ${svc.uid}`))).toBe(true);
    expect(wrote(svc.uid).find((l) => l.startsWith("reply"))).toBe(`reply accept ${svc.uid} Owner = "jts1"`);
    // Its starter hooks run as jts1 too.
    await waitFor(() => wrote(a.uid).filter((l) => l.startsWith("job_exit")).length >= 2, 30_000, "the fetched job's JOB_EXIT");
  });

  it("an Owner that is missing, unknown, root, or outside allowed_owners: REPLY_FETCH reject, the reason logged naming the Owner", async () => {
    const ad = (owner: string | undefined) => [...(owner === undefined ? [] : [`Owner = "${owner}"`]), `Cmd = "/usr/bin/touch"`, `Arguments = "${top}/never-${owner ?? "none"}"`, `Iwd = "/"`];
    queue("nobody", ad("jtsnobody"));
    queue("root", ad("root"));
    queue("svc", ad(SERVICE));
    queue("none", ad(undefined));
    const reasons = [
      'Owner "jtsnobody" is not a user on this host',
      'Owner "root" is root, and [exec] allow-root is false',
      `Owner "${SERVICE}" is not in JOBTAP_ALLOWED_OWNERS (jts1, jts2, root, jtsnobody)`,
      "the job ad has no Owner (a multi-user instance runs fetched work as its Owner)",
    ];
    await waitFor(() => reasons.every((r) => log.includes(`job rejected: ${r}`)), 60_000, "the four rejections in the log");
    await waitFor(() => wrote(svc.uid).filter((l) => l.startsWith("reply reject")).length === 4, 30_000, "four REPLY_FETCH reject");
    for (const o of ["jtsnobody", "root", SERVICE, "none"]) expect(existsSync(join(top, `never-${o}`))).toBe(false);
    // The test's own limit covers its two waits: under the whole suite's load the rejections
    // once took past the default 30 s, and the run then ended without saying which wait.
  }, 100_000);

  it("the launcher refuses a hook for a uid never authorised for its job, and a root hook that is not perilog's, and says so", async () => {
    const main = join(ROOT, "dist", "src", "manager", "exec", "launcher-main.js");
    const roots = Buffer.from(JSON.stringify([["/bin/true"]])).toString("base64");
    const child = spawn(process.execPath, [main, `--root-hooks=${roots}`], { stdio: ["pipe", "pipe", "inherit"] });
    const lines: string[] = [];
    let rest = "";
    child.stdout!.on("data", (d) => {
      rest += d.toString();
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines.push(...parts);
    });
    const send = (m: object) => child.stdin!.write(`${JSON.stringify(m)}\n`);
    const hook = { path: "/usr/bin/touch", args: ["/tmp/jts-never"], env: { PATH: "/usr/bin:/bin" }, caps: { stdout: 100, stderr: 100 } };
    send({ op: "sync", n: 1 });
    send({ op: "authorise", job: "f1", uid: a.uid });
    send({ op: "hook", req: 1, job: "f1", uid: b.uid, ...hook });
    send({ op: "hook", req: 2, job: "f2", uid: a.uid, ...hook });
    send({ op: "hook", req: 3, job: "", uid: 0, ...hook });
    send({ op: "hook", req: 4, job: "", uid: 0, path: "/bin/true", args: [], env: {}, caps: { stdout: 0, stderr: 0 } });
    await waitFor(() => lines.some((l) => l.includes('"closed"')), 30_000, "the launcher's answers");
    child.stdin!.end();
    const answers = lines.map((l) => JSON.parse(l) as { op: string; req?: number; message?: string; code?: number });
    const errors = answers.filter((x) => x.op === "error");
    expect(errors.map((x) => [x.req, x.message])).toEqual([
      [1, `launcher: hook /usr/bin/touch of job f1 is not authorised to run as uid ${b.uid} (its user is uid ${a.uid})`],
      [2, `launcher: hook /usr/bin/touch of job f2 is not authorised to run as uid ${a.uid}`],
      [3, "launcher: refused to run hook /usr/bin/touch as root: only the configured perilog commands run as root"],
    ]);
    // Each refusal is also a log line for the daemon's log.
    expect(answers.filter((x) => x.op === "log").length).toBe(3);
    expect(answers.find((x) => x.op === "hookexit" && x.req === 4)).toMatchObject({ code: 0 });
    expect(existsSync("/tmp/jts-never")).toBe(false);
  });
});
