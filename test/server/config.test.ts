import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkConfigFile, loadConfigFile } from "../../src/server/config.js";
import { runCli } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/io.js";

describe("daemon configuration", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "jobtap-config-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it("reads daemon, resource and job-manager settings", () => {
    const path = write(
      "ok.toml",
      `[daemon]\nshutdown = "wait"\nshutdown-timeout = "5s"\nmax-request-size = "1M"\n` +
        `[resources]\ncores = 4\nmemory = "2G"\n[job-manager]\nqueue-depth = 2\nbatch-window = "5ms"\n`,
    );
    const cfg = loadConfigFile(path, {});
    expect(cfg.settings).toEqual({
      guests: false,
      allowRoot: false,
      maxRequestBytes: 1024 * 1024,
      maxConnections: 1000,
      shutdown: "wait",
      shutdownTimeoutMs: 5000,
      resources: { cores: 4, memory: 2 * 1024 ** 3 },
      queueDepth: 2,
      batchWindowMs: 5,
    });
  });

  it("reports every problem with its TOML path, not just the first", () => {
    write("prio.js", "export default () => {};\n");
    const path = write(
      "bad.toml",
      `[daemon]\nshutdown = "sometimes"\ncolour = "blue"\n[resources]\ncores = -1\n` +
        `[job-manager]\nplugins = [ { load = "./prio.js" }, { load = "nosuch-plugin.js" }, { bogus = 1 } ]\n`,
    );
    const { errors } = checkConfigFile(path, {});
    expect(errors.map((e) => e.message)).toEqual([
      '[daemon].colour: unknown key (expected socket, guests, user, max-request-size, shutdown, shutdown-timeout, http, tls-cert, tls-key, metrics-public, http-rate-limit, http-connections, http-headers-timeout)',
      '[daemon].shutdown: must be "kill" or "wait", got "sometimes"',
      "[resources].cores: must be a non-negative integer",
      "[job-manager.plugins][1].load: nosuch-plugin.js: No such plugin found",
      "[job-manager.plugins][2].bogus: unknown key (expected load, remove, conf, deadline, isolate, heap-mb, restart)",
    ]);
    expect(() => loadConfigFile(path, {})).toThrow("configuration rejected");
  });

  it("refuses Flux's [job-manager] housekeeping and journal-size-limit by TOML path instead of ignoring them", () => {
    const path = write(
      "flux.toml",
      `[job-manager]\njournal-size-limit = 1000\nstop-queues-on-restart = true\n[job-manager.housekeeping]\ncommand = ["true"]\n`,
    );
    const { errors } = checkConfigFile(path, {});
    expect(errors.map((e) => e.message)).toEqual([
      "[job-manager].housekeeping: not supported by jobtap (no housekeeping runs after a job; use the perilog plugin's epilog)",
      "[job-manager].journal-size-limit: not supported by jobtap (its event stream keeps no backlog to limit)",
    ]);
    expect(() => loadConfigFile(path, {})).toThrow("[job-manager].housekeeping: not supported");
  });

  it("names the line and column of a TOML syntax error", () => {
    const path = write("syntax.toml", `[daemon]\nshutdown = \n`);
    const { errors } = checkConfigFile(path, {});
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(new RegExp(`^${path}:2:\\d+: `));
  });

  it("config check prints the problems and exits 1, or ok and 0", async () => {
    const good = write("good.toml", `[job-manager]\nplugins = [ { load = ".priority-default" , remove = ".priority-default" } ]\n`);
    const bad = write("bad.toml", `[job-manager]\nplugins = "x"\n`);
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIO = { stdin: process.stdin, stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd: dir };
    expect(await runCli(["config", "check", "good.toml"], io)).toBe(0);
    expect(out.join("")).toBe(`${good}: ok\n`);
    expect(await runCli(["config", "check", "bad.toml"], io)).toBe(1);
    expect(err.join("")).toBe(`${bad}: [job-manager.plugins]: config must be an array\n`);
  });

  it("reports what the builtins would refuse (limits, queues, resource, a listed perilog), each by path", () => {
    const path = write(
      "limits.toml",
      `[policy.limits]\nduration = "forever"\n[policy.limits.job-size.max]\nncores = -2\n[queues.q]\npolicy = "strict"\n` +
        `[resource]\nexpiration = -1\n[job-manager]\nplugins = [ { load = "perilog" } ]\n` +
        `[job-manager.prolog]\ncommand = ["true"]\ntimeout = "x"\n`,
    );
    expect(checkConfigFile(path, {}).errors.map((e) => e.message)).toEqual([
      "[queues.q.policy]: must be a table",
      "[policy.limits.job-size.max].ncores: size must be -1 (unlimited), or >= 0 (got -2)",
      '[policy.limits].duration: invalid Flux Standard Duration "forever" (expected N[s|m|h|d] or inf)',
      "[resource].expiration: must be a Unix time in seconds >= 0, got -1",
      '[job-manager.prolog].timeout: invalid Flux Standard Duration "x" (expected N[s|m|h|d] or inf)',
    ]);
    expect(() => loadConfigFile(path, {})).toThrow("[policy.limits.job-size.max].ncores");
    // A default queue that is configured, and limits that parse: nothing to report.
    const good = write("queues.toml", `[queues.batch]\n[policy.jobspec.defaults.system]\nqueue = "batch"\n[policy.limits]\nduration = "1h"\n`);
    expect(checkConfigFile(good, {}).errors).toEqual([]);
  });

  it("reads [limits] (bytes, or sizes like \"512K\"), refusing what Linux could never run", () => {
    const ok = write("limits-ok.toml", `[limits]\njobspec-size = "4M"\nargument-size = "64K"\nexec-size = 500000\n`);
    expect(loadConfigFile(ok, {}).settings.limits).toEqual({ jobspecBytes: 4 * 1024 ** 2, argumentBytes: 64 * 1024, execBytes: 500000 });
    const bad = write("limits-bad.toml", `[limits]\nargument-size = 200000\nexec-size = 0\n`);
    expect(checkConfigFile(bad, {}).errors.map((e) => e.message)).toEqual([
      "[limits].argument-size: 200000 is more than Linux accepts for one argument (131071 bytes)",
      "[limits].exec-size: must be at least 1 byte",
    ]);
  });

  it("reads the count limits (jobs-per-user, eventlog-entries, connections) with defaults, naming a bad value", () => {
    expect(loadConfigFile(write("none.toml", ""), {}).settings.maxConnections).toBe(1000);
    const ok = write("counts.toml", `[limits]\njobs-per-user = 50\neventlog-entries = 200\nconnections = 64\nconnections-per-user = 8\n`);
    const s = loadConfigFile(ok, {}).settings;
    expect(s.limits).toEqual({ jobsPerUser: 50, eventlogEntries: 200 });
    expect(s.maxConnections).toBe(64);
    expect(s.connectionsPerUser).toBe(8);
    const bad = write("counts-bad.toml", `[limits]\njobs-per-user = 0\neventlog-entries = "many"\nconnections = 1.5\nconnection = 3\n`);
    expect(checkConfigFile(bad, {}).errors.map((e) => e.message)).toEqual([
      '[limits].connection: unknown key; did you mean "connections"? (expected jobspec-size, argument-size, exec-size, jobspec-bytes-per-user, jobs-per-user, eventlog-entries, connections, connections-per-user, submit-rate, submit-burst)',
      "[limits].jobs-per-user: must be a positive integer, got 0",
      '[limits].eventlog-entries: must be a positive integer, got "many"',
      "[limits].connections: must be a positive integer, got 1.5",
    ]);
  });

  it("reads [limits] jobspec-bytes-per-user as a size, 0 (no limit) included, naming a bad value", () => {
    const read = (v: string) => loadConfigFile(write("stored.toml", `[limits]\njobspec-bytes-per-user = ${v}\n`), {}).settings.limits;
    expect(read('"1G"')).toEqual({ jobspecBytesPerUser: 1024 ** 3 });
    expect(read("0")).toEqual({ jobspecBytesPerUser: 0 });
    const bad = write("stored-bad.toml", `[limits]\njobspec-bytes-per-user = "lots"\n`);
    expect(checkConfigFile(bad, {}).errors.map((e) => e.message)).toEqual([
      '[limits].jobspec-bytes-per-user: must be a byte count such as 1048576 or "16G", got "lots"',
    ]);
  });

  it("a huge integer, a BOM, a syntax error, binary garbage: each a clear one-line message", async () => {
    const big = write("big.toml", `[resources]\nmemory = 99999999999999999999\n[job-manager]\nplugins = [{ load = "x", conf = { n = 1 } }]\n`);
    expect(checkConfigFile(big, {}).errors.map((e) => e.message)).toEqual([
      "[resources].memory: integer out of range (at most 9007199254740991)",
    ]);
    const nested = write("nested.toml", `[job-manager]\nplugins = [{ load = "x", conf = { n = 99999999999999999999 } }]\n`);
    expect(checkConfigFile(nested, {}).errors.map((e) => e.message)).toEqual([
      "[job-manager.plugins][0].conf.n: integer out of range (at most 9007199254740991)",
    ]);
    expect(checkConfigFile(write("bom.toml", "\uFEFF[resources]\ncores = 2\n"), {}).errors).toEqual([]);
    const syntax = write("syntax.toml", "[daemon\nx = 1\n");
    expect(checkConfigFile(syntax, {}).errors.map((e) => e.message)).toEqual([`${syntax}:1:9: Unexpected character, expected whitespace, . or ]`]);
    writeFileSync(join(dir, "garbage.toml"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x1b, 0x5b, 0x32, 0x4a]));
    expect(checkConfigFile(join(dir, "garbage.toml"), {}).errors.map((e) => e.message)).toEqual([
      `${join(dir, "garbage.toml")}:1: not a TOML text file (binary or non-UTF-8 data)`,
    ]);
    // `config check` names the file once, and exits 1 without a stack trace.
    const err: string[] = [];
    const io: CliIO = { stdin: process.stdin, stdout: () => undefined, stderr: (t) => err.push(t), env: {}, cwd: dir };
    expect(await runCli(["config", "check", "syntax.toml"], io)).toBe(1);
    expect(await runCli(["config", "check", "big.toml"], io)).toBe(1);
    expect(err).toEqual([
      `${syntax}:1:9: Unexpected character, expected whitespace, . or ]\n`,
      `${big}: [resources].memory: integer out of range (at most 9007199254740991)\n`,
    ]);
  });

  it("jobtap's tables are strict: an unknown key, or a table named like one of them, is named with the closest known name", () => {
    const path = write("typos.toml", `[job-manger]\nx = 1\n[job-manager]\nqueue_depth = 3\n[limits]\nexec-sise = 1\n[frobnicate]\n`);
    expect(checkConfigFile(path, {}).errors.map((e) => e.message)).toEqual([
      "[job-manger]: unknown table; did you mean [job-manager]?",
      '[job-manager].queue_depth: unknown key; did you mean "queue-depth"? (expected plugins, plugin-path, plugin-deadline, queue-depth, inactive-age-limit, inactive-num-limit, batch-window, prolog, epilog, perilog, stop-queues-on-restart)',
      '[limits].exec-sise: unknown key; did you mean "exec-size"? (expected jobspec-size, argument-size, exec-size, jobspec-bytes-per-user, jobs-per-user, eventlog-entries, connections, connections-per-user, submit-rate, submit-burst)',
    ]);
  });
});

