/**
 * The dashboard's live job feed (`GET /api/v1/events?follow=1`): job state changes, batched
 * so a browser gets at most one message per `intervalMs` (100 ms) however fast jobs move —
 * 1,000 changes a second arrive as about ten messages. Each change is {id, state, t, userid}:
 * what `jobtap jobs` lists for everyone, so every caller gets every job's changes.
 *
 * Each message carries a cursor, `EPOCH:SEQ`; a client that reconnects with `since=CURSOR`
 * gets the changes it missed from a ring of the last `ringSize`, or a `reset` (reload the
 * list) when they are gone or the daemon restarted. The feed listens to the manager only
 * while someone follows it, and for `graceMs` after the last one leaves, so a quiet daemon
 * pays nothing per event.
 */
import { formatJobId, type JobId } from "../../manager/base/ids.js";
import type { JournalEntry } from "../../manager/engine/engine.js";

/** One job state change as sent. */
export interface Change {
  id: string;
  state: string;
  /** The event's time, seconds since the epoch. */
  t: number;
  userid: number;
}

/** One message: the changes since the previous one, or a reset. */
export type FeedMessage = { cursor: string; changes: Change[] } | { cursor: string; reset: true };

/** The feed's view of the manager. */
export interface FeedSource {
  on(type: "event", fn: (j: JournalEntry) => void): void;
  off(type: "event", fn: (j: JournalEntry) => void): void;
  userOf(id: JobId): number;
}

export interface FeedOptions {
  intervalMs?: number;
  ringSize?: number;
  graceMs?: number;
  /** Timers (tests pass a simulated clock's). */
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  /** Names this daemon run in cursors (default: its start time). */
  epoch?: string;
}

/** A running feed. */
export interface ChangeFeed {
  /** Follows from now, or from `since` (a cursor); returns the unsubscribe. */
  follow(since: string | undefined, send: (m: FeedMessage) => void): () => void;
  /** The cursor of the latest change. */
  cursor(): string;
  close(): void;
}

interface Raw {
  id: JobId;
  state: string;
  t: number;
  userid: number;
}

/** A feed over `src`. */
export function changeFeed(src: FeedSource, o: FeedOptions = {}): ChangeFeed {
  const interval = o.intervalMs ?? 100;
  const size = o.ringSize ?? 65_536;
  const grace = o.graceMs ?? 60_000;
  const set = o.setTimeout ?? ((fn, ms) => setTimeout(fn, ms).unref());
  const clear = o.clearTimeout ?? ((h) => clearTimeout(h as NodeJS.Timeout));
  const epoch = o.epoch ?? Date.now().toString(36);
  // ring[seq % size] holds change number seq (1-based); `first` is the oldest kept.
  const ring: Array<Raw | undefined> = new Array(size);
  let seq = 0;
  let first = 1;
  let sent = 0;
  let listening = false;
  let flushTimer: unknown;
  let graceTimer: unknown;
  const subscribers = new Set<(m: FeedMessage) => void>();
  const cursorOf = (n: number) => `${epoch}:${n}`;
  const changesBetween = (from: number, to: number): Change[] => {
    const out: Change[] = [];
    for (let n = Math.max(from, first); n <= to; n++) {
      const r = ring[n % size] as Raw;
      out.push({ id: formatJobId(r.id), state: r.state, t: r.t, userid: r.userid });
    }
    return out;
  };
  const flush = () => {
    flushTimer = undefined;
    if (sent === seq) return;
    const message = { cursor: cursorOf(seq), changes: changesBetween(sent + 1, seq) };
    sent = seq;
    for (const s of subscribers) s(message);
  };
  const onEvent = (j: JournalEntry) => {
    if (j.prev_state === j.state) return;
    seq++;
    ring[seq % size] = { id: j.id, state: j.state, t: j.entry.timestamp, userid: src.userOf(j.id) };
    if (seq - first >= size) first = seq - size + 1;
    // One timer per batch: the first change arms it, the rest ride along.
    flushTimer ??= set(flush, interval);
  };
  const listen = (on: boolean) => {
    if (on === listening) return;
    listening = on;
    if (on) src.on("event", onEvent);
    else {
      src.off("event", onEvent);
      // The ring stops here: a later resume from before this point must reload.
      first = seq + 1;
      sent = seq;
    }
  };
  return {
    follow(since, send) {
      if (graceTimer !== undefined) clear(graceTimer);
      graceTimer = undefined;
      const resumable = listening;
      listen(true);
      const from = parseCursor(since, epoch);
      if (since !== undefined) {
        if (from === undefined || !resumable || from < first - 1 || from > seq) send({ cursor: cursorOf(sent), reset: true });
        // Missed changes up to the last batch sent; later ones come with the next batch.
        else if (from < sent) send({ cursor: cursorOf(sent), changes: changesBetween(from + 1, sent) });
        else if (from > sent) send({ cursor: cursorOf(sent), reset: true });
      } else send({ cursor: cursorOf(sent), changes: [] });
      subscribers.add(send);
      return () => {
        subscribers.delete(send);
        if (subscribers.size === 0) graceTimer = set(() => ((graceTimer = undefined), listen(false)), grace);
      };
    },
    cursor: () => cursorOf(seq),
    close() {
      if (flushTimer !== undefined) clear(flushTimer);
      if (graceTimer !== undefined) clear(graceTimer);
      subscribers.clear();
      listen(false);
    },
  };
}

function parseCursor(text: string | undefined, epoch: string): number | undefined {
  if (text === undefined) return undefined;
  const m = /^([0-9a-z]+):(\d{1,15})$/.exec(text);
  return m && m[1] === epoch ? Number(m[2]) : undefined;
}
