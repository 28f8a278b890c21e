/**
 * The CSV form of `jobtap account export|import` (docs/accounting.md "CSV"): a header line,
 * then one row per bank (parents first) and one per user association, RFC 4180 quoting.
 * Reading checks every row before anything is sent, and names FILE:LINE and the column of
 * the first bad one; the rows' lines are kept so the service's own refusals (`banks[2]:
 * parent: unknown bank ...`) are reported at their line too.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import type { UserTable } from "../manager/base/users.js";

type Req = Record<string, unknown>;

/** The columns, in the order export writes them. */
export const CSV_COLUMNS = ["kind", "name", "parent", "bank", "shares", "default", "max-running-jobs", "max-active-jobs", "max-cores"] as const;
const LIMIT_COLUMNS = ["max-running-jobs", "max-active-jobs", "max-cores"];

/** One parsed record: its fields and the line it starts on (1-based). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

const bad = (where: string, message: string) => new JobtapError(ErrorCode.INVALID_ARGUMENT, `${where}: ${message}`);

/**
 * Splits RFC 4180 text into records: fields separated by commas, a quoted field may hold
 * commas, CR/LF and doubled quotes. Empty lines are skipped (no record has zero columns).
 */
export function parseCsv(text: string, file: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = "";
      if (text[i] === '"') {
        const open = line;
        i++;
        for (;;) {
          if (i >= text.length) throw bad(`${file}:${open}`, "a quoted field is not closed (a '\"' is missing)");
          const c = text[i]!;
          if (c === '"' && text[i + 1] === '"') (field += '"'), (i += 2);
          else if (c === '"') break;
          else (field += c), (line += c === "\n" ? 1 : 0), i++;
        }
        i++;
        if (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
          throw bad(`${file}:${line}`, `column ${fields.length + 1}: text after a closing quote (write a quote inside a field as "")`);
        }
      } else {
        while (i < text.length && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") field += text[i++];
        if (field.includes('"')) throw bad(`${file}:${line}`, `column ${fields.length + 1}: a '"' inside an unquoted field (quote the field and double the quote)`);
      }
      fields.push(field);
      if (text[i] === ",") i++;
      else break;
    }
    if (text[i] === "\r") i++;
    if (text[i] === "\n") (i++, line++);
    if (!(fields.length === 1 && fields[0] === "")) out.push({ line: start, fields });
  }
  return out;
}

/** Quotes a field when it holds a comma, a quote, CR or LF (RFC 4180). */
export function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Writes the service's export as CSV: users by login name where one is known. */
export function exportCsv(out: Req, users: UserTable): string {
  const row = (r: Req) => CSV_COLUMNS.map((c) => csvField(r[c] === undefined ? "" : String(r[c]))).join(",");
  const lines = [CSV_COLUMNS.join(",")];
  for (const b of out.banks as Req[]) lines.push(row({ ...b, kind: "bank" }));
  for (const u of out.users as Req[]) lines.push(row({ ...u, kind: "user", name: users.name(u.uid as number) }));
  return lines.join("\r\n") + "\r\n";
}

/** The import payload and, for each bank and user entry, its line in the file. */
export interface CsvImport {
  payload: { banks: Req[]; users: Req[] };
  lines: { banks: number[]; users: number[] };
  /** The header's columns, in the file's order. */
  columns: string[];
}

/** Reads an export in CSV: every row checked, the first bad one named by FILE:LINE and column. */
export function importCsv(text: string, file: string, users: UserTable): CsvImport {
  const [head, ...rows] = parseCsv(text, file);
  if (head === undefined) throw bad(file, `empty file (the first line is the header: ${CSV_COLUMNS.join(",")})`);
  const cols = header(head, file);
  const result: CsvImport = { payload: { banks: [], users: [] }, lines: { banks: [], users: [] }, columns: cols };
  for (const r of rows) {
    if (r.fields.length !== cols.length) throw bad(`${file}:${r.line}`, `${r.fields.length} columns, the header has ${cols.length}`);
    const cell = (c: string) => r.fields[cols.indexOf(c)] ?? "";
    const at = (c: string) => `${file}:${r.line}: ${c} (column ${cols.indexOf(c) + 1})`;
    const kind = cell("kind");
    if (kind !== "bank" && kind !== "user") throw bad(at("kind"), `must be "bank" or "user", got ${JSON.stringify(kind)}`);
    const entry = rowEntry(kind, cell, at, users);
    result.payload[kind === "bank" ? "banks" : "users"].push(entry);
    result.lines[kind === "bank" ? "banks" : "users"].push(r.line);
  }
  return result;
}

