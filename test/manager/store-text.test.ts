/**
 * A batch's text as pieces joined into chunks (store/batch-text.ts) and the eventlog line
 * written as parts (batch.ts): what the hand-over to the writer thread relies on.
 * - Every line is RFC 18 JSON byte for byte (JSON.stringify of {timestamp, name, context},
 *   bigints as strings), whatever the context holds, in the file, in the memory store, and
 *   for a reader while the batch is still open, in flight, or written.
 * - Cutting the chunks back into rows gives what a per-job concatenation gives, for any
 *   interleaving of jobs, jobspecs, summaries and reads (a model-based property test).
 * - A job's rows continue across a reopen of the store file.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { eventLine } from "../../src/manager/engine/batch.js";
import type { JobId } from "../../src/manager/base/ids.js";
import type { EventEntry } from "../../src/manager/port/records.js";
import { readRows, TextBatch, type PartSink } from "../../src/manager/store/batch-text.js";
import { MemoryStore } from "../../src/manager/store/memory.js";
import { SqliteStore } from "../../src/manager/store/sqlite.js";
import type { JobStore, StoreBatch } from "../../src/manager/store/types.js";
import { simManager, submitNow, tempDir, testJob } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function statedir(): string {
  const { dir, cleanup } = tempDir("jobtap-text-");
  cleanups.push(cleanup);
  return dir;
}

/** RFC 18's line, from its definition: one JSON object per line (bigints as decimal strings). */
function rfc18(e: EventEntry): string {
  const entry = e.context === undefined ? { timestamp: e.timestamp, name: e.name } : { timestamp: e.timestamp, name: e.name, context: e.context };
  return JSON.stringify(entry, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) + "\n";
}

/** Contexts JSON text gets wrong most easily. */
const ODD: Array<[string, Record<string, unknown> | undefined]> = [
  ["bigint", { big: 2n ** 70n, neg: -5n, nested: { list: [1n, "x", null, true, 1.5e-7, -0] } }],
  ["unicode", { text: "héllo wörld — ✓ 😀 日本語", lone: "\ud800x", ctl: 'tab\tnl\nquote"back\\slash\u0001' }],
  ["empty", {}],
  ["nested", { a: { b: { c: [[[]], [{ d: [] }]] } }, n: 123456789.125 }],
  ['név"quoted"\\✓😀', undefined],
  ["plain", undefined],
  ["long", { blob: "z".repeat(70_000) + "é" }],
];

