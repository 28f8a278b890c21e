import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

/** `jobtap condor ARGV`, errors printed as the command line prints them. */
const condor = (argv: string[], io: CliIO) => runCli(["condor", ...argv], io);

const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));

interface Captured {
  io: CliIO;
  out: () => string;
  err: () => string;
}

function capture(cwd: string, stdin = "", env: Record<string, string> = {}): Captured {
  let out = "";
  let err = "";
  const io: CliIO = {
    stdin: Readable.from([stdin]),
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    env,
    cwd,
  };
  return { io, out: () => out, err: () => err };
}

const ADS = 'ClusterId = 1\nOwner = "alice"\nRequestMemory = 1024\n\nClusterId = 2\nOwner = "bob"\nRequestMemory = 4096\n';

describe("jobtap condor transform", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-condor-cli-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("applies --rules to every ad and prints condor_transform_ads' long form: sorted, a blank line after each ad, status 1", async () => {
    writeFileSync(join(dir, "jobs.ads"), ADS);
    writeFileSync(join(dir, "x.rules"), 'if RequestMemory > 2048\n  SET Big true\nendif\nSET Site "$(SITE:local)"\nRENAME Owner User\n');
    const c = capture(dir);
    const status = await condor(["transform", "--rules", "x.rules", "--ad", "jobs.ads"], c.io);
    expect(c.err()).toBe("");
    expect(status).toBe(1);
    expect(c.out()).toBe(
      'ClusterId = 1\nRequestMemory = 1024\nSite = "local"\nUser = "alice"\n\n' +
        'Big = true\nClusterId = 2\nRequestMemory = 4096\nSite = "local"\nUser = "bob"\n\n',
    );
  });

  it("reads ads from stdin: blank-only lines separate ads, # lines are comments, private attributes are not printed", async () => {
    writeFileSync(join(dir, "x.rules"), "DELETE /^Request/\n");
    const input = "# first job\nb = 1\n  # indented comment\nRequestCpus = 2\n_a = 0\nClaimId = \"secret\"\n \t \n\n# second\nB = 2\n_condor_privX = 1\n\nRequestCpus = 1\n";
    const c = capture(dir, input);
    expect(await condor(["transform", "--rules", "x.rules"], c.io)).toBe(1);
    expect(c.err()).toBe("");
    // the third ad has nothing left to print, so it is not written at all
    expect(c.out()).toBe("_a = 0\nb = 1\n\nB = 2\n\n");
  });

  it("no ads in the input: nothing written, status 0", async () => {
    writeFileSync(join(dir, "x.rules"), "SET A 1\n");
    const c = capture(dir, "\n# only a comment\n\n");
    expect(await condor(["transform", "--rules", "x.rules"], c.io)).toBe(0);
    expect(c.out()).toBe("");
  });

  it("a failing transform: that ad is not written, later ads are not read, status 255", async () => {
    writeFileSync(join(dir, "site.cfg"), "SITE = cluster-7\n");
    writeFileSync(join(dir, "x.rules"), 'SET Site "$(SITE)"\nif NoSuch > 1\nSET X 1\nendif\n');
    writeFileSync(join(dir, "ads"), "NoSuch = 5\n\nA = 1\n\nNoSuch = 9\n");
    const c = capture(dir);
    expect(await condor(["transform", "--rules", "x.rules", "--config", "site.cfg", "--ad", "ads"], c.io)).toBe(255);
    expect(c.out()).toBe('NoSuch = 5\nSite = "cluster-7"\nX = 1\n\n');
    expect(c.err()).toMatch(/^error: ads: transform of the ad at line 3 failed: x\.rules:2: if NoSuch > 1: is not a valid if condition/);
  });

  it("a bad rules file is an error naming file and line", async () => {
    writeFileSync(join(dir, "bad.rules"), "SET A 1\nMUNGE B\n");
    const c = capture(dir, "A = 1\n");
    expect(await condor(["transform", "--rules", "bad.rules"], c.io)).toBe(1);
    expect(c.err()).toBe("jobtap condor: bad.rules:2: MUNGE is not a valid transform keyword\n");
  });

  it("--config FILE --route NAME applies pre-route, route and post-route transforms", async () => {
    const c = capture(dir, 'Owner = "alice"\nWantJobRouter = true\n');
    const status = await condor(["transform", "--config", join(FIXTURES, "router-example.config"), "--route", "Site2"], c.io);
    expect(status).toBe(1);
    expect(c.out()).toBe('ArcRte = "ENV/PROXY"\nOwner = "alice"\nRequirements = true\n\n');
    expect(c.err()).toMatch(/warning: .*router-example\.config:27: SET PeriodicRemove/);
  });

  it("a line that is not an attribute stops the input there (HTCondor drops that ad and the rest); we say where", async () => {
    writeFileSync(join(dir, "x.rules"), "SET A 1\n");
    writeFileSync(join(dir, "bad.ads"), "A = 1\n\nB = 2\nC = (1 +\n\nD = 4\n");
    const c = capture(dir);
    expect(await condor(["transform", "--rules", "x.rules", "--ad", "bad.ads"], c.io)).toBe(1);
    expect(c.out()).toBe("A = 1\n\n");
    expect(c.err()).toMatch(/^error: bad\.ads:4: .*; the ads from there on were not read\n$/);
  });

  it("usage errors exit 2", async () => {
    const c = capture(dir);
    expect(await condor(["transform"], c.io)).toBe(2);
    expect(c.err()).toMatch(/needs --rules FILE/);
    expect(await condor(["frobnicate"], capture(dir).io)).toBe(2);
  });
});

