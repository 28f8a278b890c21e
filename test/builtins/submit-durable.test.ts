/**
 * A submit is acknowledged once what admission wrote is durable, the events plugins post
 * while admitting the job included (.dependency-after's `dependency-add`): they are queued
 * behind `submit` and written in the batch after it, and the acknowledgement came before
 * that batch was (a SIGKILL between the two left an acknowledged dependent without its
 * dependency; restart copes, test/builtins/dependency-restart.test.ts). The store's files
 * are copied at the moment of the acknowledgement, as a SIGKILL would leave them.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { testJobspec } from "../../src/testhost.js";

let dir: string | undefined;
let m: JobManager | undefined;
afterEach(async () => {
  await m?.close();
  m = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Copies the store's files (database, WAL) as they are now into `to`. */
function snapshot(from: string, to: string): void {
  mkdirSync(to);
  for (const f of readdirSync(from)) if (f.startsWith("jobtap.db")) copyFileSync(join(from, f), join(to, f));
}

describe("the acknowledgement of a submit", () => {
  it("comes once the events posted while admitting the job are durable", async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-submit-durable-"));
    const state = join(dir, "state");
    mkdirSync(state);
    const clock = new SimulatedClock();
    const factory = jobtapPlugins({ config: {}, pluginPath: [], log: () => undefined });
    m = await createJobManager({ statedir: state, clock, config: {}, resources: { cores: 1 }, log: () => undefined, plugins: factory });
    const mgr = m;
    const acked = async (p: Promise<JobId>, copy?: string): Promise<JobId> => {
      let id: JobId | undefined;
      void p.then((x) => {
        id = x;
        if (copy !== undefined) snapshot(state, copy);
      });
      for (let i = 0; i < 1000 && id === undefined; i++) await clock.advance(10);
      return id!;
    };
    const ante = await acked(mgr.submit(testJobspec({ urgency: 0 }), { urgency: 0 }));
    const copy = join(dir, "at-ack");
    const dep = await acked(mgr.submit(testJobspec({ dependencies: [{ scheme: "afterok", value: formatJobId(ante) }] })), copy);
    expect(existsSync(join(copy, "jobtap.db"))).toBe(true);
    const raw = new SqliteStore(join(copy, "jobtap.db"));
    try {
      const names = raw.load(dep)!.eventlog.split("\n").filter((l) => l !== "").map((l) => (JSON.parse(l) as { name: string }).name);
      expect(names.slice(0, 2)).toEqual(["submit", "dependency-add"]);
    } finally {
      raw.close();
    }
  });
});
