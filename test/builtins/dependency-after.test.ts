import { afterEach, describe, expect, it } from "vitest";
import { formatJobId } from "../../src/manager/base/ids.js";
import type { JobId } from "../../src/manager/base/ids.js";
import { exceptions, host, rejected, until, type TestHost } from "./helpers.js";

let h: TestHost;
afterEach(async () => {
  await h?.close();
});

const dep = (scheme: string, id: JobId | string) => [{ scheme, value: typeof id === "string" ? id : formatJobId(id) }];
const state = (id: JobId) => h.job(id).state;

describe(".dependency-after", () => {
  it("afterok on a job that fails → fatal dependency exception", async () => {
    h = await host();
    const a = await h.submit({ runDuration: 5, waitStatus: 256 });
    const b = await h.submit({ dependencies: dep("afterok", a) });
    expect(state(b)).toBe("DEPEND");
    expect(h.job(b).dependencies).toEqual([`after-success=${formatJobId(a)}`]);
    await h.runToCompletion(a);
    await until(h, () => state(b) === "INACTIVE");
    expect(exceptions(h, b)).toEqual([`dependency:0:dependency after-success=${formatJobId(a)} can never be satisfied`]);
    expect(h.job(b).result).toBe("FAILED");
  });

  it("afterok on a job that succeeds releases the dependent after it ends", async () => {
    h = await host();
    const a = await h.submit({ runDuration: 5 });
    const b = await h.submit({ dependencies: dep("afterok", a) });
    await h.runToCompletion(a);
    const info = await h.runToCompletion(b);
    expect(info.result).toBe("COMPLETED");
    const names = h.events(b);
    expect(names.slice(0, 5)).toEqual(["submit", "dependency-add", "validate", "dependency-remove", "depend"]);
  });

  it("afterstart releases at the antecedent's start, before it ends", async () => {
    h = await host();
    const a = await h.submit({ runDuration: 100 });
    const b = await h.submit({ urgency: 0, runDuration: 100, dependencies: dep("afterany", a) });
    const c = await h.submit({ dependencies: dep("afterstart", b) });
    // b is held: it will never start until released; c waits.
    await h.runToCompletion(a);
    expect(state(b)).toBe("SCHED");
    expect(state(c)).toBe("DEPEND");
    h.manager.setUrgency(b, 16);
    await until(h, () => h.events(c).includes("dependency-remove"));
    expect(h.events(b)).toContain("start");
    expect(h.events(b)).not.toContain("finish");
  });

  it("afternotok: released by failure, fatal on success; afterexcept needs an exception end", async () => {
    h = await host();
    const ok = await h.submit({ runDuration: 1 });
    const bad = await h.submit({ runDuration: 1, waitStatus: 256 });
    const cancelled = await h.submit({ runDuration: 100 });
    const d1 = await h.submit({ dependencies: dep("afternotok", ok) });
    const d2 = await h.submit({ dependencies: dep("afternotok", bad) });
    const d3 = await h.submit({ dependencies: dep("afterexcept", bad) });
    const d4 = await h.submit({ dependencies: dep("afterexcept", cancelled) });
    await until(h, () => h.events(cancelled).includes("start"));
    h.manager.cancel(cancelled);
    for (const id of [d1, d2, d3, d4]) await until(h, () => state(id) === "INACTIVE" || h.events(id).includes("depend"));
    expect(exceptions(h, d1)[0]).toMatch(/after-failure=.* can never be satisfied$/);
    expect(h.events(d2)).toContain("depend");
    expect(exceptions(h, d3)[0]).toMatch(/after-except=.* can never be satisfied$/);
    expect(h.events(d4)).toContain("depend");
  });

  it("antecedent cancelled before it ran: afterany released, others fatal 'job never started'", async () => {
    h = await host();
    const a = await h.submit({ urgency: 0 });
    const any = await h.submit({ dependencies: dep("afterany", a) });
    const notok = await h.submit({ dependencies: dep("afternotok", a) });
    h.manager.cancel(a);
    await until(h, () => state(notok) === "INACTIVE");
    expect(exceptions(h, notok)).toEqual([`dependency:0:dependency after-failure=${formatJobId(a)} job never started`]);
    expect((await h.runToCompletion(any)).result).toBe("COMPLETED");
  });

  it("antecedent already inactive at submit: resolved at once or rejected", async () => {
    h = await host();
    const ok = await h.submit({ runDuration: 1 });
    const never = await h.submit({ urgency: 0 });
    h.manager.cancel(never);
    await h.runToCompletion(ok);
    await h.runToCompletion(never);
    const f = (id: JobId) => formatJobId(id);
    const b = await h.submit({ dependencies: dep("afterok", ok) });
    expect(h.events(b).slice(0, 3)).toEqual(["submit", "dependency-add", "dependency-remove"]);
    expect(await rejected(h, { dependencies: dep("afternotok", ok) })).toBe(`afternotok: job ${f(ok)} succeeded`);
    expect(await rejected(h, { dependencies: dep("afterexcept", ok) })).toBe(`afterexcept: job ${f(ok)}: no exception`);
    expect(await rejected(h, { dependencies: dep("afterok", never) })).toBe(`afterok: job ${f(never)} never started`);
    const any = await h.submit({ dependencies: dep("afterany", never) });
    expect(state(any)).not.toBe("DEPEND");
  });

  it("bad values, unknown jobs, other users' jobs and unknown schemes are rejected", async () => {
    h = await host();
    const mine = await h.submit({ userid: 1000, urgency: 0 });
    expect(await rejected(h, { dependencies: dep("afterok", "bogus!") })).toBe(
      'dependency: afterok: "bogus!" is not a valid jobid',
    );
    expect(await rejected(h, { dependencies: dep("afterok", "18446744073709551615") })).toBe(
      'dependency: afterok: "18446744073709551615" is not a valid jobid',
    );
    expect(await rejected(h, { dependencies: dep("afterany", "1234") })).toBe("afterany: job 1234 not found");
    expect(await rejected(h, { userid: 1001, dependencies: dep("afterany", mine) })).toBe(
      `afterany: Permission denied for job ${formatJobId(mine)}`,
    );
    expect(await rejected(h, { dependencies: dep("afterfoo", mine) })).toBe('dependency scheme "afterfoo" not supported');
    expect(await rejected(h, { dependencies: [{ value: "x" } as never] })).toBe("dependency[0] missing string scheme");
  });

  it("deprecated `after` works like afterstart and records a severity-3 exception", async () => {
    h = await host();
    const a = await h.submit({ runDuration: 10 });
    const b = await h.submit({ dependencies: dep("after", a) });
    expect(exceptions(h, b)).toEqual(["dependency:3:after: dependency scheme is deprecated, use afterstart"]);
    await until(h, () => h.events(b).includes("depend"));
    expect(h.events(a)).toContain("start");
  });

  it("plugin.query lists pending dependencies; a cancelled dependent is dropped", async () => {
    h = await host();
    const a = await h.submit({ urgency: 0 });
    const b = await h.submit({ dependencies: dep("afterok", a) });
    const q = await h.plugins.query(".dependency-after");
    expect(q.dependencies).toEqual([
      { id: formatJobId(a), depid: formatJobId(b), type: "after-success", description: `after-success=${formatJobId(a)}` },
    ]);
    h.manager.cancel(b);
    await until(h, () => state(b) === "INACTIVE");
    expect((await h.plugins.query(".dependency-after")).dependencies).toEqual([]);
  });

  it("an afterany chain runs in order even if the head is cancelled before it starts", async () => {
    h = await host();
    const head = await h.submit({ urgency: 0 });
    const ids = [head];
    for (let i = 0; i < 3; i++) ids.push(await h.submit({ runDuration: 2, dependencies: dep("afterany", ids[i]!) }));
    h.manager.cancel(head);
    for (const id of ids.slice(1)) expect((await h.runToCompletion(id)).result).toBe("COMPLETED");
    const starts = ids.slice(1).map((id) => h.eventlog(id).find((e) => e.name === "start")!.timestamp);
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    expect(starts[1]! >= starts[0]! + 2).toBe(true);
  });
});

describe(".dependency-after bookkeeping", () => {
  it("a dependent rejected by a later dependency leaves no entry behind", async () => {
    h = await host();
    const a = await h.submit({ urgency: 0 });
    await rejected(h, { dependencies: [...dep("afterok", a), { scheme: "nope" }] });
    expect((await h.plugins.query(".dependency-after")).dependencies).toEqual([]);
  });
});