describe("eventlog text", () => {
  it("eventLine is RFC 18 JSON byte for byte, a cached no-context line included, across timestamps", () => {
    const entries: EventEntry[] = [];
    for (const t of [1.5, 1.5, 2.25, 1.5, 1795540795.697])
      for (const [name, context] of ODD) entries.push(context === undefined ? { timestamp: t, name } : { timestamp: t, name, context });
    for (const e of entries) expect(eventLine(e)).toBe(rfc18(e));
  });

  it("a context is remembered by identity only while it cannot change: deep-frozen", () => {
    const shared = Object.freeze({ ranks: "all", final: true });
    const shallow = Object.freeze({ list: [1] });
    const open: Record<string, unknown> = { n: 1 };
    const line = (context: Record<string, unknown>) => eventLine({ timestamp: 3.5, name: "memo", context });
    expect(line(shared)).toBe(line(shared));
    expect(line(shared)).toBe('{"timestamp":3.5,"name":"memo","context":{"ranks":"all","final":true}}\n');
    line(open);
    open.n = 2;
    expect(line(open)).toBe('{"timestamp":3.5,"name":"memo","context":{"n":2}}\n');
    line(shallow);
    shallow.list.push(2);
    expect(line(shallow)).toBe('{"timestamp":3.5,"name":"memo","context":{"list":[1,2]}}\n');
    // Another frozen context of the same name replaces the remembered one.
    expect(line(Object.freeze({ ranks: "0", final: false }))).toBe('{"timestamp":3.5,"name":"memo","context":{"ranks":"0","final":false}}\n');
    expect(line(shared)).toBe('{"timestamp":3.5,"name":"memo","context":{"ranks":"all","final":true}}\n');
    // A frozen object inside a context that is not: remembered, and the rest written anew.
    const lite = Object.freeze([Object.freeze({ rank: "0", children: Object.freeze({ core: "0" }) })]);
    const exec: Record<string, unknown> = { R_lite: lite, starttime: 1.25 };
    expect(line({ R: exec })).toBe(rfc18({ timestamp: 3.5, name: "memo", context: { R: exec } }));
    exec.starttime = 2.5;
    expect(line({ R: exec })).toBe('{"timestamp":3.5,"name":"memo","context":{"R":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"starttime":2.5}}}\n');
    // A getter's value may change even on a frozen object.
    let n = 0;
    const counter = Object.freeze({
      get n() {
        return ++n;
      },
    });
    expect(line(counter)).toBe('{"timestamp":3.5,"name":"memo","context":{"n":1}}\n');
    expect(line(counter)).toBe('{"timestamp":3.5,"name":"memo","context":{"n":2}}\n');
    const wrapped = Object.freeze({ wrap: counter });
    expect(line(wrapped)).toBe('{"timestamp":3.5,"name":"memo","context":{"wrap":{"n":3}}}\n');
    expect(line(wrapped)).toBe('{"timestamp":3.5,"name":"memo","context":{"wrap":{"n":4}}}\n');
    // A getter that writes an event meanwhile.
    const nested = {
      a: 1,
      get inner() {
        return line({ deep: [1, 2] });
      },
      z: [3],
    };
    expect(line(nested)).toBe(rfc18({ timestamp: 3.5, name: "memo", context: { a: 1, inner: line({ deep: [1, 2] }), z: [3] } }));
  });

  it("writes what JSON.stringify writes for data that is not plain, and fails as it does on a cycle", () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const contexts: Array<Record<string, unknown>> = [
      { at: new Date(0), p: new Point(1) },
      { list: Object.assign([1, 2], { toJSON: () => "custom" }) },
      { own: { toJSON: () => 7 } },
      { skip: undefined, f: () => 1, s: Symbol("x"), arr: [undefined, () => 1, Symbol("y"), , NaN, -0, Infinity] },
      Object.freeze({ frozen: Object.freeze([Object.freeze({ big: 5n })]) }),
      Object.assign(Object.create(null) as Record<string, unknown>, { nullProto: 1 }),
    ];
    for (const context of contexts) {
      const e = { timestamp: 4.5, name: "odd", context };
      expect(eventLine(e)).toBe(rfc18(e));
      expect(eventLine(e)).toBe(rfc18(e));
    }
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    expect(() => eventLine({ timestamp: 4.5, name: "odd", context: cycle })).toThrow(TypeError);
  });

  for (const kind of ["sqlite", "sqlite, commits on the manager's thread", "memory"] as const) {
    it(`${kind}: interleaved jobs' odd lines are stored byte for byte, and read back while the batch is open, in flight and written`, async () => {
      const dir = statedir();
      const path = join(dir, "jobtap.db");
      const store: JobStore = kind === "memory" ? new MemoryStore() : new SqliteStore(path, kind === "sqlite" ? {} : { commits: "main" });
      const s = await simManager({ statedir: dir, store });
      s.mgr.pauseScheduling();
      const ids: JobId[] = [];
      for (let j = 0; j < 4; j++) ids.push(await submitNow(s, testJob(0), { urgency: 0 }));
      // One window (the simulated clock stands still): hundreds of pieces, several chunks, jobs interleaved.
      for (let round = 0; round < 60; round++) for (const [k, id] of ids.entries()) {
        const [name, context] = ODD[(round + k) % ODD.length]!;
        s.mgr.port.postEvent(id, name, context);
      }
      const expected = ids.map((id) => s.mgr.eventlog(id).map(rfc18).join(""));
      expect(expected[0]).toContain('"big":"1180591620717411303424"');
      // Inactive within the window: readers now go through the open batch.
      for (const id of ids.slice(0, 2)) s.mgr.cancel(id);
      const ended = ids.slice(0, 2).map((id) => s.mgr.eventlog(id).map(rfc18).join(""));
      const parsed = (text: string) => text.trimEnd().split("\n").map((l) => JSON.parse(l) as unknown);
      const read = () => ids.slice(0, 2).map((id) => s.mgr.eventlog(id));
      expect(ended[0]!.startsWith(expected[0]!)).toBe(true);
      expect(read()).toEqual(ended.map(parsed));
      await s.clock.advance(10); // handed over (in flight, or written)
      expect(read()).toEqual(ended.map(parsed));
      s.mgr.cancel(ids[2]!);
      const final = [...ended, ...ids.slice(2).map((id) => s.mgr.eventlog(id).map(rfc18).join(""))];
      await s.mgr.close();
      if (kind === "memory") {
        expect(ids.map((id) => store.load(id)?.eventlog)).toEqual(final);
        return;
      }
      const db = new Database(path, { readonly: true });
      cleanups.push(() => db.close());
      const text = db.prepare("SELECT jobs.eventlog0 || coalesce((SELECT group_concat(lines, '') FROM (SELECT lines FROM eventlog WHERE eventlog.id = jobs.id ORDER BY batch)), '') FROM jobs WHERE id = ?").pluck();
      expect(ids.map((id) => text.get(BigInt.asIntN(64, id)))).toEqual(final);
    });
  }
});

