import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Evaluator, parseOldAd, unparse } from "../../src/classad/index.js";
import { TransformRun } from "../../src/condor/apply.js";
import { parseCondorConfig, readCondorConfigFile } from "../../src/condor/config-reader.js";
import { convertOldRouteText } from "../../plugins-builtin/condor-router/old-routes.js";
import { readRouterConfig } from "../../plugins-builtin/condor-router/routes-condor.js";
import { routerConfigFromToml } from "../../plugins-builtin/condor-router/routes-toml.js";
import type { RouterConfig } from "../../plugins-builtin/condor-router/routes.js";
import { isJobtapError } from "../../src/errors.js";

const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));
const EXAMPLE = join(FIXTURES, "router-example.config");

/** Route objects without source positions (which necessarily differ between front ends). */
function withoutSources(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSources);
  if (value instanceof RegExp || typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (k !== "origin" && k !== "line") out[k] = withoutSources(v);
  return out;
}

function routerError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(isJobtapError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error("expected an error");
}

describe("the seed router example", () => {
  const router = readRouterConfig(readCondorConfigFile(EXAMPLE));

  it("reads the router-wide knobs with their defaults", () => {
    expect(router.settings).toEqual({
      sourceJobConstraint: "WantJobRouter",
      defaultMaxJobsPerRoute: 200,
      defaultMaxIdleJobsPerRoute: 10,
      maxJobs: -1,
      pollingPeriod: 10,
      roundRobinSelection: false,
      name: "jobrouter",
      releaseOnHold: true,
      mirrorUpdateLag: 600,
      entriesRefresh: 0,
    });
  });

  it("has three routes in ROUTE_NAMES order with typed settings", () => {
    expect(router.routes.map((r) => r.name)).toEqual(["Site1", "Site2", "CondorSite"]);
    const base = { maxJobs: 200, maxIdleJobs: 10, failureRateThreshold: 0.03, targetUniverse: 9 };
    expect(router.routes.map((r) => r.settings)).toEqual([
      { ...base, gridResource: "batch slurm" },
      { ...base, gridResource: "arc site2.edu" },
      { ...base, maxIdleJobs: 20, gridResource: "condor submit.site3.edu cm.site3.edu" },
    ]);
    expect(router.routes[1]!.transform.steps).toEqual([
      { op: "macro", line: 1, name: "GridResource", value: '"arc site2.edu"', append: false },
      { op: "SET", line: 2, attr: "ArcRte", value: '"ENV/PROXY"' },
    ]);
  });

  it("has the Defaults pre-route transform, its steps mapped to file lines", () => {
    expect(router.preRouteTransforms.map((t) => t.name)).toEqual(["Defaults"]);
    const defaults = router.preRouteTransforms[0]!.transform;
    expect(defaults.steps.map((s) => s.op)).toEqual(["SET", "DELETE", "SET"]);
    expect(defaults.origin.lines).toEqual([27, 30, 31]);
    expect(router.postRouteTransforms).toEqual([]);
  });

  it("routes a job: pre-route then route; the example's unbalanced ')' skips that SET with a warning", () => {
    const job = parseOldAd('Owner = "alice"\nWantJobRouter = true\nJobStatus = 1\nRequirements = Arch == "X86_64"\n');
    const run = new TransformRun({ evaluator: new Evaluator() });
    const pre = run.apply(router.preRouteTransforms[0]!.transform, job);
    if (!pre.ok) throw new Error(pre.error);
    expect(pre.warnings).toHaveLength(1);
    expect(pre.warnings[0]).toMatch(/router-example\.config:27: SET PeriodicRemove: .* is not a valid expression/);
    const routed = run.apply(router.routes[1]!.transform, pre.ad);
    if (!routed.ok) throw new Error(routed.error);
    expect(routed.ad.has("WantJobRouter")).toBe(false);
    expect(unparse(routed.ad.lookup("Requirements")!, true)).toBe("true");
    expect(unparse(routed.ad.lookup("ArcRte")!, true)).toBe('"ENV/PROXY"');
    expect(routed.ad.has("GridResource")).toBe(false); // a route macro, not a job edit
  });
});

