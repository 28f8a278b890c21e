/**
 * jobtap as a site or a plugin author gets it (issue 34): `npm pack` on a copy of the
 * sources (its `prepack` cleans and builds), `npm install -g --prefix TMP` of the tarball,
 * and the installed daemon and CLI run a real job with no repository around; then a plugin
 * project installs the tarball, type-checks a TypeScript plugin against "jobtap/plugin" with
 * its own tsc, and the installed daemon loads it.
 *
 * better-sqlite3 is native: its install script compiles SQLite from source (~2 min here, no
 * prebuilt binary reachable). Installs therefore run with --ignore-scripts (jobtap itself
 * has no install scripts; its dependencies are fetched and laid out by npm as usual), and
 * the test then puts in the better_sqlite3.node this checkout's `npm ci` already compiled
 * for this same Node, with the package files it was built from, in place of the unbuilt copy.
 * Everything else the daemon runs comes from the tarball.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, waitFor } from "./harness.js";

const TMP = mkdtempSync(join(tmpdir(), "jobtap-pkg-"));
const PREFIX = join(TMP, "prefix");
const STATEDIR = join(TMP, "state");
const SOCKET = join(TMP, "jobtap.sock");
const PROJECT = join(TMP, "my-plugin");
/** Nothing of the repository: only the installed prefix and Node itself on PATH. */
const HOME = process.env.HOME ?? "/root";
const ENV: NodeJS.ProcessEnv = {
  PATH: [join(PREFIX, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(":"),
  HOME: TMP,
  // npm keeps the user's cache, settings and proxy (the registry is reached for the
  // dependencies that are not cached yet).
  npm_config_cache: process.env.npm_config_cache ?? join(HOME, ".npm"),
  npm_config_userconfig: process.env.npm_config_userconfig ?? join(HOME, ".npmrc"),
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(https?_proxy|no_proxy)$/i.test(k))),
  JOBTAP_SOCKET: SOCKET,
};
const NPM_INSTALL = ["--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"];

let tarball = "";
let daemon: ChildProcess | undefined;
let daemonLog = "";

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a long command (npm, tsc) without blocking the test worker, as spawnSync would. */
function run(cmd: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d) => (stdout += d.toString()));
    c.stderr.on("data", (d) => (stderr += d.toString()));
    c.once("error", reject);
    c.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