describe("jobtap condor config", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-condor-cli-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("prints expanded values with their source, like condor_config_val -v", async () => {
    writeFileSync(join(dir, "c.cfg"), "ROOT = /opt\nMODULES = $(ROOT)/modules\nHOMEDIR = $ENV(HOME_X)\n");
    const c = capture(dir, "", { HOME_X: "/home/x" });
    expect(await condor(["config", "c.cfg", "modules", "HOMEDIR"], c.io)).toBe(0);
    const file = join(dir, "c.cfg");
    expect(c.out()).toBe(
      `MODULES = /opt/modules\n # at: ${file}:2\n # raw: MODULES = $(ROOT)/modules\n` +
        `HOMEDIR = /home/x\n # at: ${file}:3\n # raw: HOMEDIR = $ENV(HOME_X)\n`,
    );
  });

  it("an undefined name is reported with status 1; no names prints everything", async () => {
    writeFileSync(join(dir, "c.cfg"), "A = 1\nB =\nR @=x\nline one\nline two\n@x\n");
    const c = capture(dir);
    expect(await condor(["config", "c.cfg", "A", "B"], c.io)).toBe(1);
    expect(c.err()).toBe("Not defined: B\n");
    const all = capture(dir);
    expect(await condor(["config", "c.cfg"], all.io)).toBe(0);
    expect(all.out()).toBe(`A = 1\n # at: ${join(dir, "c.cfg")}:1\nR @=end\nline one\nline two\n@end\n # at: ${join(dir, "c.cfg")}:3\n`);
  });

  it("a config error names file and line", async () => {
    writeFileSync(join(dir, "c.cfg"), "A = 1\nR @=x\nnever closed\n");
    const c = capture(dir);
    expect(await condor(["config", "c.cfg"], c.io)).toBe(1);
    expect(c.err()).toBe(`jobtap condor: ${join(dir, "c.cfg")}:2: unterminated @=x block for R (no closing @x line)\n`);
  });
});

describe("jobtap condor routes", () => {
  it("summarises the route table of a config", async () => {
    const c = capture(FIXTURES);
    expect(await condor(["routes", "router-example.config"], c.io)).toBe(0);
    expect(c.out()).toBe(
      "pre-route transform Defaults\n" +
        'route Site1: requirements (source constraint only); MaxJobs 200 MaxIdleJobs 10 universe 9 GridResource "batch slurm"\n' +
        'route Site2: requirements (source constraint only); MaxJobs 200 MaxIdleJobs 10 universe 9 GridResource "arc site2.edu"\n' +
        'route CondorSite: requirements (source constraint only); MaxJobs 200 MaxIdleJobs 20 universe 9 GridResource "condor submit.site3.edu cm.site3.edu"\n',
    );
  });
});

describe("jobtap condor routes --convert-old-routes", () => {
  it("prints deprecated JOB_ROUTER_ENTRIES in the current syntax, which then loads the same routes without the knob", async () => {
    const c = capture(FIXTURES);
    expect(await condor(["routes", "--convert-old-routes", "router-old-example.config"], c.io)).toBe(0);
    expect(c.out()).toMatch(/^JOB_ROUTER_ROUTE_NAMES = Site_1 Site_2 Site_3\nJOB_ROUTER_ROUTE_Site_1 @=jrt\n/);
    const out = mkdtempSync(join(tmpdir(), "jobtap-condor-cli-"));
    writeFileSync(join(out, "new.cfg"), c.out());
    const again = capture(out);
    expect(await condor(["routes", "new.cfg"], again.io)).toBe(0);
    rmSync(out, { recursive: true, force: true });
    expect(again.out()).toMatch(/^route Site_1: requirements WantJobRouter =\?= true; MaxJobs 200 MaxIdleJobs 10 universe 9 GridResource "batch slurm"\n/);
  });
});

describe("wiring into the jobtap dispatcher", () => {
  it("jobtap condor config runs through runCli", async () => {
    const { runCli } = await import("../../src/cli/main.js");
    const c = capture(FIXTURES);
    expect(await runCli(["condor", "config", "cron-example.config", "STARTD_CRON_JOBLIST"], c.io)).toBe(0);
    expect(c.out()).toMatch(/^STARTD_CRON_JOBLIST = test date foo\n # at: .*cron-example\.config:\d+\n/);
  });
});
