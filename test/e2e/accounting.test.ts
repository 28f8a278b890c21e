/**
 * The accounting plugin end to end: loaded from the daemon's config, driven by
 * `jobtap account` and `jobtap submit --bank` through the real socket.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon, type DaemonClient } from "../../src/server/client.js";
import { startDaemon, type Daemon } from "../../src/server/daemon.js";
import { BIN, daemonForSuite, requireBuild, waitFor } from "./harness.js";

const CONFIG = `[job-manager]
plugins = [ { load = "accounting" } ]

[accounting]
recompute-period = "1s"
`;

describe("jobtap account", { timeout: 90_000 }, () => {
  const d = daemonForSuite((daemon) => {
    const file = join(daemon.statedir, "accounting.toml");
    writeFileSync(file, CONFIG);
    return ["--config", file];
  });

  it("builds a tree, holds a job over a running limit, shows usage, exports and imports", async () => {
    const refused = d.cli(["submit", "true"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("has no accounting association");
    expect(d.cli(["account", "add-bank", "top"])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["account", "add-bank", "lab", "--parent", "top", "--shares", "2"]).status).toBe(0);
    expect(d.cli(["account", "add-bank", "ops", "--parent", "top"]).status).toBe(0);
    expect(d.cli(["account", "add-user", "root", "--bank", "lab", "--max-running-jobs", "1"]).status).toBe(0);
    expect(d.cli(["account", "add-user", "0", "--bank", "ops"]).status).toBe(0);
    const bad = d.cli(["account", "add-bank", "x", "--parent", "top", "--shares", "0"]);
    expect(bad).toMatchObject({ status: 1 });
    expect(bad.stderr).toContain("shares: must be an integer > 0, got 0");
    expect(d.cli(["account", "edit-bank", "top", "--parent", "lab"]).stderr).toContain('"top" is the root bank and cannot move');

    const exec = ["--setattr", "exec.test.run_duration=1s"];
    const a = d.submit(["--bank", "lab", "--setattr", "exec.test.run_duration=120s", "true"]);
    const b = d.submit(["--bank", "lab", ...exec, "true"]);
    const c = d.submit(["--bank", "ops", ...exec, "true"]);
    await waitFor(() => d.job(a)?.state === "RUN" || d.job(a)?.state === "INACTIVE", 20_000, "the first lab job to run");
    expect(d.job(b)?.state).toBe("DEPEND");
    const query = JSON.parse(d.cli(["plugin", "query", "accounting"]).stdout) as { jobs: Record<string, { held?: string }> };
    expect(Object.values(query.jobs).some((j) => j.held === "accounting: max-running-jobs of user 0 in bank lab")).toBe(true);
    d.cli(["cancel", a]); // its end releases b
    await waitFor(() => [a, b, c].every((id) => d.job(id)?.state === "INACTIVE"), 30_000, "every job to finish");

    const show = d.cli(["account", "show"]);
    expect(show.status).toBe(0);
    expect(show.stdout.split("\n")[0]).toMatch(/^ACCOUNT\s+SHARES\s+NORM\s+USAGE\s+FAIRSHARE\s+RUN\s+ACTIVE\s+LIMITS$/);
    expect(show.stdout).toMatch(/\n  lab\s+2\s+0\.6667 /);
    expect(show.stdout).toMatch(/\n    root\s+1\s+0\.6667\s+\d+\s+\d\.\d{4}\s+0\s+0\s+max-running-jobs=1\n/);
    const usage = JSON.parse(d.cli(["account", "usage", "root", "--json"]).stdout) as { associations: Array<{ bank: string; coreSeconds: number }> };
    expect(usage.associations.map((x) => x.bank)).toEqual(["lab", "ops"]);
    expect(usage.associations[0]!.coreSeconds).toBeGreaterThan(1);

    const exported = d.cli(["account", "export"]).stdout;
    expect(exported).toContain('[[banks]]\nname = "top"');
    expect(exported).toContain('user = "root"');
    const file = join(d.statedir, "more.toml");
    writeFileSync(file, `${exported}\n[[banks]]\nname = "new"\nparent = "top"\nshares = 5\n`);
    expect(d.cli(["account", "import", file])).toMatchObject({ status: 0, stderr: "" });
    expect(d.cli(["account", "show", "--json"]).stdout).toContain('"name": "new"');
    expect(readFileSync(file, "utf8")).toContain("max-running-jobs = 1");
  });
});

const CSV_HEAD = "kind,name,parent,bank,shares,default,max-running-jobs,max-active-jobs,max-cores";

describe("jobtap account export and import as CSV", { timeout: 90_000 }, () => {
  const config = (daemon: { statedir: string }) => {
    const file = join(daemon.statedir, "accounting.toml");
    writeFileSync(file, CONFIG);
    return ["--config", file];
  };
  const d = daemonForSuite(config);
  const other = daemonForSuite(config);

  it("round-trips the associations through CSV into a second instance", () => {
    // columns in another order, CRLF line ends, a quoted field, empty cells for absent values
    const text = ["name,kind,shares,parent,bank,default,max-cores", "top,bank,,,,,", 'lab,"bank",2,top,,,8', "ops,bank,1,top,,,", "root,user,3,,lab,,", "0,user,,,ops,true,"].join("\r\n");
    writeFileSync(join(d.statedir, "tree.csv"), text + "\r\n");
    expect(d.cli(["account", "import", "tree.csv"])).toMatchObject({ status: 0, stderr: "" });
    const csv = d.cli(["account", "export", "--format", "csv"]);
    expect(csv).toMatchObject({ status: 0, stderr: "" });
    expect(csv.stdout).toBe(
      [CSV_HEAD, "bank,top,,,1,,,,", "bank,lab,top,,2,,,,8", "bank,ops,top,,1,,,,", "user,root,,lab,3,,,,", "user,root,,ops,1,true,,,", ""].join("\r\n"),
    );
    writeFileSync(join(other.statedir, "from-d.data"), csv.stdout);
    expect(other.cli(["account", "import", "--format", "csv", "from-d.data"])).toMatchObject({ status: 0, stderr: "" });
    expect(other.cli(["account", "export", "--json"]).stdout).toBe(d.cli(["account", "export", "--json"]).stdout);
    expect(other.cli(["account", "export", "--format", "csv"]).stdout).toBe(csv.stdout);
    // the TOML export of the same tree is unchanged by the CSV path
    expect(other.cli(["account", "export", "--format", "toml"]).stdout).toBe(d.cli(["account", "export"]).stdout);
  });

  it("refuses a bad row at FILE:LINE naming the column, and applies nothing of the file", () => {
    const before = d.cli(["account", "export", "--json"]).stdout;
    const bad = (name: string, rows: string[]) => {
      writeFileSync(join(d.statedir, name), [CSV_HEAD, "bank,new,top,,5,,,,", ...rows].join("\n") + "\n");
      const r = d.cli(["account", "import", name]);
      expect(r.status).toBe(1);
      return r.stderr;
    };
    expect(bad("shares.csv", ["bank,x,top,,0,,,,"])).toContain("shares.csv:3: shares (column 5): must be an integer >= 1, got \"0\"");
    expect(bad("limit.csv", ["user,root,,lab,1,,many,,"])).toContain('limit.csv:3: max-running-jobs (column 7): must be an integer >= -1 (-1: no limit), got "many"');
    expect(bad("kind.csv", ["group,x,top,,1,,,,"])).toContain('kind.csv:3: kind (column 1): must be "bank" or "user", got "group"');
    expect(bad("count.csv", ["bank,x,top"])).toContain("count.csv:3: 3 columns, the header has 9");
    expect(bad("who.csv", ["user,nobody-jtacct,,lab,1,,,,"])).toContain('who.csv:3: name (column 2): unknown user "nobody-jtacct"');
    expect(bad("quote.csv", ['bank,"x,top,,1,,,,'])).toContain("quote.csv:3: a quoted field is not closed");
    // refused by the plugin (the whole file is checked on a copy there): still at its line and column
    expect(bad("parent.csv", ["bank,ok,top,,1,,,,", "bank,x,nope,,1,,,,"])).toContain('parent.csv:4: parent (column 3): unknown bank "nope"');
    expect(bad("cycle.csv", ["bank,lab,new,,1,,,,", "bank,new,lab,,1,,,,"])).toContain('cycle.csv:4: parent (column 3): moving "new" under "lab" would make a cycle');
    expect(bad("bank.csv", ["user,root,,zoo,1,,,,"])).toContain('bank.csv:3: bank (column 4): unknown bank "zoo"');
    writeFileSync(join(d.statedir, "head.csv"), "kind,name,colour\n");
    expect(d.cli(["account", "import", "head.csv"]).stderr).toContain('head.csv:1: column 3: unknown column "colour"');
    expect(d.cli(["account", "export", "--format", "xml"]).stderr).toContain('--format: must be toml or csv, got "xml"');
    // the command line's own checks: an unknown login name, a non-integer option
    expect(d.cli(["account", "edit-user", "nobody-jtacct", "--shares", "2"]).stderr).toContain('unknown user "nobody-jtacct" (not in /etc/passwd, not a uid)');
    expect(d.cli(["account", "edit-bank", "lab", "--shares", "lots"]).stderr).toContain('--shares: "lots" is not an integer');
    expect(d.cli(["account", "export", "--json"]).stdout).toBe(before);
  });
});

const GUEST = "jtacct1";

/** The guest's uid and gid, creating the user (retrying while another useradd holds the lock). */
function guestUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, GUEST], { encoding: "utf8" });
  for (let i = 0; i < 10 && id("-u").status !== 0; i++) {
    spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", GUEST]);
    if (id("-u").status !== 0) spawnSync("sleep", ["0.5"]);
  }
  if (id("-u").status !== 0) return undefined;
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) };
}

