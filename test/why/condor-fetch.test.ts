/**
 * condor-fetch's `job.explain` (issue 36): a job whose PREPARE_JOB hook runs says it waits
 * for that hook (its program, keyword, for how long); once the hook is done it says nothing.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { host, settle, writeScript, type TestHost } from "../builtins/helpers.js";
import type { JobId } from "../../src/manager/base/ids.js";

let h: TestHost | undefined;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "jobtap-why-fetch-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
});
const fetchReasons = async (t: TestHost, id: JobId) => (await t.manager.why(id)).reasons.filter((r) => r.source === "condor-fetch");

it("a job waiting on its PREPARE_JOB hook names the hook, its keyword and for how long", async () => {
  const prepare = writeScript(dir, "prepare", `touch ${dir}/started\nwhile [ ! -e ${dir}/go ]; do sleep 0.05; done`);
  const t = (h = await host({}, { plugin: "condor-fetch", conf: { hooks: { TEST: { prepare_job: prepare } } } }));
  const id = await t.submit({ runDuration: 1, classad: { HookKeyword: '"TEST"' } });
  await settle(t, () => existsSync(join(dir, "started")) && t.events(id).includes("prolog-start"));
  const since = t.clock.now() / 1000;
  await t.advance(90_000);
  const ex = await t.manager.why(id);
  expect(ex.state).toBe("RUN");
  const rs = await fetchReasons(t, id);
  expect(rs).toHaveLength(1);
  expect(rs[0]).toMatchObject({ layer: "state", code: "prepare-hook" });
  expect(rs[0]!.text).toMatch(/^waits for its PREPARE_JOB hook \(prepare, keyword TEST\) to finish before it starts: running for 1\.5m$/);
  expect(rs[0]!.figures).toMatchObject({ hook: "PREPARE_JOB", path: prepare, keyword: "TEST", running_s: 90 });
  expect(Math.abs(Number(rs[0]!.figures.since) - since)).toBeLessThan(1);
  writeFileSync(join(dir, "go"), "");
  await settle(t, () => t.events(id).includes("start"));
  expect(await fetchReasons(t, id)).toEqual([]);
});
