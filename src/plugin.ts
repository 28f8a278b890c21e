/**
 * `jobtap/plugin`: what plugin authors import — the plugin context and handler types, and
 * helpers for testing a plugin. Names are listed explicitly.
 */
export { PRIORITY_UNAVAILABLE } from "./manager/port/port.js";
export type { StackOut, PluginSubmitOptions } from "./manager/port/port.js";
export type { EventEntry, Jobspec, JobArgs } from "./manager/port/records.js";
export type { JobId } from "./manager/base/ids.js";
// `job.explain` (docs/plugins.md, docs/why.md): the reasons a plugin gives for a job.
export type { Reason, ReasonInput, ReasonLayer, Figure, Explanation } from "./manager/port/reasons.js";
export type { ExplainOut } from "./manager/port/topics.js";
export { localTime } from "./manager/why-state.js";
export type { State, JobResult } from "./manager/base/states.js";

// --- plugin host (src/plugins) ---
export type {
  PluginContext,
  PluginLog,
  PluginState,
  JobFlag,
  Read,
  ServiceHandler,
} from "./plugins/context.js";
export { withRead } from "./plugins/context.js";
// Coded errors: throw `new JobtapError(ErrorCode.X, message)`; branch on `code`
// (`isJobtapError(e, code)`), never on `instanceof` (errors cross worker threads as data).
export { ErrorCode, JobtapError, isJobtapError } from "./errors.js";
export type { JobtapErrorData } from "./errors.js";
export type { ConfigCheck, PluginDefinition, PluginSetup } from "./plugins/loader.js";
export type { LoadSortOrder, ServiceCred } from "./plugins/record.js";
export type {
  TopicMap,
  TopicFor,
  TopicKind,
  HandlerFor,
  HandlerResult,
  CallInfo,
  Rejection,
  JobOut,
  SchedOut,
  PriorityOut,
  UpdateKeyOut,
  ConfArgs,
  DependencyArgs,
  EventArgs,
  UpdateKeyArgs,
  CustomArgs,
} from "./plugins/topics.js";
export type { Clock } from "./manager/base/clock.js";
export { createTestHost, testJobspec } from "./testhost.js";
export type { TestHost, TestHostOptions, TestJob } from "./testhost.js";

// --- builtins: pure helpers the builtin plugins (and any plugin) need ---
export { parseJobId, formatJobId } from "./manager/base/ids.js";
export { parseFSD, formatFSD } from "./manager/base/fsd.js";
export { parseIdset, formatIdset } from "./manager/base/idset.js";

// --- hook runner (src/hooks): running hook programs, HTCondor's path checks, hook ClassAd text ---
export {
  HookRunner,
  createHookRunner,
  checkHookPath,
  HookPathCache,
  hookSucceeded,
  describeHookResult,
  DEFAULT_OUTPUT_CAP,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_PATH_CHECK_CACHE_MS,
  JOB_HOOK_SEPARATOR,
  ROUTER_HOOK_SEPARATOR,
  readHookAds,
  readHookAd,
  writeHookAds,
} from "./hooks/index.js";
export type {
  HookSpec,
  HookResult,
  HookRan,
  HookRefused,
  HookSpawnError,
  HookCancelled,
  HookLog,
  HookRunnerOptions,
  HookRunAs,
  HookUsers,
  HookPathCheck,
  HookAd,
  FailedLine,
} from "./hooks/index.js";

// --- executors (src/manager/exec): the contract of `p.registerExecutor(name, executor)` ---
export { waitStatus } from "./manager/port/executor.js";
export type { Executor, ExecJob, ExecReport, ExecUsage } from "./manager/port/executor.js";

// --- ClassAds (src/classad): the engine HTCondor-style plugins evaluate with ---
export {
  ClassAd,
  Evaluator,
  parseExpr,
  parseOldAd,
  readOldAd,
  parseNewAd,
  parseAd,
  insertLine,
  attrRef,
  unparse,
  unparseValue,
  splitAnd,
  printOldAd,
  printNewAd,
  adToJSON,
  adFromJSON,
  evalAttr,
  evalExpr,
  matches,
  requirementsHold,
  rank,
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
export type {
  Value as ClassAdValue,
  ValueType as ClassAdValueType,
  Expr as ClassAdExpr,
  ClassAdFunction,
  LazyClassAdFunction,
  EvaluatorOptions,
} from "./classad/index.js";

// --- job ads and host ads (src/manager/ads/jobad.ts, hostads.ts; docs/ads.md) ---
export { JOB_STATUS, HOLD_REASON_CODE, JOB_AD_ATTRIBUTES, parseClassadAssignment } from "./manager/ads/jobad.js";
export { jobspecFromAd } from "./manager/ads/jobspec-from-ad.js";
export { copiedJobspec, copyCounters, countOf } from "./manager/ads/requeued-copy.js";
export type { VacateInfo } from "./manager/ads/requeued-copy.js";
export type { JobspecFromAdOptions } from "./manager/ads/jobspec-from-ad.js";
export { adTargetSelects, UNMERGED_ATTRIBUTES } from "./manager/ads/hostads.js";
export type { AdTarget } from "./manager/port/port.js";
export type { AdsApi } from "./plugins/ads-api.js";

// --- HTCondor config and the transform language (src/condor) ---
export {
  CondorConfig,
  parseCondorConfig,
  readCondorConfigFile,
  parseTransform,
  transformWhere,
  TransformRun,
  expandMacros,
  formatSource,
} from "./condor/index.js";
/** HTCondor's job event log (user log): one event's text, and the one safe way to append it. */
export { formatUserLogEvent, appendUserLog } from "./condor/user-log.js";
export type { UserLogEvent, UserLogJob, UserLogUsage } from "./condor/user-log.js";
/** Splits HTCondor's V2 raw argument text (`a 'b c' 'it''s'`) into words. */
export { splitV2 as splitCondorArgs } from "./classad/functions/env.js";
export type {
  ConfigEntry,
  ConfigSource,
  ConfigReadOptions,
  MacroScope,
  Transform,
  TransformOrigin,
  TransformStep,
  TransformOutcome,
  TransformRunOptions,
} from "./condor/index.js";