describe("multi-user instance and submit rate settings", () => {
  it("reads [daemon] user, [exec] allow-root, [limits] submit-rate/submit-burst; names bad values", () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-cfg-jtl-"));
    const good = join(dir, "good.toml");
    writeFileSync(good, '[daemon]\nuser = "jobtap"\n[exec]\nallow-root = true\n[limits]\nsubmit-rate = 2.5\nsubmit-burst = 20\n');
    const s = loadConfigFile(good, {}).settings;
    expect([s.user, s.allowRoot, s.limits?.submitRate, s.limits?.submitBurst]).toEqual(["jobtap", true, 2.5, 20]);
    const bad = join(dir, "bad.toml");
    writeFileSync(bad, '[daemon]\nuser = "a b"\n[exec]\nallow-root = "yes"\n[limits]\nsubmit-rate = -1\nsubmit-burst = 0\n');
    expect(checkConfigFile(bad, {}).errors.map((e) => e.message)).toEqual([
      '[daemon].user: must be a user name, got "a b"',
      '[exec].allow-root: must be true or false, got "yes"',
      "[limits].submit-rate: must be a number of jobs per second (0: no limit), got -1",
      "[limits].submit-burst: must be a positive integer, got 0",
    ]);
    rmSync(dir, { recursive: true, force: true });
  });
});
