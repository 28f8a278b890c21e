/**
 * The lost-job race (issue 19): an antecedent that ends while its dependent is still in its
 * submit batch window (NEW, `validate` queued behind the commit). Flux checks "fatal
 * exception in NEW" when the event is processed, so the dependent's `dependency` exception
 * lands after `validate` and the job ends; checking when it was posted lost the job in DEPEND.
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { testJobspec } from "../../src/testhost.js";
import { host, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const SCHEMES = ["afterok", "afternotok", "afterany", "afterexcept", "afterstart"] as const;

describe("dependents racing their antecedents", () => {
  it("every job of 2,000 racing pairs ends (none stuck in DEPEND)", async () => {
    const pairs = 2000;
    h = await host({}, { resources: { cores: 4096 } });
    const ids: JobId[] = [];
    const rejections: string[] = [];
    const pending: Array<Promise<unknown>> = [];
    // A deterministic mix of schemes, antecedent outcomes and submit offsets (0-19 ms):
    // offsets inside the 10 ms window put the antecedent's end between submit and commit.
    let seed = 19;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < pairs; i++) {
      const failed = rand(2) === 0;
      const a = h.manager.submit(testJobspec({ waitStatus: failed ? 256 : 0 }));
      pending.push(a);
      a.then((id) => {
        ids.push(id);
        const scheme = SCHEMES[rand(SCHEMES.length)]!;
        const submitDependent = () => {
          const b = h.manager.submit(testJobspec({ dependencies: [{ scheme, value: formatJobId(id) }] }));
          pending.push(b.then((bid) => ids.push(bid), (err: Error) => rejections.push(err.message)));
        };
        const delay = rand(20);
        if (delay === 0) submitDependent();
        else h.clock.setTimeout(submitDependent, delay);
      }, () => undefined);
      if (i % 50 === 49) await h.advance(1);
    }
    for (let t = 0; t < 2000 && (ids.length + rejections.length < 2 * pairs || ids.some((id) => h.job(id).state !== "INACTIVE")); t++) {
      await h.advance(5);
    }
    await Promise.allSettled(pending);
    const stuck = ids.filter((id) => h.job(id).state !== "INACTIVE").map((id) => `${formatJobId(id)} ${h.job(id).state}`);
    expect(stuck).toEqual([]);
    // A dependent submitted after its antecedent ended may be refused outright (e.g.
    // afterok on a failed job); every other one was accepted and ended.
    expect(ids.length + rejections.length).toBe(2 * pairs);
    expect(rejections.every((m) => /failed|succeeded|not found|never started|exception/.test(m))).toBe(true);
    expect(ids.length).toBeGreaterThan(pairs * 1.5);
    expect(h.log.filter((l) => l.includes("NEW state"))).toEqual([]);
  }, 60_000);
});