describe("TOML routes", () => {
  const toml = {
    source_job_constraint: "WantJobRouter",
    default_max_jobs_per_route: 200,
    default_max_idle_jobs_per_route: 10,
    route_names: ["Site1", "Site2", "CondorSite"],
    pre_route_transform_names: ["Defaults"],
    routes: {
      Site1: { transform: 'GridResource = "batch slurm"\n' },
      Site2: { transform: 'GridResource = "arc site2.edu"\nSET ArcRte = "ENV/PROXY"\n' },
      CondorSite: {
        transform: 'MaxIdleJobs = 20\nGridResource = "condor submit.site3.edu cm.site3.edu"\nSET remote_jobuniverse = 5\n',
      },
    },
    transforms: {
      Defaults: {
        transform:
          "# remove routed job if it goes on hold or stays idle for over 6 hours\n" +
          "SET PeriodicRemove = JobStatus == 5 || \\\n(JobStatus == 1 && (time() - QDate) > 3600*6))\n" +
          "DELETE WantJobRouter\nSET Requirements = true\n",
      },
    },
  };

  it("produce the same route objects as the HTCondor config form", () => {
    const fromConfig = readRouterConfig(readCondorConfigFile(EXAMPLE));
    const fromToml = routerConfigFromToml(toml, "router");
    expect(withoutSources(fromToml)).toEqual(withoutSources({ ...fromConfig, settings: { ...fromConfig.settings } }));
    expect(fromToml.routes[2]!.transform.origin.file).toBe("router.routes.CondorSite.transform");
  });

  it("route order defaults to the table order", () => {
    const r = routerConfigFromToml({ source_job_constraint: "true", routes: { B: { transform: "" }, A: { transform: "" } } });
    expect(r.routes.map((x) => x.name)).toEqual(["B", "A"]);
  });

  it("errors name the TOML path", () => {
    expect(routerError(() => routerConfigFromToml({ max_jobs: "ten" }, "router"))).toBe(
      'router.max_jobs: expected a integer, got "ten"',
    );
    expect(routerError(() => routerConfigFromToml({ bogus: 1 }, "router"))).toMatch(/^router\.bogus: unknown router setting/);
    expect(routerError(() => routerConfigFromToml({ routes: { A: { text: "x" } } }, "router"))).toBe(
      'router.routes.A.text: unknown key (expected "transform")',
    );
    expect(
      routerError(() =>
        routerConfigFromToml({ source_job_constraint: "true", routes: { A: { transform: "SET A 1\nFROB x\n" } } }, "router"),
      ),
    ).toBe("router.routes.A.transform:2: FROB is not a valid transform keyword");
  });
});

describe("bad route tables", () => {
  const cfg = (text: string): RouterConfig => readRouterConfig(parseCondorConfig(text, { file: "r.cfg" }));

  it("a route named in ROUTE_NAMES but never defined", () => {
    expect(routerError(() => cfg("JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true\nJOB_ROUTER_ROUTE_NAMES = A B\nJOB_ROUTER_ROUTE_A = SET X 1\n"))).toBe(
      "r.cfg:2: JOB_ROUTER_ROUTE_NAMES: route B is listed but never defined",
    );
  });

  it("a route whose body is only whitespace counts as undefined", () => {
    expect(routerError(() => cfg("JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true\nJOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A =\n"))).toMatch(
      /route A is listed but never defined/,
    );
  });

  it("a route without REQUIREMENTS and no source constraint never matches everything", () => {
    const text = "JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\nGridResource = \"x\"\n@rt\n";
    expect(routerError(() => cfg(text))).toBe(
      "r.cfg:3: route A has no REQUIREMENTS and there is no JOB_ROUTER_SOURCE_JOB_CONSTRAINT",
    );
    expect(cfg(text.replace("@=rt\n", "@=rt\nREQUIREMENTS Owner == \"a\"\n")).routes[0]!.transform.requirements).toBe('Owner == "a"');
  });

  it("an unknown command in a route names the config file line", () => {
    const text = "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true\nJOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\nSET X 1\n# note\nSETT Y 2\n@rt\n";
    expect(routerError(() => cfg(text))).toBe("r.cfg:6: SETT is not a valid transform keyword");
  });

  it("a missing pre-route transform disables nothing silently: it is an error", () => {
    const text = "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true\nJOB_ROUTER_ROUTE_NAMES =\nJOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = Gone\n";
    expect(routerError(() => cfg(text))).toBe("r.cfg:3: JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES: transform Gone is listed but never defined");
  });

  it("bad typed route macros name their line; no ROUTE_NAMES means routing disabled", () => {
    const text = "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true\nJOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\nMaxJobs = lots\n@rt\n";
    expect(routerError(() => cfg(text))).toBe("r.cfg:4: MaxJobs = lots is not an integer");
    const none = cfg("JOB_ROUTER_ROUTE_A = SET X 1\n");
    expect(none.routes).toEqual([]);
    expect(none.warnings).toEqual(["JOB_ROUTER_ROUTE_NAMES is not set: routing is disabled"]);
  });

  it("route macros: UNIVERSE, TargetUniverse, SendIDTokens, EditJobInPlace, expansion from config", () => {
    const text = [
      "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true",
      "SITE_MAX = 7",
      "JOB_ROUTER_ROUTE_NAMES = A B",
      "JOB_ROUTER_ROUTE_A @=rt",
      "UNIVERSE vanilla",
      "MaxJobs = $(SITE_MAX)",
      "EditJobInPlace = true",
      "SendIDTokens =",
      "JobFailureTest = RemoteWallClockTime < 1800",
      "@rt",
      "JOB_ROUTER_ROUTE_B @=rt",
      "TargetUniverse = 5",
      'SendIDTokens = "tokA, tokB"',
      "FailureRateThreshold = 0.5",
      "@rt",
    ].join("\n");
    const [a, b] = cfg(text).routes;
    expect(a!.settings).toMatchObject({ targetUniverse: 5, maxJobs: 7, editJobInPlace: "true", sendIdTokens: [] });
    expect(a!.settings.jobFailureTest).toBe("RemoteWallClockTime < 1800");
    expect(b!.settings).toMatchObject({ targetUniverse: 5, failureRateThreshold: 0.5, sendIdTokens: ["tokA", "tokB"] });
    expect(b!.settings.editJobInPlace).toBeUndefined();
  });
});

