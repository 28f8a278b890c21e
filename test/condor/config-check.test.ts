/**
 * `jobtap config check` (checkConfigFile, which the daemon's start and reload also run)
 * validates the condor-cron, condor-fetch and condor-router `conf` tables with the readers
 * their `conf.update` uses, naming the TOML path or the HTCondor file and line.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkConfigFile } from "../../src/server/config.js";

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Writes `files` into a fresh directory and checks its `jobtap.toml`. */
function check(files: Record<string, string>): string[] {
  dir = mkdtempSync(join(tmpdir(), "jobtap-condor-check-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text.replaceAll("DIR", dir));
  return checkConfigFile(join(dir, "jobtap.toml"), {}).errors.map((e) => e.message);
}

/** A config loading `plugin` with the TOML `conf` lines, after one harmless plugin entry. */
const loading = (plugin: string, conf: string) =>
  `[[job-manager.plugins]]\nload = "perilog"\n\n[[job-manager.plugins]]\nload = "${plugin}"\n[job-manager.plugins.conf]\n${conf}\n`;

describe("config check: condor-router", () => {
  it("routes = 5 is reported with the entry's TOML path", () => {
    const errors = check({ "jobtap.toml": loading("condor-router", "routes = 5") });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\[job-manager\.plugins\]\[1\]\.conf\.routes: /);
  });

  it("an unknown key is reported", () => {
    expect(check({ "jobtap.toml": loading("condor-router", "rutes = {}") })[0]).toMatch(/^\[job-manager\.plugins\]\[1\]\.conf\.rutes/);
  });

  it("a relative hook path in a pasted HTCondor config is reported with FILE:LINE", () => {
    const errors = check({
      "60-router": "JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS true\n@rt\nJOB_ROUTER_HOOK_KEYWORD = R\nR_HOOK_TRANSLATE_JOB = hooks/translate\n",
      "jobtap.toml": loading("condor-router", 'condor_config = "DIR/60-router"'),
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`[job-manager.plugins][1].conf: condor-router: ${dir}/60-router:6: R_HOOK_TRANSLATE_JOB = hooks/translate: a hook path must be absolute`);
  });

  it("the manual's example routes pass", () => {
    const routes = 'JOB_ROUTER_ROUTE_NAMES = Site1\nJOB_ROUTER_ROUTE_Site1 @=rt\n  GridResource = "batch slurm"\n  REQUIREMENTS WantJobRouter\n@rt\n';
    expect(check({ "60-router": routes, "jobtap.toml": loading("condor-router", 'condor_config = "DIR/60-router"') })).toEqual([]);
  });
});

describe("config check: condor-fetch", () => {
  it("an unparsable FetchWorkDelay is reported with FILE:LINE", () => {
    const errors = check({
      "50-fetch": "STARTD_JOB_HOOK_KEYWORD = TEST\nFetchWorkDelay = ifThenElse(\n",
      "jobtap.toml": loading("condor-fetch", 'condor_config = "DIR/50-fetch"'),
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`[job-manager.plugins][1].conf: condor-fetch: ${dir}/50-fetch:2: FetchWorkDelay = ifThenElse(`);
  });

  it("a relative hook path and an unknown key are reported with their TOML paths", () => {
    expect(check({ "jobtap.toml": loading("condor-fetch", 'keyword = "T"\nhooks = { T = { fetch_work = "bin/fetch" } }') })[0]).toMatch(
      /^\[job-manager\.plugins\]\[1\]\.conf\.hooks\.T\.fetch_work: T_HOOK_FETCH_WORK = bin\/fetch: a hook path must be absolute/,
    );
    expect(check({ "jobtap.toml": loading("condor-fetch", "fetch_delay = 3") })[0]).toMatch(/^\[job-manager\.plugins\]\[1\]\.conf\.fetch_delay: unknown key/);
  });
});

describe("config check: condor-cron", () => {
  it("an unknown key and a mistyped job key are reported with their TOML paths", () => {
    expect(check({ "jobtap.toml": loading("condor-cron", "startd_jobs = 1") })[0]).toMatch(/^\[job-manager\.plugins\]\[1\]\.conf\.startd_jobs: unknown key/);
    expect(check({ "jobtap.toml": loading("condor-cron", 'startd = { jobs = { T = { args = "x" } } }') })[0]).toMatch(
      /^\[job-manager\.plugins\]\[1\]\.conf\.startd\.jobs\.T\.args: must be an array of strings/,
    );
  });

  it("nothing is checked for a plugin the config does not load", () => {
    expect(check({ "jobtap.toml": "[[job-manager.plugins]]\nload = \"perilog\"\n" })).toEqual([]);
  });
});