async function ok(cmd: string, args: string[], cwd: string): Promise<string> {
  const r = await run(cmd, args, cwd);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The installed CLI, found on PATH like a user's shell would (short: run synchronously). */
function jobtap(...args: string[]): SpawnSyncReturns<string> {
  return spawnSync("jobtap", args, { cwd: TMP, env: ENV, encoding: "utf8", timeout: 60_000 });
}

/** A copy of the sources (no dist, no .git) whose node_modules is this checkout's. */
function copySources(): string {
  const repo = join(TMP, "src-copy");
  const skip = new Set(["node_modules", "dist", ".git"]);
  cpSync(ROOT, repo, { recursive: true, filter: (src) => !skip.has(relative(ROOT, src).split("/")[0] ?? "") });
  symlinkSync(realpathSync(join(ROOT, "node_modules")), join(repo, "node_modules"));
  // A stale module from an older build: prepack's clean must keep it out of the tarball.
  mkdirSync(join(repo, "dist", "src"), { recursive: true });
  writeFileSync(join(repo, "dist", "src", "stale-module.js"), "export {};\n");
  return repo;
}

/** Replaces the installed, unbuilt better-sqlite3 in `nodeModules` by this checkout's built one. */
function useBuiltSqlite(nodeModules: string): void {
  const built = realpathSync(join(ROOT, "node_modules", "better-sqlite3"));
  const target = join(nodeModules, "better-sqlite3");
  expect(existsSync(target)).toBe(true);
  rmSync(target, { recursive: true });
  const keep = (src: string) => {
    const rel = relative(built, src);
    // The compiled module only, not the C sources and object files it was built from.
    return !/^(deps|src|build\/(?!Release$|Release\/better_sqlite3\.node$))/.test(rel);
  };
  cpSync(built, target, { recursive: true, filter: keep });
  expect(existsSync(join(target, "build", "Release", "better_sqlite3.node"))).toBe(true);
}

async function startInstalledDaemon(): Promise<void> {
  const child = spawn("jobtap", ["daemon", "--statedir", STATEDIR, "--socket", SOCKET], { cwd: TMP, env: ENV, stdio: ["ignore", "ignore", "pipe"] });
  child.stderr?.on("data", (d) => (daemonLog += d.toString()));
  daemon = child;
  let exited = false;
  child.once("exit", () => (exited = true));
  await waitFor(() => exited || (existsSync(SOCKET) && jobtap("jobs").status === 0), 30_000, "the installed daemon to answer");
  if (exited) throw new Error(`the installed daemon exited at start:\n${daemonLog}`);
}

describe("npm pack and install", { timeout: 300_000 }, () => {
  beforeAll(async () => {
    const repo = copySources();
    const out = (await ok("npm", ["pack", "--silent", "--pack-destination", TMP], repo)).trim().split("\n").pop() ?? "";
    tarball = join(TMP, out);
    rmSync(repo, { recursive: true, force: true });
  }, 300_000);
  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      const closed = new Promise((r) => daemon?.once("close", r));
      daemon.kill("SIGTERM");
      await closed;
    }
    rmSync(TMP, { recursive: true, force: true });
  });

  it("packs the freshly built code and what it reads at run time, without tests, benches or sources", async () => {
    const files = (await ok("tar", ["-tzf", tarball], TMP)).split("\n").filter(Boolean).map((f) => f.replace(/^package\//, ""));
    for (const f of [
      "package.json",
      "README.md",
      "bin/jobtap",
      "dist/src/cli/main.js",
      "dist/src/index.d.ts",
      "dist/src/plugin.js",
      "dist/src/plugin.d.ts",
      "dist/src/plugins/resolve-hooks.js",
      "dist/src/manager/store/sqlite-thread.js",
      "dist/src/manager/base/mnemonic-words.js",
      "dist/plugins-builtin/condor-router/index.js",
      "dist/plugins-builtin/exec-slurm/index.js",
      "dist/web/index.html",
      "dist/web/assets/main.js",
      "dist/web/assets/style.css",
      "contrib/jobtap.service",
      "docs/site.md",
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files).not.toContain("dist/src/stale-module.js");
    expect(files.filter((f) => /^(test|bench|src|plugins-builtin|dist\/bench|dist\/test)\/|\.map$|^tsconfig|^vitest/.test(f))).toEqual([]);
  });

  it("installs globally into an empty prefix: the installed daemon and CLI run a real job", async () => {
    await ok("npm", ["install", "-g", "--prefix", PREFIX, ...NPM_INSTALL, tarball], TMP);
    useBuiltSqlite(join(PREFIX, "lib", "node_modules", "jobtap", "node_modules"));
    expect(jobtap("--version").stdout).toMatch(/0\.1\.0/);
    await startInstalledDaemon();
    const out = join(TMP, "answer.out");
    const r = jobtap("submit", "--wait", "--output", out, "--", "sh", "-c", "echo $((6 * 7))");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(readFileSync(out, "utf8")).toBe("42\n");
    const jobs = JSON.parse(jobtap("jobs", "-a", "--json").stdout) as { id: string; result?: string }[];
    expect(jobs).toEqual([expect.objectContaining({ id: r.stdout.trim(), result: "COMPLETED" })]);
    // The daemon's code is the installed one, not this checkout's.
    expect(realpathSync(join(PREFIX, "bin", "jobtap"))).toBe(join(PREFIX, "lib", "node_modules", "jobtap", "bin", "jobtap"));
  });

  it("gives a plugin project jobtap/plugin with its types; the installed daemon loads the plugin", async () => {
    mkdirSync(PROJECT);
    writeFileSync(join(PROJECT, "package.json"), JSON.stringify({ name: "my-plugin", private: true, type: "module" }));
    await ok("npm", ["install", ...NPM_INSTALL, tarball], PROJECT);
    // jobtap's declarations name Node's types (streams, NodeJS.Signals): a plugin project
    // type-checks with @types/node, as any Node project does.
    const typesNode = JSON.parse(readFileSync(join(ROOT, "node_modules", "@types", "node", "package.json"), "utf8")).version as string;
    await ok("npm", ["install", "-D", ...NPM_INSTALL, `@types/node@${typesNode}`], PROJECT);
    writeFileSync(join(PROJECT, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, outDir: "out" },
      files: ["my-limit.ts", "mistyped.ts"],
    }));
    writeFileSync(join(PROJECT, "my-limit.ts"), PLUGIN);
    // The types are real: a wrong call is a compile error at its line (one tsc run checks
    // both files; tsc still emits the correct one).
    writeFileSync(join(PROJECT, "mistyped.ts"), PLUGIN.replace('p.reject("my-limit: at most 1h")', "p.reject(42)"));
    const tsc = await run(process.execPath, [join(PROJECT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], PROJECT);
    expect(tsc.status).toBe(2);
    expect(tsc.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^mistyped\.ts\(10,\d+\): error TS2345: Argument of type 'number' is not assignable/),
    ]);
    expect(existsSync(join(PROJECT, "out", "my-limit.js"))).toBe(true);

    expect(jobtap("plugin", "load", join(PROJECT, "out", "my-limit.js"))).toMatchObject({ status: 0, stderr: "" });
    const long = jobtap("submit", "-t", "2h", "--", "true");
    expect(long.status).toBe(1);
    expect(long.stderr).toContain("my-limit: at most 1h");
    expect(jobtap("submit", "--wait", "-t", "10m", "--", "true").status).toBe(0);
    expect(jobtap("plugin", "list").stdout).toBe("my-limit\n");
    expect(JSON.parse(jobtap("plugin", "query", "my-limit").stdout)).toMatchObject({ seen: 2 });
  });
});

/** A plugin as its author would write it, importing values and types from "jobtap/plugin". */
const PLUGIN = `import { parseFSD, type PluginDefinition } from "jobtap/plugin";

const plugin: PluginDefinition = {
  name: "my-limit",
  setup(p) {
    let seen = 0;
    p.on("job.validate", (job) => {
      seen++;
      const d = job.jobspec.attributes?.system?.duration;
      return typeof d === "number" && d > parseFSD("1h") ? p.reject("my-limit: at most 1h") : undefined;
    });
    p.on("plugin.query", () => ({ seen }));
  },
};
export default plugin;
`;