/** The header's columns: known names, no repeats, kind and name present. */
function header(head: CsvRecord, file: string): string[] {
  const cols = head.fields.map((f) => f.trim());
  cols.forEach((c, i) => {
    if (!(CSV_COLUMNS as readonly string[]).includes(c)) throw bad(`${file}:${head.line}`, `column ${i + 1}: unknown column ${JSON.stringify(c)} (columns: ${CSV_COLUMNS.join(", ")})`);
    if (cols.indexOf(c) !== i) throw bad(`${file}:${head.line}`, `column ${i + 1}: "${c}" appears twice`);
  });
  for (const c of ["kind", "name"]) if (!cols.includes(c)) throw bad(`${file}:${head.line}`, `the header has no "${c}" column`);
  return cols;
}

/** One row as the service's bank or user entry; empty cells are absent values. */
function rowEntry(kind: string, cell: (c: string) => string, at: (c: string) => string, users: UserTable): Req {
  const e: Req = {};
  const int = (c: string, min: number) => {
    const v = cell(c);
    if (v === "") return;
    if (!/^-?\d+$/.test(v) || Number(v) < min) throw bad(at(c), `must be an integer >= ${min}${min < 0 ? " (-1: no limit)" : ""}, got ${JSON.stringify(v)}`);
    e[c] = Number(v);
  };
  const only = (c: string, why: string) => {
    if (cell(c) !== "") throw bad(at(c), `must be empty in a ${kind} row (${why}), got ${JSON.stringify(cell(c))}`);
  };
  const name = cell("name");
  if (name === "") throw bad(at("name"), `must name the ${kind === "bank" ? "bank" : "user (a login name or a uid)"}`);
  if (kind === "bank") {
    e.name = name;
    if (cell("parent") !== "") e.parent = cell("parent");
    only("bank", "a bank's place is its parent");
    only("default", "only a user has a default bank");
  } else {
    const uid = users.uid(name);
    if (uid === undefined) throw bad(at("name"), `unknown user ${JSON.stringify(name)} (not in /etc/passwd, not a uid)`);
    e.uid = uid;
    if (cell("bank") === "") throw bad(at("bank"), "must name the user's bank");
    e.bank = cell("bank");
    only("parent", "a user's place is its bank");
    const d = cell("default");
    if (d !== "" && d !== "true" && d !== "false") throw bad(at("default"), `must be "true", "false" or empty, got ${JSON.stringify(d)}`);
    if (d === "true") e.default = true;
  }
  int("shares", 1);
  for (const c of LIMIT_COLUMNS) int(c, -1);
  return e;
}

/**
 * The service's refusal of entry `banks[i]` or `users[i]`, re-addressed to the row's line
 * (and its column, when the refusal names one); other errors pass as they are.
 */
export function atLine(e: unknown, file: string, { lines, columns: cols }: CsvImport): unknown {
  const msg = (e as Error)?.message;
  const m = typeof msg === "string" ? /(?:^|: )(banks|users)\[(\d+)\]: (.*)$/s.exec(msg) : null;
  const line = m ? lines[m[1] as "banks" | "users"][Number(m[2])] : undefined;
  if (!m || line === undefined) return e;
  const field = /^([a-z-]+): /.exec(m[3]!)?.[1];
  const col = field === undefined ? -1 : cols.indexOf(field === "uid" ? "name" : field);
  const text = col < 0 ? m[3]! : m[3]!.replace(/^[a-z-]+: /, `${cols[col]} (column ${col + 1}): `);
  return new JobtapError((e as JobtapError).code ?? ErrorCode.INVALID_ARGUMENT, `${file}:${line}: ${text}`);
}