describe("route attributes jobtap does not honour", () => {
  it("SendIDTokens, the X509 ones and JobShouldBeSandboxed give one warning naming them and their routes", () => {
    const c = parseCondorConfig(
      'JOB_ROUTER_ROUTE_NAMES = A B\nJOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS true\n  SendIDTokens = "t1"\n  JobShouldBeSandboxed = true\n@rt\n' +
        'JOB_ROUTER_ROUTE_B @=rt\n  REQUIREMENTS true\n  UseSharedX509UserProxy = true\n  SharedX509UserProxy = "/p"\n  JobShouldBeSandboxed = true\n@rt\n',
      { file: "u.cfg" },
    );
    const warnings = readRouterConfig(c).warnings.filter((w) => w.includes("not honoured"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("SendIDTokens (route A); UseSharedX509UserProxy (route B); SharedX509UserProxy (route B); JobShouldBeSandboxed (routes A, B)");
    expect(readRouterConfig(parseCondorConfig("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A = REQUIREMENTS true\n")).warnings).toEqual([]);
  });
});

describe("deprecated JOB_ROUTER_ENTRIES / JOB_ROUTER_DEFAULTS", () => {
  const old = readCondorConfigFile(join(FIXTURES, "router-old-example.config"));

  it("are used only with JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True (HTCondor 25); else ignored with a warning naming the knob's line", () => {
    const ignored = readRouterConfig(old);
    expect(ignored.routes).toEqual([]);
    expect(ignored.warnings[0]).toMatch(/router-old-example\.config:19: JOB_ROUTER_ENTRIES ignored: .*JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True/);
    const enabled = parseCondorConfig("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = True\n", { into: readCondorConfigFile(join(FIXTURES, "router-old-example.config")), file: "on.cfg" });
    expect(readRouterConfig(enabled).routes.map((r) => r.name)).toEqual(["Site_1", "Site_2", "Site_3"]);
  });

  it("converts the seed example as HTCondor's converter does", () => {
    const routes = convertOldRouteText(old.get("JOB_ROUTER_DEFAULTS"), old.get("JOB_ROUTER_ENTRIES")!);
    expect(routes.map((r) => r.name)).toEqual(["Site_1", "Site_2", "Site_3"]);
    expect(routes[0]!.text).toBe(
      [
        "# autoconversion of route 'Site_1' from old route syntax",
        "NAME Site_1",
        "REQUIREMENTS WantJobRouter =?= true",
        'GridResource = "batch slurm"',
        "MaxIdleJobs = 10",
        "MaxJobs = 200",
        "DELETE WantJobRouter",
        "SET PeriodicRemove JobStatus == 5 || (JobStatus == 1 && (time() - QDate) > 3600 * 6)",
        "SET requirements true",
        "",
      ].join("\n"),
    );
    expect(routes[2]!.text).toContain("SET remote_jobuniverse 5\nSET requirements true\n");
  });

  it("gives the same routes as the equivalent new-syntax configuration", () => {
    const converted = readRouterConfig(old, { convertOldRoutes: true });
    expect(converted.warnings[0]).toMatch(/deprecated ClassAd route syntax converted/);
    const body = (name: string, grid: string, extra: string[]) =>
      [
        `JOB_ROUTER_ROUTE_${name} @=rt`,
        `NAME ${name}`,
        "REQUIREMENTS WantJobRouter =?= true",
        `GridResource = "${grid}"`,
        "MaxIdleJobs = 10",
        "MaxJobs = 200",
        "DELETE WantJobRouter",
        ...extra.filter((l) => l < "SET P"),
        "SET PeriodicRemove JobStatus == 5 || (JobStatus == 1 && (time() - QDate) > 3600 * 6)",
        ...extra.filter((l) => l > "SET P"),
        "SET requirements true",
        "@rt",
      ].join("\n");
    const modern = parseCondorConfig(
      [
        "JOB_ROUTER_ROUTE_NAMES = Site_1 Site_2 Site_3",
        body("Site_1", "batch slurm", []),
        body("Site_2", "arc site2.edu", ['SET ArcRte "ENV/PROXY"']),
        body("Site_3", "condor submit.site3.edu cm.site3.edu", ["SET remote_jobuniverse 5"]),
      ].join("\n"),
    );
    const expected = readRouterConfig(modern);
    expect(withoutSources(converted.routes)).toEqual(withoutSources(expected.routes));
  });

  it("handles OverrideRoutingEntry, names from GridResource, eval_set_ and copy_", () => {
    const routes = convertOldRouteText(
      "[ Requirements = TARGET.Owner == \"a\" && MY.MaxJobs > 0; MaxJobs = 5 ]",
      '[ GridResource = "g1"; copy_Cmd = "OrigCmd"; eval_set_Slots = MaxJobs * 2; JobFailureTest = TARGET.ExitCode != 0 ] ' +
        '/* comment */ , [ Name = "g1"; OverrideRoutingEntry = false; MaxJobs = 9 ]',
    );
    expect(routes).toHaveLength(1);
    const text = routes[0]!.text;
    expect(text).toContain("NAME g1\n");
    expect(text).toContain('REQUIREMENTS Owner == "a" && 5 > 0\n');
    expect(text).toContain("JobFailureTest = MY.ExitCode != 0\n");
    expect(text).toContain("MaxJobs = 5\n");
    expect(text).toContain("COPY Cmd OrigCmd\n");
    expect(text).toContain("EVALSET Slots 5 * 2\n");
  });

  it("JOB_ROUTER_ENTRIES_FILE is read relative to its config file; an unreadable one names its line", () => {
    const dir = mkdtempSync(join(tmpdir(), "jobtap-entries-"));
    try {
      writeFileSync(join(dir, "routes.txt"), '[ Name = "A"; GridResource = "g"; Requirements = true ]\n');
      writeFileSync(join(dir, "router.cfg"), "# old routes\nJOB_ROUTER_ENTRIES_FILE = routes.txt\n");
      expect(readRouterConfig(readCondorConfigFile(join(dir, "router.cfg")), { convertOldRoutes: true }).routes.map((r) => r.name)).toEqual(["A"]);
      writeFileSync(join(dir, "broken.cfg"), "\nJOB_ROUTER_ENTRIES_FILE = missing.txt\n");
      expect(routerError(() => readRouterConfig(readCondorConfigFile(join(dir, "broken.cfg")), { convertOldRoutes: true }))).toBe(
        `${join(dir, "broken.cfg")}:2: JOB_ROUTER_ENTRIES_FILE: cannot read ${join(dir, "missing.txt")}: ENOENT`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a broken entry is an error naming the knob's file and line", () => {
    const c = parseCondorConfig("JOB_ROUTER_ENTRIES = [ Name = \"a\"; MaxJobs = ; ]\n", { file: "o.cfg" });
    expect(routerError(() => readRouterConfig(c, { convertOldRoutes: true }))).toMatch(/^o\.cfg:1: JOB_ROUTER_ENTRIES: route entry 1 does not parse/);
  });
});

describe("schedd job transforms", () => {
  it("reads JOB_TRANSFORM_NAMES in order and refuses an undefined one", async () => {
    const { readJobTransforms } = await import("../../plugins-builtin/condor-router/routes-condor.js");
    const c = parseCondorConfig(
      "JOB_TRANSFORM_NAMES = Second, First\nJOB_TRANSFORM_First = SET A 1\nJOB_TRANSFORM_Second @=x\nDEFAULT B 2\n@x\n",
      { file: "s.cfg" },
    );
    expect(readJobTransforms(c).map((t) => [t.name, t.transform.steps[0]!.op])).toEqual([
      ["Second", "DEFAULT"],
      ["First", "SET"],
    ]);
    const bad = parseCondorConfig("JOB_TRANSFORM_NAMES = Gone\n", { file: "s.cfg" });
    expect(routerError(() => readJobTransforms(bad))).toBe("s.cfg:1: JOB_TRANSFORM_NAMES: transform Gone is listed but never defined");
  });
});
