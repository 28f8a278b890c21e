/**
 * A small reader of HTCondor's text user log, written from HTCondor's format rules (not its
 * code): an event is a header line `NNN (C.PPP.SSS) YYYY-MM-DD HH:MM:SS text`, then body
 * lines, then a line `...`. Anything else is a format error the tests must see.
 */
export interface ParsedEvent {
  event: number;
  cluster: bigint;
  proc: number;
  subproc: number;
  /** Seconds since the epoch, read as local time (HTCondor's default). */
  time: number;
  text: string;
  body: string[];
}

const HEADER = /^(\d{3}) \((\d{3,})\.(\d{3})\.(\d{3})\) (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d) (.*)$/;

/** Parses a whole log; throws naming the line that does not follow the format. */
export function parseUserLog(text: string): ParsedEvent[] {
  const lines = text.split("\n");
  if (lines.pop() !== "") throw new Error("the log does not end with a newline");
  const events: ParsedEvent[] = [];
  let cur: ParsedEvent | undefined;
  lines.forEach((line, i) => {
    if (cur === undefined) {
      const m = HEADER.exec(line);
      if (!m) throw new Error(`line ${i + 1}: not an event header: ${JSON.stringify(line)}`);
      const [, ev, c, p, s, y, mo, d, h, mi, se, rest] = m;
      const time = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(se)).getTime() / 1000;
      cur = { event: Number(ev), cluster: BigInt(c!), proc: Number(p), subproc: Number(s), time, text: rest!, body: [] };
    } else if (line === "...") {
      events.push(cur);
      cur = undefined;
    } else {
      if (!/^(\t|    )/.test(line)) throw new Error(`line ${i + 1}: a body line starts with a tab or four spaces: ${JSON.stringify(line)}`);
      cur.body.push(line);
    }
  });
  if (cur !== undefined) throw new Error("the last event has no '...' line");
  return events;
}