const guest = guestUser();

describe.skipIf(!guest)("jobtap account as a real second user", { timeout: 90_000 }, () => {
  const g = guest as { uid: number; gid: number };
  let top: string;
  let socket: string;
  let daemon: Daemon;
  let owner: DaemonClient;
  const asGuest = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [BIN, ...args], { uid: g.uid, gid: g.gid, cwd: "/", env: { PATH: process.env.PATH, JOBTAP_SOCKET: socket, HOME: "/" } });
      let stdout = "";
      let stderr = "";
      c.stdout.on("data", (d) => (stdout += d));
      c.stderr.on("data", (d) => (stderr += d));
      c.on("close", (status) => resolve({ status, stdout, stderr }));
    });
  const ownerCall = (method: string, payload: unknown) => owner.call("plugin.call", { plugin: "accounting", method, payload });

  beforeAll(async () => {
    requireBuild();
    top = mkdtempSync(join(tmpdir(), "jobtap-acct-"));
    const pub = join(top, "pub");
    mkdirSync(pub);
    chmodSync(top, 0o755);
    chmodSync(pub, 0o755);
    socket = join(pub, "jobtap.sock");
    const config = join(top, "jobtap.toml");
    writeFileSync(config, `[daemon]\nguests = true\nsocket = ${JSON.stringify(socket)}\n\n${CONFIG}`);
    daemon = await startDaemon({ statedir: join(top, "state"), configPath: config, env: {}, log: () => undefined });
    owner = connectDaemon(socket);
  });
  afterAll(async () => {
    owner?.close();
    await daemon?.shutdown("test");
    rmSync(top, { recursive: true, force: true });
  });

  it("a guest may look but not change; its jobs are held to its association's limits", async () => {
    await ownerCall("add-bank", { name: "top" });
    const refused = await asGuest(["account", "add-bank", "mine", "--parent", "top"]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("Request requires owner credentials");
    expect(await ownerCall("export", {})).toEqual({ banks: [{ name: "top", shares: 1 }], users: [] });
    const none = await asGuest(["submit", "--urgency", "hold", "true"]);
    expect(none.stderr).toContain(`user ${g.uid} has no accounting association`);
    await ownerCall("add-user", { uid: g.uid, bank: "top", limits: { "max-active-jobs": 1 } });
    const first = await asGuest(["submit", "--urgency", "hold", "true"]);
    expect(first).toMatchObject({ status: 0, stderr: "" });
    const second = await asGuest(["submit", "--urgency", "hold", "true"]);
    expect(second.stderr).toContain(`max-active-jobs of user ${g.uid} in bank top reached: 1 active jobs, limit 1`);
    const mine = await asGuest(["account", "usage", GUEST, "--json"]);
    expect(JSON.parse(mine.stdout)).toMatchObject({ uid: g.uid, associations: [{ bank: "top", active: 1 }] });
    expect((await asGuest(["account", "show"])).stdout).toContain(`  ${GUEST} `);
    await asGuest(["cancel", first.stdout.trim()]);
  });
});
