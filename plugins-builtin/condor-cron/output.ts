/**
 * The output protocol of daemon ClassAd ("cron") hooks (htcondor.md §7.5): attribute lines
 * grouped into records, each ended by a line starting with `-` that may carry arguments
 * `- [tag] [update[:bool]]`; the last record may end at end of output instead.
 *
 * Parsing only: publishing (LastUpdate, named ads, merging into slot ads) is the caller's.
 * One deliberate difference: a record's tag belongs to that record alone. (HTCondor keeps a
 * tag from a `- tag` line that ended an empty record and applies it to the next one.)
 */
import { ClassAd, insertLine, isTrue, parseExpr, printOldAd, typeOf, type FailedLine } from "jobtap/plugin";

/** Lines longer than this are split, as HTCondor's line buffer does. */
export const CRON_MAX_LINE = 64 * 1024;

/** One record of cron output. */
export interface CronRecord {
  /** The attributes inserted (at least one: records with none are not returned). */
  ad: ClassAd;
  /** The tag (`- tag`): the record is published as `<Job>.<tag>`; undefined for `<Job>`. */
  tag: string | undefined;
  /**
   * `update` asked for a collector update now (true) or not (false); undefined when the
   * record said nothing and the manager's autopublish setting decides. A value that is
   * neither a boolean word nor an expression giving a boolean counts as true, as in HTCondor.
   */
  update: boolean | undefined;
  /** The separator line's arguments as written (trimmed); "" at end of output. */
  args: string;
  /** Attribute lines of this record that could not be inserted (numbered in the whole output). */
  failed: FailedLine[];
}

/** Options of a cron output reader. */
export interface CronReaderOptions {
  /** PREFIX: prepended to every attribute line before it is read (so to every name). */
  prefix?: string;
}

/**
 * Reads cron output incrementally: `push` text as it arrives (lines may be split across
 * chunks), collect completed records; `end` at process exit returns the trailing record.
 * Lines are split at `\n` or NUL; empty lines are ignored.
 */
export class CronOutputReader {
  private partial = "";
  private lineNo = 0;
  private ad = new ClassAd();
  private failed: FailedLine[] = [];
  /** Bad lines of records that had no good line (so were not returned). */
  readonly orphanFailed: FailedLine[] = [];

  constructor(private readonly opts: CronReaderOptions = {}) {}

  /** Feeds output text; returns the records it completed. */
  push(text: string): CronRecord[] {
    const out: CronRecord[] = [];
    let data = this.partial + text;
    let start = 0;
    for (;;) {
      let end = nextBreak(data, start);
      if (end < 0) {
        if (data.length - start < CRON_MAX_LINE) break;
        end = start + CRON_MAX_LINE;
        this.line(data.slice(start, end), out);
        start = end;
        continue;
      }
      if (end - start > CRON_MAX_LINE) end = start + CRON_MAX_LINE;
      this.line(data.slice(start, end), out);
      start = end < data.length && (data[end] === "\n" || data[end] === "\0") ? end + 1 : end;
    }
    this.partial = data.slice(start);
    data = "";
    return out;
  }

  /** Ends the output: the trailing text and any unterminated record. */
  end(): CronRecord[] {
    const out: CronRecord[] = [];
    if (this.partial !== "") this.line(this.partial, out);
    this.partial = "";
    this.close("", out);
    return out;
  }

  private line(text: string, out: CronRecord[]): void {
    this.lineNo++;
    if (text === "") return;
    if (text[0] === "-") {
      this.close(text.slice(1).trim(), out);
      return;
    }
    const raw = (this.opts.prefix ?? "") + text;
    const why = insertLine(this.ad, raw);
    if (why !== null) this.failed.push({ line: this.lineNo, text, message: why });
  }

  private close(args: string, out: CronRecord[]): void {
    const ad = this.ad;
    const failed = this.failed;
    this.ad = new ClassAd();
    this.failed = [];
    if (ad.size === 0) {
      this.orphanFailed.push(...failed);
      return;
    }
    const { tag, update } = parseRecordArgs(args, ad);
    out.push({ ad, tag, update, args, failed });
  }
}

function nextBreak(s: string, from: number): number {
  const nl = s.indexOf("\n", from);
  const nul = s.indexOf("\0", from);
  return nl < 0 ? nul : nul < 0 ? nl : Math.min(nl, nul);
}

/**
 * Splits `- [tag] [update[:bool]]` arguments: tokens separated by blanks or commas; the
 * first token is the tag unless it has a `:`; `update` (case-sensitive) is true, and
 * `update:<value>` takes `true`/`false`/`1`/`0` or a ClassAd expression over the record.
 */
export function parseRecordArgs(args: string, ad: ClassAd = new ClassAd()): { tag: string | undefined; update: boolean | undefined } {
  const tokens = args.split(/[\s,]+/).filter((t) => t !== "");
  let tag: string | undefined;
  let i = 0;
  if (tokens[0] !== undefined && !tokens[0].includes(":")) {
    tag = tokens[0];
    i = 1;
  }
  let update: boolean | undefined;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === "update") update = true;
    else if (t.startsWith("update:")) update = updateValue(t.slice(7), ad);
  }
  return { tag, update };
}

function updateValue(text: string, ad: ClassAd): boolean {
  const word = text.toLowerCase();
  if (word === "true" || word === "1") return true;
  if (word === "false" || word === "0") return false;
  try {
    const v = ad.evaluateExpr(parseExpr(text, true));
    const type = typeOf(v);
    if (type === "boolean" || type === "integer" || type === "real") return isTrue(v);
  } catch {
    // not an expression: HTCondor then keeps the bare `update` meaning
  }
  return true;
}

/** Reads a whole cron output (at process exit). */
export function readCronOutput(text: string, opts: CronReaderOptions = {}): { records: CronRecord[]; failed: FailedLine[] } {
  const reader = new CronOutputReader(opts);
  const records = [...reader.push(text), ...reader.end()];
  const failed = [...records.flatMap((r) => r.failed), ...reader.orphanFailed].sort((a, b) => a.line - b.line);
  return { records, failed };
}

/** Writes one cron record: the ad's lines, then `- [tag] [update:bool]`. */
export function writeCronRecord(ad: ClassAd, opts: { tag?: string; update?: boolean } = {}): string {
  const args = [opts.tag, opts.update === undefined ? undefined : `update:${opts.update}`].filter((a) => a !== undefined);
  return `${printOldAd(ad)}-${args.length ? " " + args.join(" ") : ""}\n`;
}
