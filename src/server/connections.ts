/**
 * Who holds the daemon's connections, so that no guest can lock the owner out.
 *
 * Node cannot tell who is at the other end of a Unix socket until a request proves it
 * (auth.ts), so a connection is anonymous from accept until its first authenticated request.
 * Two rules:
 *  - Past `[limits] connections` open at once, a new connection does not get refused:
 *    room is made by closing the oldest anonymous connection (one that has not proven
 *    anybody yet: a guest reconnecting in a loop holds only such), else one of the guest
 *    holding the most. Only when every connection is the owner's is the new one answered
 *    503 `LIMIT_EXCEEDED`. The owner's client proves itself in its first request, so once
 *    in, it stays in.
 *  - A guest may hold at most `[limits] connections-per-user` authenticated connections;
 *    a request that would prove one more is answered 503 and its connection closed. Each
 *    connection serves one request at a time, so this bounds a guest's requests in flight
 *    too. The owner has no per-user limit.
 */
import type { Socket } from "node:net";

/** An open connection and the uid its requests proved (undefined: none yet). */
interface Held {
  uid: number | undefined;
}

export interface ConnectionTable {
  /** A new connection; false if it must be refused (everything open is the owner's). */
  admit(socket: Socket): boolean;
  /**
   * A request on `socket` proved `uid`; false if that makes one connection too many for
   * a guest (the caller answers 503 and closes).
   */
  proven(socket: Socket, uid: number): boolean;
  /** Open connections now. */
  readonly size: number;
}

/** Default of `[limits] connections-per-user`. */
export const DEFAULT_CONNECTIONS_PER_USER = 64;

/** Tracks connections for `startSocketServer`; `evicted` hears of each connection closed for room. */
export function connectionTable(max: number, perUser: number, owner: number, evicted: (why: string) => void): ConnectionTable {
  // Insertion order is age: the first anonymous entry is the oldest one.
  const held = new Map<Socket, Held>();
  const perUid = new Map<number, number>();
  const victim = (): Socket | undefined => {
    for (const [s, h] of held) if (h.uid === undefined) return s;
    let most: number | undefined;
    for (const [uid, n] of perUid) if (uid !== owner && (most === undefined || n > (perUid.get(most) ?? 0))) most = uid;
    if (most === undefined) return undefined;
    for (const [s, h] of held) if (h.uid === most) return s;
    return undefined;
  };
  const forget = (socket: Socket) => {
    const h = held.get(socket);
    if (!h) return;
    held.delete(socket);
    if (h.uid === undefined) return;
    const n = (perUid.get(h.uid) ?? 1) - 1;
    if (n > 0) perUid.set(h.uid, n);
    else perUid.delete(h.uid);
  };
  return {
    admit(socket) {
      if (held.size >= max) {
        const v = victim();
        if (v === undefined) return false;
        const uid = held.get(v)?.uid;
        forget(v);
        v.destroy();
        evicted(uid === undefined ? "an anonymous connection (no request proven yet)" : `a connection of uid ${uid}`);
      }
      held.set(socket, { uid: undefined });
      socket.once("close", () => forget(socket));
      return true;
    },
    proven(socket, uid) {
      const h = held.get(socket);
      if (!h || h.uid !== undefined) return true;
      const n = perUid.get(uid) ?? 0;
      if (uid !== owner && n >= perUser) return false;
      h.uid = uid;
      perUid.set(uid, n + 1);
      return true;
    },
    get size() {
      return held.size;
    },
  };
}
