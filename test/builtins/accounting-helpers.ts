/** Shared set-up of the accounting plugin tests: a host with it loaded, and service calls. */
import type { JobId } from "../../src/manager/base/ids.js";
import { host, type TestHost } from "./helpers.js";

/** The instance config loading the plugin, with `[accounting]` = `acct`. */
export const acctConfig = (acct: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  "job-manager": { plugins: [{ load: "accounting" }] },
  accounting: acct,
  ...extra,
});

/** A test host with the accounting plugin loaded from the config. */
export function acctHost(acct: Record<string, unknown> = {}, opts: { cores?: number } = {}): Promise<TestHost> {
  return host(acctConfig(acct), { resources: { cores: opts.cores ?? 4 } });
}

/** Calls an accounting service as the owner (or as `userid`, a guest). */
export function call(h: TestHost, method: string, payload: Record<string, unknown> = {}, userid?: number): Promise<unknown> {
  const cred = userid === undefined ? { userid: h.manager.owner, owner: true } : { userid, owner: false };
  return h.plugins.callService("accounting", method, payload, cred);
}

/** The users of docs/accounting.md's worked example. */
export const ALICE = 1001;
export const BOB = 1002;
export const CAROL = 1003;
export const DAVE = 1004;

/**
 * docs/accounting.md's tree: root → physics (3) → alice (1), theory (1) → bob (1),
 * carol (1); root → chem (1) → dave (1).
 */
export async function exampleTree(h: TestHost): Promise<void> {
  await call(h, "add-bank", { name: "root" });
  await call(h, "add-bank", { name: "physics", parent: "root", shares: 3 });
  await call(h, "add-bank", { name: "chem", parent: "root", shares: 1 });
  await call(h, "add-bank", { name: "theory", parent: "physics", shares: 1 });
  await call(h, "add-user", { uid: ALICE, bank: "physics" });
  await call(h, "add-user", { uid: BOB, bank: "theory" });
  await call(h, "add-user", { uid: CAROL, bank: "theory" });
  await call(h, "add-user", { uid: DAVE, bank: "chem" });
}

/** Runs one 1-core job of `seconds` for `uid` to completion. */
export async function use(h: TestHost, uid: number, seconds: number): Promise<JobId> {
  const id = await h.submit({ userid: uid, runDuration: seconds });
  await h.advance(seconds * 1000); // in one step: the test host's own steps are 10 ms
  await h.runToCompletion(id);
  return id;
}

/** The user rows of `show` by uid: fair-share factor and decayed usage. */
export async function users(h: TestHost): Promise<Map<number, { fairShare: number; usage: number; running: number; active: number }>> {
  const { rows } = (await call(h, "show")) as { rows: Array<Record<string, unknown>> };
  const out = new Map<number, { fairShare: number; usage: number; running: number; active: number }>();
  for (const r of rows) if (r.type === "user") out.set(r.uid as number, r as never);
  return out;
}
