import { describe, expect, it } from "vitest";
import {
  applyEnvRules,
  beginTimeDependency,
  buildJobspec,
  parseDependency,
  parseSetattr,
  parseTimeLimit,
  substituteCc,
  type SubmitSpec,
} from "../../src/cli/jobspec.js";

const BASE: SubmitSpec = {
  command: ["hostname"],
  ntasks: 1,
  coresPerTask: 1,
  gpusPerTask: 0,
  duration: 0,
  cwd: "/tmp",
  environment: { PATH: "/bin" },
  dependencies: [],
  setattr: [],
};

describe("buildJobspec", () => {
  it("builds a Flux jobspec v1 with one task slot per task", () => {
    const js = buildJobspec({ ...BASE, ntasks: 4, coresPerTask: 2, gpusPerTask: 1, duration: 60 });
    expect(js).toEqual({
      version: 1,
      resources: [
        { type: "slot", count: 4, label: "task", with: [{ type: "core", count: 2 }, { type: "gpu", count: 1 }] },
      ],
      tasks: [{ command: ["hostname"], slot: "task", count: { per_slot: 1 } }],
      attributes: { system: { duration: 60, cwd: "/tmp", environment: { PATH: "/bin" } } },
    });
  });

  it("carries name, queue, dependencies, output files and setattr", () => {
    const js = buildJobspec({
      ...BASE,
      jobName: "build",
      queue: "batch",
      output: "/tmp/out.{cc}",
      error: "/tmp/err",
      dependencies: [{ scheme: "afterok", value: "f123" }],
      setattr: [parseSetattr("foo.bar=42"), parseSetattr("user.note=hi"), parseSetattr(".top=1")],
    });
    const system = js.attributes.system as Record<string, unknown>;
    expect(system.job).toEqual({ name: "build" });
    expect(system.queue).toBe("batch");
    expect(system.dependencies).toEqual([{ scheme: "afterok", value: "f123" }]);
    expect(system.shell).toEqual({
      options: { output: { stdout: { type: "file", path: "/tmp/out.{cc}" }, stderr: { type: "file", path: "/tmp/err" } } },
    });
    expect(system.foo).toEqual({ bar: 42 });
    expect(js.attributes.user).toEqual({ note: "hi" });
    expect(js.attributes.top).toBe(1);
    expect(JSON.stringify(substituteCc(js, 7))).toContain("/tmp/out.7");
  });
});

describe("submit option parsers", () => {
  it("reads dependency URIs with query keys", () => {
    expect(parseDependency("afterok:f2x?delay=5&tag=a")).toEqual({ scheme: "afterok", value: "f2x", delay: 5, tag: "a" });
    expect(parseDependency("singleton")).toEqual({ scheme: "singleton", value: "" });
    expect(parseDependency("singleton?x=1")).toEqual({ scheme: "singleton", value: "", x: 1 });
    expect(() => parseDependency(":f2x")).toThrow('--dependency ":f2x": expected SCHEME:VALUE or SCHEME');
    expect(() => parseDependency("")).toThrow("expected SCHEME:VALUE or SCHEME");
  });

  it("reads -t as minutes when unitless, else as an FSD", () => {
    expect(parseTimeLimit("2")).toBe(120);
    expect(parseTimeLimit("30s")).toBe(30);
    expect(parseTimeLimit("1.5h")).toBe(5400);
    expect(() => parseTimeLimit("soon")).toThrow("-t");
  });

  it("turns --begin-time into a begin-time dependency", () => {
    expect(beginTimeDependency("+1m", 1000)).toEqual({ scheme: "begin-time", value: "1060.000" });
    expect(beginTimeDependency("1234.5", 0)).toEqual({ scheme: "begin-time", value: "1234.500" });
    expect(beginTimeDependency("2030-01-01T00:00:00Z", 0).value).toBe("1893456000.000");
    expect(() => beginTimeDependency("whenever", 0)).toThrow("--begin-time");
  });

  it("applies --env rules in order", () => {
    const env = applyEnvRules({ HOME: "/h", SECRET_A: "1", SECRET_B: "2", PATH: "/bin" }, ["-SECRET_*", "X=$HOME/x", "SECRET_A"]);
    expect(env).toEqual({ HOME: "/h", PATH: "/bin", X: "/h/x", SECRET_A: "1" });
  });
});
