/**
 * jobtap's public library API. Names are listed explicitly, one block per area.
 */
export { ErrorCode, JobtapError, isJobtapError } from "./errors.js";
export type { ErrorCode as ErrorCodeType, JobtapErrorData } from "./errors.js";

// --- job manager ---
export {
  STATES,
  STATE_BIT,
  PENDING,
  RUNNING,
  ACTIVE,
  RESULTS,
  URGENCY_DEFAULT,
  URGENCY_HOLD,
  URGENCY_EXPEDITE,
  PRIORITY_MAX,
  TRANSITIONS,
} from "./manager/base/states.js";
export type { State, JobResult } from "./manager/base/states.js";
export { parseJobId, formatJobId, asJobId, FluidGenerator, JOBID_ENCODINGS } from "./manager/base/ids.js";
export type { JobId, JobIdEncoding } from "./manager/base/ids.js";
export type { EventEntry, Jobspec, JobArgs } from "./manager/port/records.js";
// `JobManager.why(id)` (docs/why.md): the same structure the socket's `why` method returns.
export type { Explanation, Reason, ReasonInput, ReasonLayer, Figure } from "./manager/port/reasons.js";
export type { SchedAnalyzer } from "./manager/why-sched.js";
export { createJobManager, JobManager } from "./manager/manager.js";
export type { JobManagerOptions, JobFilter } from "./manager/manager.js";
export type { JobInfo } from "./manager/engine/views.js";
export type { WaitResult } from "./manager/engine/job.js";
export type { SubmitOptions, SubmitOutcome } from "./manager/submit.js";
export type { RaiseOptions } from "./manager/commands.js";
export type { JournalEntry, Logger, LogLevel } from "./manager/engine/engine.js";
export { RealClock, SimulatedClock } from "./manager/base/clock.js";
export type { Clock, TimerHandle } from "./manager/base/clock.js";
export { parseFSD, formatFSD } from "./manager/base/fsd.js";
export { transition, resultOf } from "./manager/core/transition.js";
export type { JobCore } from "./manager/core/transition.js";
export { MemoryStore } from "./manager/store/memory.js";
export { SqliteStore } from "./manager/store/sqlite.js";
export type { JobStore, StoreBatch, StoredJobText } from "./manager/store/types.js";
export { carveSlots } from "./manager/scheduler/slots.js";
export type { ResourcePool, SlotType, Slot } from "./manager/scheduler/slots.js";
export { HostAds, adTargetSelects, UNMERGED_ATTRIBUTES } from "./manager/ads/hostads.js";
export type { AdTarget } from "./manager/port/port.js";
export { JOB_STATUS, HOLD_REASON_CODE, JOB_AD_ATTRIBUTES, parseClassadAssignment } from "./manager/ads/jobad.js";
export { jobspecFromAd } from "./manager/ads/jobspec-from-ad.js";
export type { JobspecFromAdOptions } from "./manager/ads/jobspec-from-ad.js";

// --- plugin host ---
export { jobtapPlugins, BUILTINS } from "../plugins-builtin/index.js";
export {
  checkPluginConfig,
  JobtapHost,
  parseToml,
  readPluginConfig,
  reapplyPlugins,
  DEFAULT_DEADLINE_MS,
  DEFAULT_HEAP_MB,
  DEFAULT_RESTART,
  DEFAULT_PROBATION_MS,
} from "./plugins/index.js";
export type {
  JobtapPluginsOptions,
  JobtapHostOptions,
  LoadOptions,
  PluginInfo,
  BuiltinEntry,
  HostLogger,
  HandlerRecord,
  HandlerOutcome,
  IsolateOptions,
  RestartPolicy,
  TraceFilter,
  TraceRecord,
  TraceCall,
  TraceTransition,
} from "./plugins/index.js";
export type { PluginConfig, PluginDirective } from "./plugins/config.js";
export type { ServiceCred } from "./plugins/record.js";

// --- ClassAd language ---
export {
  ClassAd,
  Evaluator,
  parseExpr,
  parseOldAd,
  readOldAd,
  parseNewAd,
  parseAd,
  unparse,
  unparseValue,
  printOldAd,
  printNewAd,
  adToJSON,
  adFromJSON,
  evalAttr,
  evalExpr,
  matches,
  requirementsHold,
  rank,
  analyzeRequirements,
  UNDEFINED,
  ERROR,
  ListValue,
  AbsTime,
  RelTime,
  typeOf,
  isUndefined,
  isError,
  isTrue,
  intValue,
  listValue,
  toJS,
  fromJS,
} from "./classad/index.js";
export type { RequirementsAnalysis, ClauseAnalysis, SlotAnalysis } from "./classad/index.js";
export type { Value as ClassAdValue, ValueType as ClassAdValueType, Expr as ClassAdExpr, ClassAdFunction, LazyClassAdFunction, EvaluatorOptions } from "./classad/index.js";

// --- HTCondor config and transforms ---
export {
  CondorConfig,
  parseCondorConfig,
  readCondorConfigFile,
  parseTransform,
  TransformRun,
} from "./condor/index.js";
export type {
  ConfigSource,
  ConfigReadOptions,
  Transform,
  TransformStep,
  TransformOutcome,
  TransformRunOptions,
} from "./condor/index.js";

// --- daemon and CLI ---
export { startDaemon, runDaemonUntilSignal } from "./server/daemon.js";
export type { Daemon, DaemonOptions } from "./server/daemon.js";
export { connectDaemon } from "./server/client.js";
export type { DaemonClient } from "./server/client.js";
export { checkConfigFile, loadConfigFile } from "./server/config.js";
export type { DaemonConfig, DaemonSettings, ShutdownPolicy } from "./server/config.js";
export type { JobView, PluginView, Methods, MethodName } from "./server/protocol.js";
export { runCli } from "./cli/main.js";
export type { CliIO, Subcommand } from "./cli/io.js";