/** What a batch must amount to: per-job concatenation, in order. */
interface Model {
  newJobs: Array<{ id: JobId; jobspec: string }>;
  appends: Map<JobId, string>;
  inactive: Array<{ id: JobId; summary: string }>;
  purged: JobId[];
}

type Op =
  | { op: "line"; job: number; text: string }
  | { op: "parts"; job: number; parts: string[] }
  | { op: "new"; job: number; jobspec: string }
  | { op: "summary"; job: number; text: string }
  | { op: "purge"; job: number }
  | { op: "read"; job: number };

const piece = fc.string({ unit: "binary", maxLength: 40 });
const ops = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant("line" as const), job: fc.nat(7), text: piece }) },
    { weight: 6, arbitrary: fc.record({ op: fc.constant("parts" as const), job: fc.nat(7), parts: fc.array(piece, { maxLength: 6 }) }) },
    // Jobspecs often repeat (a batch sends a repeated one's text once).
    { weight: 1, arbitrary: fc.record({ op: fc.constant("new" as const), job: fc.nat(7), jobspec: fc.oneof(piece, fc.constantFrom('{"v":1}', '{"v":2}')) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("summary" as const), job: fc.nat(7), text: piece }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("purge" as const), job: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant("read" as const), job: fc.nat(7) }) },
  ),
  { maxLength: 400 },
);

/** Replays `ops` on a TextBatch (a job's slot given on its first text) and on the model. */
function replay(list: Op[]): { batch: TextBatch; model: Model } {
  const batch = new TextBatch();
  const model: Model = { newJobs: [], appends: new Map(), inactive: [], purged: [] };
  const slots = new Map<number, number>();
  const isNew = new Set<number>();
  const slotOf = (job: number) => slots.get(job) ?? (slots.set(job, batch.addSlot(BigInt(job) as JobId)), slots.get(job)!);
  for (const o of list) {
    const id = BigInt(o.job) as JobId;
    if (o.op === "line" || o.op === "parts") {
      const text = o.op === "line" ? o.text : o.parts.join("");
      if (o.op === "line") batch.eventlog(slotOf(o.job), o.text);
      else batch.eventlogParts(slotOf(o.job), (parts: string[], out: PartSink) => (parts.forEach((p) => out.push(p)), parts.join("").length), o.parts);
      model.appends.set(id, (model.appends.get(id) ?? "") + text);
    } else if (o.op === "new") {
      if (isNew.has(o.job) || slots.has(o.job)) continue; // a job is new before any text of its own
      isNew.add(o.job);
      batch.newJob(slotOf(o.job), o.jobspec);
      model.newJobs.push({ id, jobspec: o.jobspec });
    } else if (o.op === "summary") {
      batch.summary(id, o.text);
      model.inactive.push({ id, summary: o.text });
    } else if (o.op === "purge") {
      batch.purged.push(id);
      model.purged.push(id);
    } else if (slots.has(o.job)) {
      const seen = batch.slotText(slots.get(o.job)!);
      expect(seen.eventlog).toBe(model.appends.get(id) ?? "");
      expect(seen.jobspec).toBe(model.newJobs.find((j) => j.id === id)?.jobspec);
    }
  }
  return { batch, model };
}

const plain = (b: StoreBatch): Model => ({ newJobs: [...b.newJobs], appends: new Map(b.appends), inactive: [...(b.inactive ?? [])], purged: [...b.purged] });

