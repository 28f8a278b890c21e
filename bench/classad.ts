/**
 * ClassAd benchmark (issue 6): per-evaluation cost of three typical expressions and the
 * cost of parsing a 40-attribute old-style job ad. Each figure is the median of 5 runs.
 * Last stdout line: {"a_ns","b_ns","c_ns","d_us"}.
 */
import { ClassAd, Evaluator, parseExpr, parseOldAd, type Expr } from "../src/classad/index.js";

const JOB_AD = [
  "MyType = \"Job\"",
  "TargetType = \"Machine\"",
  "ClusterId = 17",
  "ProcId = 0",
  "Owner = \"alice\"",
  "User = \"alice@example.org\"",
  "Cmd = \"/home/alice/bin/simulate\"",
  "Args = \"--steps 1000 --seed 42\"",
  "Iwd = \"/home/alice/run\"",
  "JobUniverse = 5",
  "JobStatus = 1",
  "JobPrio = 0",
  "RequestCpus = 4",
  "RequestMemory = 8192",
  "RequestDisk = 1048576",
  "RequestGpus = 0",
  "ImageSize = 250000",
  "DiskUsage = 1000",
  "QDate = 1700000000",
  "EnteredCurrentStatus = 1700000000",
  "NumJobStarts = 0",
  "NumRestarts = 0",
  "MaxHosts = 1",
  "MinHosts = 1",
  "CurrentHosts = 0",
  "WantRemoteIO = true",
  "WantCheckpoint = false",
  "ShouldTransferFiles = \"YES\"",
  "WhenToTransferOutput = \"ON_EXIT\"",
  "TransferInput = \"input.dat,params.json\"",
  "Out = \"job.out\"",
  "Err = \"job.err\"",
  "UserLog = \"/home/alice/run/job.log\"",
  "Environment = \"OMP_NUM_THREADS=4 LANG=C\"",
  "AccountingGroup = \"group_physics.alice\"",
  "PeriodicRemove = (JobStatus == 2) && (time() - EnteredCurrentStatus > 86400)",
  "OnExitRemove = true",
  "Rank = TARGET.Mips * 1.5 + (TARGET.Memory >= 16384 ? 10 : 0)",
  "Requirements = (TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && (TARGET.Memory >= RequestMemory)",
  "LeaveJobInQueue = false",
].join("\n");

const MACHINE_AD = 'Cpus = 8\nMemory = 32768\nArch = "X86_64"\nOpSys = "LINUX"\nMips = 20000\nState = "Claimed"\nActivity = "Idle"\n';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * ns per call of `fn` over `n` calls, as CPU time of this process: the build machine is
 * shared, and wall-clock time would also count the periods other processes held the CPU.
 */
function timeIt(n: number, fn: () => unknown): number {
  let sink: unknown;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) sink = fn();
  const t1 = process.cpuUsage(t0);
  if (sink === Symbol.for("never")) console.error(sink);
  return ((t1.user + t1.system) * 1000) / n;
}

function measure(n: number, fn: () => unknown): number {
  timeIt(n, fn); // warm-up: let the JIT settle
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) runs.push(timeIt(n, fn));
  return median(runs);
}

/** Bench entry point (`npm run bench -- classad`). */
export async function main(_args: string[]): Promise<void> {
  const ev = new Evaluator({ clock: () => 1700000000 });
  const job = parseOldAd(JOB_AD);
  const machine = parseOldAd(MACHINE_AD);
  const ea: Expr = parseExpr('RequestCpus <= Cpus && RequestMemory <= Memory && Arch == "X86_64"');
  const eb: Expr = parseExpr('ifThenElse(State == "Claimed" && Activity == "Idle", 0, 300)');
  const ec: Expr = parseExpr('strcat(Owner, "-", string(ClusterId)) == "alice-17"');
  const check = [ev.evaluate(ea, { my: job, target: machine }), ev.evaluate(eb, { my: machine }), ev.evaluate(ec, { my: job })];
  if (check[0] !== true || check[1] !== 0n || check[2] !== true) throw new Error(`bench expressions gave ${String(check)}`);
  const a = measure(500_000, () => ev.evaluate(ea, { my: job, target: machine }));
  console.error(`(a) ${a.toFixed(0)} ns`);
  const b = measure(500_000, () => ev.evaluate(eb, { my: machine }));
  console.error(`(b) ${b.toFixed(0)} ns`);
  const c = measure(500_000, () => ev.evaluate(ec, { my: job }));
  console.error(`(c) ${c.toFixed(0)} ns`);
  const d = measure(5_000, (): ClassAd => parseOldAd(JOB_AD)) / 1000;
  console.error(`(d) ${d.toFixed(2)} µs`);
  console.log(JSON.stringify({ a_ns: Math.round(a), b_ns: Math.round(b), c_ns: Math.round(c), d_us: Number(d.toFixed(2)) }));
}
