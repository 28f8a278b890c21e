/** The dashboard's change feed on simulated timers: batching, resume by cursor, resets, listening only when followed. */
import { describe, expect, it } from "vitest";
import type { JobId } from "../../src/manager/base/ids.js";
import type { JournalEntry } from "../../src/manager/engine/engine.js";
import { changeFeed, type FeedMessage } from "../../src/server/http/events.js";

function harness() {
  let listener: ((j: JournalEntry) => void) | undefined;
  let now = 0;
  const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const src = {
    on: (_t: "event", fn: (j: JournalEntry) => void) => void (listener = fn),
    off: () => void (listener = undefined),
    userOf: () => 1001,
  };
  const feed = changeFeed(src, {
    epoch: "e1",
    ringSize: 100,
    setTimeout: (fn, ms) => {
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return t;
    },
    clearTimeout: (h) => void ((h as { live: boolean }).live = false),
  });
  let n = 0;
  return {
    feed,
    listening: () => listener !== undefined,
    /** A job moving from one state to the next, as the manager journals it. */
    change(state = "RUN") {
      n++;
      listener?.({ id: BigInt(n) as JobId, entry: { timestamp: n, name: "x" }, prev_state: "SCHED", state } as JournalEntry);
    },
    advance(ms: number) {
      now += ms;
      for (const t of timers.filter((t) => t.live && t.at <= now)) {
        t.live = false;
        t.fn();
      }
    },
  };
}

describe("change feed", () => {
  it("sends a thousand changes within one interval as one message", () => {
    const h = harness();
    const got: FeedMessage[] = [];
    h.feed.follow(undefined, (m) => got.push(m));
    expect(got).toEqual([{ cursor: "e1:0", changes: [] }]);
    for (let i = 0; i < 1000; i++) h.change();
    h.advance(99);
    expect(got).toHaveLength(1);
    h.advance(1);
    expect(got).toHaveLength(2);
    const m = got[1] as { cursor: string; changes: Array<{ id: string; state: string; t: number; userid: number }> };
    expect(m.cursor).toBe("e1:1000");
    // The ring keeps 100: a batch larger than the ring sends what is kept.
    expect(m.changes).toHaveLength(100);
    expect(m.changes[99]).toMatchObject({ state: "RUN", t: 1000, userid: 1001 });
    h.advance(1000);
    expect(got).toHaveLength(2);
  });

  it("a follower resuming from a cursor gets what it missed; an unknown or lost cursor gets a reset", () => {
    const h = harness();
    const first: FeedMessage[] = [];
    const stop = h.feed.follow(undefined, (m) => first.push(m));
    h.change("PRIORITY");
    h.advance(100);
    const cursor = first[1]!.cursor;
    h.change("RUN");
    h.change("CLEANUP");
    h.advance(100);
    const again: FeedMessage[] = [];
    h.feed.follow(cursor, (m) => again.push(m));
    expect(again).toEqual([{ cursor: "e1:3", changes: [expect.objectContaining({ state: "RUN" }), expect.objectContaining({ state: "CLEANUP" })] }]);
    const other: FeedMessage[] = [];
    h.feed.follow("zz:3", (m) => other.push(m));
    h.feed.follow("e1:999", (m) => other.push(m));
    expect(other).toEqual([{ cursor: "e1:3", reset: true }, { cursor: "e1:3", reset: true }]);
    for (let i = 0; i < 150; i++) h.change();
    h.advance(100);
    const late: FeedMessage[] = [];
    h.feed.follow(cursor, (m) => late.push(m));
    expect(late).toEqual([{ cursor: "e1:153", reset: true }]);
    stop();
  });

  it("listens to the manager only while followed, and a minute after", () => {
    const h = harness();
    expect(h.listening()).toBe(false);
    const stop = h.feed.follow(undefined, () => undefined);
    expect(h.listening()).toBe(true);
    h.change();
    h.advance(100);
    stop();
    h.advance(59_000);
    expect(h.listening()).toBe(true);
    h.advance(1_000);
    expect(h.listening()).toBe(false);
    // Changes went unseen meanwhile: resuming from before is a reset.
    const got: FeedMessage[] = [];
    h.feed.follow("e1:1", (m) => got.push(m));
    expect(got).toEqual([{ cursor: "e1:1", reset: true }]);
  });
});
