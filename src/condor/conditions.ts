/**
 * `if` / `elif` conditions, shared by config files and transforms. The syntax is HTCondor's:
 * booleans (`true/false/yes/no/t/f`), numbers, `defined NAME`, `version <op> x.y[.z]`, an
 * optional leading `!`, and — only where an ad is at hand — a ClassAd expression.
 */

/** What a condition may consult. */
export interface ConditionContext {
  /** Expands `$(...)` in the condition text. */
  expand(text: string): string;
  /** True when `name` looks up to a non-empty value. */
  isDefined(name: string): boolean;
  /** Evaluates a ClassAd expression; absent in config files, where that is an error. */
  evaluate?(expression: string): boolean;
  /** The HTCondor version `version >= x.y` compares against. */
  version: string;
}

/** The HTCondor version jobtap claims in `version` conditions unless told otherwise. */
export const DEFAULT_CONDOR_VERSION = "25.0.0";

/** Evaluates one condition; throws an Error whose message says what is wrong with it. */
export function evaluateCondition(text: string, ctx: ConditionContext): boolean {
  let cond = (text.includes("$") ? ctx.expand(text) : text).trim();
  let negate = false;
  if (cond.startsWith("!")) {
    negate = true;
    cond = cond.slice(1).trim();
  }
  const result = evaluatePlain(cond, ctx);
  return negate ? !result : result;
}

function evaluatePlain(cond: string, ctx: ConditionContext): boolean {
  if (cond === "") return false;
  const lower = cond.toLowerCase();
  if (lower === "true" || lower === "yes" || lower === "t") return true;
  if (lower === "false" || lower === "no" || lower === "f") return false;
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(cond)) return Number(cond) !== 0;
  const defined = /^defined(?:\s+(.*))?$/i.exec(cond);
  if (defined) {
    const name = (defined[1] ?? "").trim();
    if (name === "") throw new Error(`"defined" needs a name`);
    if (/^(true|1)$/i.test(name)) return true;
    return ctx.isDefined(name);
  }
  const version = /^version\b\s*(.*)$/i.exec(cond);
  if (version) return compareVersion(version[1]!, ctx.version);
  if (ctx.evaluate) return ctx.evaluate(cond);
  throw new Error(`"${cond}" is not a valid if condition (expressions are not allowed here)`);
}

function versionParts(text: string): number[] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/i.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** `version >= 8.1.2`: compares the configured HTCondor version with a literal. */
function compareVersion(rest: string, current: string): boolean {
  const m = /^(==|!=|>=|<=|>|<|=)\s*(.*)$/.exec(rest.trim());
  const wanted = m ? versionParts(m[2]!) : undefined;
  const have = versionParts(current);
  if (!m || !wanted || !have) throw new Error(`"version ${rest.trim()}" is not a valid version test`);
  let diff = 0;
  for (let i = 0; i < 3 && diff === 0; i++) diff = Math.sign(have[i]! - wanted[i]!);
  switch (m[1]) {
    case ">":
      return diff > 0;
    case ">=":
      return diff >= 0;
    case "<":
      return diff < 0;
    case "<=":
      return diff <= 0;
    case "!=":
      return diff !== 0;
    default:
      return diff === 0;
  }
}

/** One open `if` while reading: whether its lines run and whether a branch was taken. */
interface IfFrame {
  line: number;
  parentActive: boolean;
  taken: boolean;
  active: boolean;
  seenElse: boolean;
}

/** HTCondor allows this many nested `if`s. */
export const IF_NESTING_LIMIT = 63;

/**
 * The if/elif/else/endif stack used while reading a file line by line. `handle` returns
 * true when the line was a conditional keyword; errors are thrown as Error with a message.
 */
export class IfStack {
  private readonly frames: IfFrame[] = [];

  /** True when lines at this point should be acted on. */
  get active(): boolean {
    const top = this.frames[this.frames.length - 1];
    return top === undefined ? true : top.active;
  }

  /** Processes `line` if it is a conditional keyword; returns false otherwise. */
  handle(text: string, line: number, evaluate: (cond: string) => boolean): boolean {
    const m = /^(if|elif|else|endif)(?:\s+(.*))?$/i.exec(text);
    if (!m) return false;
    const keyword = m[1]!.toLowerCase();
    const rest = (m[2] ?? "").trim();
    if (keyword === "if") this.open(rest, line, evaluate);
    else if (keyword === "elif") this.elif(rest, evaluate);
    else if (keyword === "else") this.else();
    else if (this.frames.pop() === undefined) throw new Error("endif without a matching if");
    return true;
  }

  /** Throws if an `if` is still open at the end of the text. */
  finish(): void {
    const open = this.frames[this.frames.length - 1];
    if (open) throw Object.assign(new Error(`if has no matching endif`), { line: open.line });
  }

  private open(cond: string, line: number, evaluate: (cond: string) => boolean): void {
    if (this.frames.length >= IF_NESTING_LIMIT) {
      throw new Error(`if nesting deeper than ${IF_NESTING_LIMIT} levels`);
    }
    const parentActive = this.active;
    // Lines in a false branch are not even expanded: do not evaluate the condition.
    const value = parentActive ? evaluate(cond) : false;
    this.frames.push({ line, parentActive, taken: value, active: value, seenElse: false });
  }

  private top(keyword: string): IfFrame {
    const top = this.frames[this.frames.length - 1];
    if (!top) throw new Error(`${keyword} without a matching if`);
    if (top.seenElse) throw new Error(`${keyword} after else`);
    return top;
  }

  private elif(cond: string, evaluate: (cond: string) => boolean): void {
    const top = this.top("elif");
    const value = top.parentActive && !top.taken ? evaluate(cond) : false;
    top.active = value;
    top.taken ||= value;
  }

  private else(): void {
    const top = this.top("else");
    top.seenElse = true;
    top.active = top.parentActive && !top.taken;
    top.taken = true;
  }
}
