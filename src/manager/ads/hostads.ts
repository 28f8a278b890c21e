/**
 * Host ads: the machine ad and one slot ad per static slot (slots.ts), as HTCondor's startd
 * advertises them, plus what plugins publish into them.
 *
 * Each read builds fresh ads (the caller may change its copy): the base attributes from the
 * pool, the slot's use and the machine (load, disk), then every published ad in
 * registration order, later ones overwriting earlier ones — HTCondor's merge of startd cron
 * output (spec htcondor.md §7.6). A source that publishes again replaces its previous ad in
 * place (it keeps its position); `withdraw` removes it. Published ads live in memory only:
 * after a restart their publishers publish again (as cron jobs re-run).
 */
import { statfsSync } from "node:fs";
import { arch, loadavg, platform, tmpdir } from "node:os";
import { ClassAd } from "../../classad/classad.js";
import type { Expr } from "../../classad/expr.js";
import { parseExpr } from "../../classad/parser.js";
import { builtinEvaluator } from "../../classad/shared.js";
import { isTrue } from "../../classad/values.js";
import { ErrorCode, JobtapError, isJobtapError } from "../../errors.js";
import type { Clock } from "../base/clock.js";
import type { AdTarget, HostAdsApi } from "../port/port.js";
import { formatJobId } from "../base/ids.js";
import type { SlotUse } from "../scheduler/scheduler.js";
import type { ResourcePool } from "../scheduler/slots.js";

/** Attributes never merged: a slot's identity and the selectors themselves (§7.6). */
export const UNMERGED_ATTRIBUTES: readonly string[] = ["Name", "SlotID", "SlotMergeConstraint", "SlotName", "SlotTypeId"];
const UNMERGED = new Set(UNMERGED_ATTRIBUTES.map((n) => n.toLowerCase()));

interface Publication {
  readonly source: string;
  readonly ad: ClassAd;
  readonly target: AdTarget;
  readonly constraint: Expr | undefined;
}

/**
 * A slot's startd policy (HTCondor's START, RANK, PREEMPT and STARTD_ATTRS), parsed; see
 * policy/slot-policy.ts. Absent parts keep the defaults: Start = true, Rank = 0.0.
 */
export interface SlotPolicy {
  readonly start?: Expr | undefined;
  readonly rank?: Expr | undefined;
  readonly preempt?: Expr | undefined;
  /** STARTD_ATTRS: attributes published into the slot ad, in order. */
  readonly attrs?: ReadonlyArray<readonly [string, Expr]> | undefined;
}

/** Attributes that make a slot choosy: set by policy or by a publication, matchmaking runs. */
const POLICY_NAMES = new Set(["start", "requirements", "rank", "preempt"]);

export interface HostAdsOptions {
  hostname: string;
  clock: Clock;
  pool: ResourcePool;
  /** The slots and their use (the scheduler's). */
  slotUse(): SlotUse[];
  /** A directory on the filesystem whose free space is `Disk` (default: the temp dir). */
  diskPath?: string;
  /** Per slot (index = SlotID - 1): its policy; a missing entry has the defaults. */
  policy?: readonly SlotPolicy[];
  /** Called after a publication, withdrawal or policy change: slots may match differently. */
  changed?: () => void;
}

/** HTCondor's Arch and OpSys names for Node's. */
const ARCH: Record<string, string> = { x64: "X86_64", arm64: "aarch64", ia32: "INTEL", ppc64: "ppc64le", s390x: "s390x" };
const OPSYS: Record<string, string> = { linux: "LINUX", darwin: "macOS", win32: "WINDOWS", freebsd: "FREEBSD" };

/** The machine ad, the slot ads, and what plugins publish into them. */
export class HostAds implements HostAdsApi {
  /** Registration order is merge order. */
  private readonly published = new Map<string, Publication>();
  private policy: readonly SlotPolicy[];
  /** See `constrained`. */
  private choosy = false;
  /** See `preempting`. */
  private preempts = false;

  constructor(private readonly opts: HostAdsOptions) {
    this.policy = opts.policy ?? [];
    this.recheck();
  }

  /**
   * True when some slot may refuse a job: a START or RANK other than the defaults, or a
   * publication setting Start, Requirements or Rank. False: the scheduler's fast path.
   */
  get constrained(): boolean {
    return this.choosy;
  }

  /** True when some slot has a PREEMPT (by policy or a publication setting `Preempt`). */
  get preempting(): boolean {
    return this.preempts;
  }

