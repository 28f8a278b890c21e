import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import perilog from "../../plugins-builtin/perilog/index.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { exceptions, host, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-perilog-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Advances simulated time and lets real processes run until `cond` holds. */
async function settle(t: TestHost, cond: () => boolean, realMs = 10_000): Promise<void> {
  const end = Date.now() + realMs;
  while (!cond() && Date.now() < end) {
    await t.advance(10);
    await new Promise((r) => setTimeout(r, 5));
  }
  if (!cond()) throw new Error("condition not reached");
}

const sh = (script: string) => ["/bin/sh", "-c", script];
const withPerilog = (jm: Record<string, unknown>) => host({ "job-manager": jm }, { plugin: perilog, name: "perilog" });
const inactive = (t: TestHost, id: JobId) => () => t.job(id).state === "INACTIVE";
const HOST = hostname();

describe("perilog", () => {
  it("runs prolog before start and epilog before free, with the job id in the environment", async () => {
    const t = (h = await withPerilog({
      prolog: { command: sh(`echo "$FLUX_JOB_ID" > ${dir}/prolog`) },
      epilog: { command: sh(`echo done > ${dir}/epilog`) },
    }));
    const id = await t.submit({ runDuration: 1 });
    await settle(t, inactive(t, id));
    expect(t.job(id).result).toBe("COMPLETED");
    const names = t.events(id);
    const at = (n: string) => names.indexOf(n);
    expect(at("prolog-start")).toBeLessThan(at("prolog-finish"));
    expect(at("prolog-finish")).toBeLessThan(at("start"));
    expect(at("finish")).toBeLessThan(at("epilog-start"));
    expect(at("epilog-finish")).toBeLessThan(at("free"));
    expect(t.eventlog(id).find((e) => e.name === "prolog-finish")?.context).toEqual({ description: "job-manager.prolog", status: 0 });
    expect(readFileSync(join(dir, "prolog"), "utf8").trim()).toBe(formatJobId(id));
    expect(readFileSync(join(dir, "epilog"), "utf8").trim()).toBe("done");
  });

  it("a failing prolog raises a fatal prolog exception; the epilog still runs, before prolog-finish", async () => {
    const t = (h = await withPerilog({
      prolog: { command: sh("exit 3") },
      epilog: { command: sh("true") },
    }));
    const id = await t.submit({ runDuration: 1 });
    await settle(t, inactive(t, id));
    expect(exceptions(t, id)).toEqual([`prolog:0:prolog exited with code=3 on ${HOST} (rank 0)`]);
    const names = t.events(id);
    expect(names).not.toContain("start");
    expect(names.indexOf("epilog-start")).toBeLessThan(names.indexOf("prolog-finish"));
    expect(names).toContain("epilog-finish");
    expect(t.job(id).result).toBe("FAILED");
  });

  it("a job stuck in a prolog can be cancelled (SIGTERM ends the prolog)", async () => {
    const t = (h = await withPerilog({ prolog: { command: ["sleep", "1000"] } }));
    const id = await t.submit({ runDuration: 1 });
    await settle(t, () => t.events(id).includes("prolog-start"));
    const q = await t.plugins.query("perilog");
    expect((q.procs as Record<string, { name: string; state: string }>)[formatJobId(id)]).toMatchObject({
      name: "prolog",
      state: "running",
    });
    t.manager.cancel(id);
    await settle(t, inactive(t, id));
    expect(t.job(id).result).toBe("CANCELED");
    expect(t.events(id)).toContain("prolog-finish");
    expect(t.events(id)).not.toContain("start");
  });

  it("a prolog over its time limit is killed and fails the job", async () => {
    const t = (h = await withPerilog({ prolog: { command: ["sleep", "1000"], timeout: "2s" } }));
    const id = await t.submit({ runDuration: 1 });
    await settle(t, inactive(t, id));
    expect(exceptions(t, id)).toEqual([`prolog:0:prolog timed out on ${HOST} (rank 0)`]);
  });

  it("a failing epilog is a non-fatal severity-2 exception", async () => {
    const t = (h = await withPerilog({ epilog: { command: sh("exit 1") } }));
    const id = await t.submit({ runDuration: 1 });
    await settle(t, inactive(t, id));
    expect(exceptions(t, id)).toEqual([`epilog:2:epilog exited with code=1 on ${HOST} (rank 0)`]);
    expect(t.job(id).result).toBe("COMPLETED");
  });

  it("bad configuration fails the load, naming the key", async () => {
    await expect(withPerilog({ prolog: { command: "true" } })).rejects.toThrow(
      "[job-manager.prolog].command: must be a non-empty array of strings",
    );
    await expect(withPerilog({ prolog: { command: ["true"], timeout: "soon" } })).rejects.toThrow(
      /\[job-manager\.prolog\]\.timeout.*"soon"/,
    );
    await expect(withPerilog({ perilog: { "log-ignore": ["("] } })).rejects.toThrow("[job-manager.perilog].log-ignore[0]:");
  });
});