describe("a batch's text, cut back into rows", () => {
  it("gives each job's text, jobspec and summary as a per-job concatenation would, for any interleaving (and reads meanwhile)", () => {
    fc.assert(
      fc.property(ops, (list) => {
        const { batch, model } = replay(list);
        const rows = batch.rows(7);
        expect(rows.seq).toBe(7);
        const text = readRows(structuredClone(rows)); // as the writer thread receives it
        const bySlot = [...rows.slotIds].map((r) => BigInt.asUintN(64, r) as JobId);
        expect(new Map(bySlot.flatMap((id, s) => (text.eventlogs[s] === undefined ? [] : [[id, text.eventlogs[s]!]])))).toEqual(model.appends);
        expect([...rows.newSlots].map((s, k) => ({ id: bySlot[s], jobspec: text.jobspecs[k] }))).toEqual(model.newJobs);
        expect(plain(batch)).toEqual(model);
        expect(batch.isEmpty()).toBe(model.newJobs.length + model.appends.size + model.inactive.length + model.purged.length === 0);
        // A plain StoreBatch converts to the same rows' meaning.
        expect(plain(TextBatch.of(model))).toEqual(model);
      }),
      { seed: 22, numRuns: 300 },
    );
  });

  it("sends a jobspec repeated by the next new job once, and gives it back to each job, across chunks and reads", () => {
    const specs = ['{"v":1}', '{"v":1}', '{"v":2}', '{"v":2}', '{"v":1}', "", "", '{"v":1}'];
    const list: Op[] = [];
    specs.forEach((jobspec, job) => {
      list.push({ op: "new", job, jobspec }, { op: "read", job });
      // Enough parts between two new jobs that some repeats open a chunk.
      for (let i = 0; i < 200 * job; i++) list.push({ op: "parts", job, parts: [`{"n":${i}}`, "\n"] });
      list.push({ op: "read", job });
    });
    const { batch, model } = replay(list);
    const rows = batch.rows(3);
    expect(rows.chunks.length).toBeGreaterThan(2);
    const text = readRows(structuredClone(rows));
    expect(text.jobspecs).toEqual(specs);
    expect(rows.chunks.join("").split('{"v":1}').length - 1).toBe(3);
    expect(plain(batch)).toEqual(model);
  });

  it("spans chunks: a batch of thousands of pieces is a few strings, each piece cut back whole", () => {
    const list: Op[] = [];
    for (let i = 0; i < 3000; i++) list.push({ op: "parts", job: i % 7, parts: [`{"n":${i},`, '"s":"é😀"', "}\n"] });
    const { batch, model } = replay(list);
    const rows = batch.rows(1);
    expect(rows.chunks.length).toBeGreaterThan(1);
    expect(rows.chunks.length).toBeLessThan(100);
    expect(plain(batch)).toEqual(model);
  });
});

describe("a job's rows across a reopen of the store", () => {
  it("chunks written after a reopen follow the earlier ones; readers see them in flight and written; a handed-over batch takes no more text", async () => {
    const dir = statedir();
    const path = join(dir, "jobtap.db");
    const line = (name: string, t: number) => `{"timestamp":${t},"name":"${name}"}\n`;
    const job = 42n as JobId;
    const gone = 44n as JobId;
    const a = new SqliteStore(path);
    await a.ready();
    const first = new TextBatch();
    const slot = first.addSlot(job);
    first.newJob(slot, '{"v":1}');
    first.eventlog(slot, line("submit", 1));
    first.newJob(first.addSlot(gone), '{"v":2}');
    const firstDone = a.commitAsync!(first);
    expect(() => first.eventlog(slot, line("late", 1))).toThrow(/already handed over/);
    const second = new TextBatch();
    second.eventlog(second.addSlot(job), line("validate", 2));
    await Promise.all([firstDone, a.commitAsync!(second)]);
    await a.close();

    const b = new SqliteStore(path);
    cleanups.push(() => b.close());
    await b.ready();
    const third = new TextBatch();
    third.eventlogParts(third.addSlot(job), (t: number, out: PartSink) => (out.push(`{"timestamp":${t},`), out.push('"name":"depend"}\n'), line("depend", t).length), 3);
    third.newJob(third.addSlot(45n as JobId), '{"v":3}');
    third.purged.push(gone);
    const done = b.commitAsync!(third);
    const expected = { id: job, jobspec: '{"v":1}', eventlog: line("submit", 1) + line("validate", 2) + line("depend", 3) };
    expect(b.load(job)).toEqual(expected); // in flight
    expect(b.load(gone)).toBeUndefined();
    await done;
    expect(b.load(job)).toEqual(expected);
    expect(b.load(45n as JobId)).toEqual({ id: 45n, jobspec: '{"v":3}', eventlog: "" });
    const db = new Database(path, { readonly: true });
    cleanups.push(() => db.close());
    const batches = (db.prepare("SELECT batch FROM eventlog WHERE id = ? ORDER BY batch").pluck().all(42) as number[]);
    expect(batches).toHaveLength(2);
    expect(batches[1]!).toBeGreaterThan(batches[0]!);
  });
});