  /** Replaces the slots' policy (reconfig); the scheduler is told to look again. */
  setPolicy(policy: readonly SlotPolicy[]): void {
    this.policy = policy;
    this.recheck();
    this.opts.changed?.();
  }

  /** The policy of slot `id` (its SlotID). */
  policyOf(id: number): SlotPolicy {
    return this.policy[id - 1] ?? {};
  }

  private recheck(): void {
    const trivialStart = (e: Expr | undefined) => e === undefined || (e.type === "literal" && e.value === true);
    const trivialRank = (e: Expr | undefined) => e === undefined || (e.type === "literal" && (e.value === 0 || e.value === 0n));
    const never = (e: Expr | undefined) => e === undefined || (e.type === "literal" && e.value === false);
    let preempts = this.policy.some((p) => !never(p.preempt));
    let choosy = preempts || this.policy.some((p) => !trivialStart(p.start) || !trivialRank(p.rank));
    for (const pub of this.published.values()) {
      if (pub.target.ad === "machine") continue;
      for (const name of pub.ad.names()) {
        const n = name.toLowerCase();
        if (POLICY_NAMES.has(n)) choosy = true;
        if (n === "preempt") preempts = true;
      }
    }
    this.choosy = choosy;
    this.preempts = preempts;
  }

  /**
   * Publishes `ad` under `source` (replacing that source's previous ad, which keeps its
   * place in the merge order). The ad is copied. A `constraint` that does not parse throws
   * CLASSAD_SYNTAX naming the source.
   */
  publish(source: string, ad: ClassAd, target: AdTarget = {}): void {
    if (typeof source !== "string" || source === "") throw new JobtapError(ErrorCode.INVALID_ARGUMENT, "host ads: a publication needs a source name");
    let constraint: Expr | undefined;
    if (target.constraint !== undefined) {
      try {
        constraint = parseExpr(target.constraint, true);
      } catch (e) {
        if (isJobtapError(e)) throw new JobtapError(e.code, `host ads: source ${source}: constraint: ${e.message}`, e.details);
        throw e;
      }
    }
    const pub: Publication = { source, ad: ad.clone(), target: { ...target }, constraint };
    this.published.set(source, pub);
    this.recheck();
    this.opts.changed?.();
  }

  /** Removes a source's ad; false if it had none. */
  withdraw(source: string): boolean {
    const had = this.published.delete(source);
    if (had) {
      this.recheck();
      this.opts.changed?.();
    }
    return had;
  }

  /** Sources in merge order. */
  sources(): string[] {
    return [...this.published.keys()];
  }

  /** A fresh machine ad: the host's attributes, then publications to the machine ad. */
  machineAd(): ClassAd {
    const ad = this.machineBase();
    for (const pub of this.published.values()) if (pub.target.ad === "machine") merge(ad, pub.ad);
    return ad;
  }

  /** Fresh slot ads, in SlotID order. */
  slotAds(): ClassAd[] {
    const machine = this.machineBase();
    return this.opts.slotUse().map((use) => this.slotAdOf(use, machine));
  }

  /** A fresh ad of slot `id` (its SlotID), or undefined. */
  slotAd(id: number): ClassAd | undefined {
    const use = this.opts.slotUse().find((u) => u.slot.id === id);
    return use && this.slotAdOf(use, this.machineBase());
  }

  private slotAdOf(use: SlotUse, machine: ClassAd): ClassAd {
    const ad = slotBase(use, machine, this.opts.hostname, this.policyOf(use.slot.id));
    for (const pub of this.published.values()) if (pub.target.ad !== "machine" && this.selects(pub, ad, use.slot.id)) merge(ad, pub.ad);
    return ad;
  }

  private selects(pub: Publication, slotAd: ClassAd, slotId: number): boolean {
    return targetSelects(pub.target, pub.constraint, pub.ad, slotAd, slotId);
  }

  /** The machine's own attributes (what every slot ad also carries). */
  private machineBase(): ClassAd {
    const { pool, hostname } = this.opts;
    const slots = this.opts.slotUse().length;
    const load = loadavg()[0] ?? 0;
    const ad = new ClassAd();
    ad.set("MyType", "Machine");
    ad.set("Name", hostname);
    ad.set("Machine", hostname);
    ad.set("Arch", ARCH[arch()] ?? arch().toUpperCase());
    ad.set("OpSys", OPSYS[platform()] ?? platform().toUpperCase());
    ad.set("TotalCpus", BigInt(pool.cores));
    ad.set("TotalGpus", BigInt(pool.gpus));
    ad.set("TotalMemory", BigInt(Math.floor(pool.memory / 1048576)));
    ad.set("TotalDisk", BigInt(freeDiskKiB(this.opts.diskPath ?? tmpdir())));
    ad.set("TotalSlots", BigInt(slots));
    ad.set("TotalLoadAvg", load);
    ad.set("LoadAvg", load);
    ad.set("MyCurrentTime", BigInt(Math.floor(this.opts.clock.now() / 1000)));
    return ad;
  }
}

