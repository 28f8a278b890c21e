/**
 * The router hooks (spec htcondor.md §4.8): TRANSLATE_JOB, UPDATE_JOB_INFO, JOB_FINALIZE
 * (old name JOB_EXIT accepted) and JOB_CLEANUP, found as `<Keyword>_HOOK_<TYPE>` with the
 * job's `HookKeyword`, else the router's JOB_ROUTER_HOOK_KEYWORD. Each must exit 0; there
 * is no fallback to the built-in behaviour when a configured hook fails. Stdin is old-style
 * ad text with `------` (six dashes) between ads. One hook per job at a time.
 */
import {
  ClassAd,
  describeHookResult,
  HookRunner,
  hookSucceeded,
  printNewAd,
  readHookAd,
  ROUTER_HOOK_SEPARATOR,
  writeHookAds,
  type PluginContext,
} from "jobtap/plugin";
import type { Route } from "./routes.js";

export type RouterHookType = "TRANSLATE_JOB" | "UPDATE_JOB_INFO" | "JOB_FINALIZE" | "JOB_CLEANUP";

/** What a hook run gave: not configured, failed (with why), or its stdout ad. */
export type HookOutcome =
  | { kind: "none" }
  | { kind: "failed"; why: string }
  | { kind: "ok"; ad: ClassAd; empty: boolean };

/** Runs the router hooks for one router instance. */
export class RouterHooks {
  private readonly runner: HookRunner;
  /** Job (original f58) → the hook running for it. */
  private readonly busy = new Set<string>();

  constructor(
    p: PluginContext,
    private readonly hookPath: (keyword: string, type: string) => string | undefined,
    private readonly defaultKeyword: string | undefined,
    private readonly timeLimitMs: number,
  ) {
    this.runner = new HookRunner({ plugin: "condor-router", clock: p.clock, log: p.log, maxInFlight: Infinity });
  }

  /** The keyword for a job: its HookKeyword, else the router's default. */
  keyword(original: ClassAd): string | undefined {
    const v = original.has("HookKeyword") ? original.evaluate("HookKeyword") : undefined;
    return typeof v === "string" && v !== "" ? v : this.defaultKeyword;
  }

  /** The configured path of `type` for a job, if any (JOB_FINALIZE falls back to JOB_EXIT). */
  path(original: ClassAd, type: RouterHookType): string | undefined {
    const kw = this.keyword(original);
    if (kw === undefined) return undefined;
    return this.hookPath(kw, type) ?? (type === "JOB_FINALIZE" ? this.hookPath(kw, "JOB_EXIT") : undefined);
  }

  /** True while a hook runs for `job`: HTCondor does not start another one for it. */
  running(job: string): boolean {
    return this.busy.has(job);
  }

  /** TRANSLATE_JOB's stdin: the route-info ad, `------`, the original job ad. */
  static translateInput(route: Route, original: ClassAd): string {
    const info = new ClassAd();
    info.set("Name", route.name);
    info.set("TargetUniverse", BigInt(route.settings.targetUniverse));
    if (route.settings.gridResource) info.set("GridResource", route.settings.gridResource);
    return writeHookAds([printNewAd(info).replace(/\n\s*/g, " ").trim(), original], ROUTER_HOOK_SEPARATOR);
  }

  /**
   * Runs `type` for `job` with the text `stdin()` gives (made only when the hook is
   * configured); a bad output line fails it (the caller decides what that means).
   */
  async run(job: string, original: ClassAd, type: RouterHookType, stdin: () => string): Promise<HookOutcome> {
    const path = this.path(original, type);
    if (path === undefined) return { kind: "none" };
    this.busy.add(job);
    try {
      const r = await this.runner.run({
        path,
        stdin: stdin(),
        name: `${type} for job ${job}`,
        hookType: type,
        ...(this.timeLimitMs > 0 ? { timeLimitMs: this.timeLimitMs } : {}),
      });
      if (!hookSucceeded(r)) return { kind: "failed", why: `${type} hook ${path} ${describeHookResult(r)}` };
      const stdout = r.kind === "exited" ? r.stdout : "";
      const out = readHookAd(stdout);
      if (out.failed.length > 0) {
        const f = out.failed[0]!;
        return { kind: "failed", why: `${type} hook ${path}: output line ${f.line} "${f.text}": ${f.message}` };
      }
      out.ad.delete("MyType");
      out.ad.delete("TargetType");
      return { kind: "ok", ad: out.ad, empty: stdout.trim() === "" };
    } finally {
      this.busy.delete(job);
    }
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}