/** Whether a publication of `ad` at `t` (its constraint parsed) merges into this slot. */
function targetSelects(t: AdTarget, constraint: Expr | undefined, ad: ClassAd, slotAd: ClassAd, slotId: number): boolean {
  if (t.slotIds !== undefined && !t.slotIds.includes(slotId)) return false;
  if (constraint !== undefined) return isTrue(builtinEvaluator().evaluate(constraint, { my: ad, target: slotAd }));
  if (t.namePrefix !== undefined && t.namePrefix !== "") return (slotAd.evaluate("Name") as string).startsWith(t.namePrefix);
  if (t.slotTypeId !== undefined) return slotAd.evaluate("SlotTypeID") === BigInt(t.slotTypeId);
  if (t.slotId !== undefined) return t.slotId === slotId;
  return true;
}

/**
 * Whether a publication of `ad` at target `t` merges into the slot whose ad is `slotAd`:
 * the rule HostAds applies, for a plugin that keeps ads of its own per slot. A constraint
 * that does not parse selects nothing.
 */
export function adTargetSelects(t: AdTarget, ad: ClassAd, slotAd: ClassAd): boolean {
  let constraint: Expr | undefined;
  try {
    constraint = t.constraint === undefined ? undefined : parseExpr(t.constraint, true);
  } catch {
    return false;
  }
  return targetSelects(t, constraint, ad, slotAd, Number(slotAd.evaluate("SlotID")));
}

/** A slot's ad: the machine's attributes, then the slot's own (docs/ads.md). */
function slotBase(use: SlotUse, machine: ClassAd, hostname: string, policy: SlotPolicy): ClassAd {
  const { slot } = use;
  const ad = machine.clone();
  const cores = slot.coreHi - slot.coreLo;
  const totalCores = Number(machine.evaluate("TotalCpus"));
  const share = totalCores > 0 ? cores / totalCores : 0;
  const busy = use.jobs.length > 0;
  const since = BigInt(Math.floor(use.since / 1000));
  ad.set("Name", `slot${slot.id}@${hostname}`);
  ad.set("SlotID", BigInt(slot.id));
  ad.set("SlotTypeID", BigInt(slot.typeId));
  ad.set("Cpus", BigInt(cores));
  ad.set("Gpus", BigInt(slot.gpuHi - slot.gpuLo));
  ad.set("Memory", BigInt(Math.floor(slot.memory / 1048576)));
  ad.set("Disk", BigInt(Math.floor(Number(machine.evaluate("TotalDisk")) * share)));
  ad.set("LoadAvg", (machine.evaluate("TotalLoadAvg") as number) * share);
  ad.set("State", busy ? "Claimed" : "Unclaimed");
  ad.set("Activity", busy ? "Busy" : "Idle");
  ad.set("EnteredCurrentState", since);
  ad.set("EnteredCurrentActivity", since);
  ad.set("Start", policy.start ?? true);
  ad.set("Requirements", REQUIREMENTS);
  ad.set("Rank", policy.rank ?? 0.0);
  if (policy.preempt !== undefined) ad.set("Preempt", policy.preempt);
  for (const [name, expr] of policy.attrs ?? []) ad.set(name, expr);
  ad.set("NumJobs", BigInt(use.jobs.length));
  if (busy) ad.set("JobIds", use.jobs.map((id) => formatJobId(id)).join(","));
  return ad;
}

/** A slot's Requirements: its START, as the startd advertises it. */
const REQUIREMENTS: Expr = parseExpr("START", true);

/** Copies every attribute of `from` into `into` except the identity and selector names. */
function merge(into: ClassAd, from: ClassAd): void {
  for (const [name, expr] of from.attributes()) if (!UNMERGED.has(name.toLowerCase())) into.set(name, expr);
}

function freeDiskKiB(path: string): number {
  try {
    const s = statfsSync(path);
    return Math.floor((s.bavail * s.bsize) / 1024);
  } catch {
    return 0;
  }
}
